// The fencecheck adapter protocol (adapters/PROTOCOL.md) for Java adapters: JSON-lines
// framing, error replies, events. stdout belongs to the protocol alone: the constructor keeps
// a private stream on fd 1 and points System.out at stderr, so no library print reaches it.
// Every request (init included) runs on ONE executor thread, in arrival order; the calling
// thread only reads stdin, so EOF exits soon (status 0) even while an op is blocked, and an
// init (sent after the harness retired a process, e.g. on an op's deadline) interrupts an op
// still running, so that init_ok is not stuck behind it.
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.*;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.*;

public final class Protocol {
  public static final int TIMEOUT = 0, NOT_SUPPORTED = 10, TEMPORARILY_UNAVAILABLE = 11,
      MALFORMED_REQUEST = 12, CRASH = 13, ABORT = 14, PRECONDITION_FAILED = 22;

  /** Thrown by a handler: the request is answered with an error of this code. */
  public static final class OpError extends Exception {
    final int code;
    public OpError(int code, String text) { super(text); this.code = code; }
  }

  public interface Handler { ObjectNode handle(JsonNode body) throws Exception; }

  private final ObjectMapper json = new ObjectMapper();
  private final PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), false, StandardCharsets.UTF_8);
  private final ExecutorService ops = Executors.newSingleThreadExecutor(r -> {
    Thread t = new Thread(r, "fencecheck-ops");
    t.setDaemon(true);
    return t;
  });
  private volatile String nodeId = "adapter";
  private Future<?> last;  // the latest request's task (reader thread only)

  public Protocol() { System.setOut(System.err); }

  public static void log(String text) { System.err.println(text); }

  public ObjectNode body(String type) { return json.createObjectNode().put("type", type); }

  /** One whole line on stdout; lines of different threads never interleave. */
  public synchronized void send(ObjectNode body) {
    ObjectNode msg = json.createObjectNode().put("src", nodeId).put("dest", "h");
    msg.set("body", body);
    out.print(msg.toString() + "\n");
    out.flush();
  }

  public static String str(JsonNode body, String field) throws OpError {
    JsonNode v = body.get(field);
    if (v == null || !v.isTextual()) throw new OpError(MALFORMED_REQUEST, "field " + field + " is not a string");
    return v.asText();
  }

  public static long num(JsonNode body, String field) throws OpError {
    JsonNode v = body.get(field);
    if (v == null || !v.canConvertToLong()) throw new OpError(MALFORMED_REQUEST, "field " + field + " is not an integer");
    return v.asLong();
  }

  /** Reads requests until stdin ends, then exits the JVM with status 0. Never returns. */
  public void serve(Map<String, Handler> handlers) throws IOException {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    for (String line; (line = in.readLine()) != null; ) {
      if (line.isBlank()) continue;
      final JsonNode body;
      try {
        body = json.readTree(line).get("body");
      } catch (IOException e) {
        log("not a JSON line, ignored: " + line);
        continue;
      }
      if (body == null || !body.isObject() || !body.path("msg_id").canConvertToLong()) {
        log("no body or msg_id, ignored: " + line);
        continue;
      }
      if (body.path("type").asText("").equals("init") && last != null && last.cancel(true))
        log("init: interrupted the request still running");
      last = ops.submit(() -> answer(handlers, body));
    }
    ops.shutdown();  // requests already read still get their replies, for at most 2 s
    try { ops.awaitTermination(2, TimeUnit.SECONDS); } catch (InterruptedException ignored) { }
    log("stdin closed, exiting");
    Runtime.getRuntime().halt(0);  // no shutdown hooks: a library's close may block
  }

  private void answer(Map<String, Handler> handlers, JsonNode body) {
    long msgId = body.get("msg_id").asLong();
    String type = body.path("type").asText("");
    ObjectNode reply;
    try {
      if (type.equals("init")) nodeId = str(body, "node_id");
      Handler h = handlers.get(type);
      if (h == null) throw new OpError(NOT_SUPPORTED, "unknown request type: " + type);
      reply = h.handle(body);
    } catch (OpError e) {
      reply = body("error").put("code", e.code).put("text", e.getMessage());
    } catch (Throwable e) {  // anything unforeseen may have happened: indefinite
      log(type + " failed: " + e);
      reply = body("error").put("code", CRASH).put("text", String.valueOf(e));
    }
    send(reply.put("in_reply_to", msgId));
  }
}
