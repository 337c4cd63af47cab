// fencecheck adapter for Apache Curator's InterProcessMutex (curator-recipes) over ZooKeeper.
// Protocol: adapters/PROTOCOL.md, plumbing in adapters/lib/java/Protocol.java.
// Lease = the lock node's path; token = its czxid; valid_ms null, bound "session"; a lost
// event for every held lock when Curator reports the connection state LOST (SUSPENDED is
// only logged: "unknown", not lost).
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.InputStream;
import java.util.*;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.RetryNTimes;
import org.apache.zookeeper.data.Stat;

public final class Adapter {
  /** InterProcessMutex with its protected getLockPath() reachable. */
  static final class Mutex extends InterProcessMutex {
    Mutex(CuratorFramework client, String path) { super(client, path); }
    String lockPath() { return getLockPath(); }
  }

  static final class Held {
    final String key;
    final Mutex mutex;
    volatile boolean lostSent;
    Held(String key, Mutex mutex) { this.key = key; this.mutex = mutex; }
  }

  static final String ROOT = "/fencecheck-curator/";
  static Protocol proto;
  static volatile CuratorFramework client;
  static final Map<String, Held> held = new ConcurrentHashMap<>();  // lease -> grant

  public static void main(String[] args) throws Exception {
    System.setProperty("org.slf4j.simpleLogger.logFile", "System.err");
    System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", System.getProperty("fencecheck.log", "warn"));
    System.setProperty("org.slf4j.simpleLogger.showDateTime", "true");
    System.setProperty("zookeeper.jmx.log4j.disable", "true");
    proto = new Protocol();
    proto.serve(Map.of("init", Adapter::init, "acquire", Adapter::acquire, "release", Adapter::release));
  }

  static ObjectNode init(JsonNode body) throws Exception {
    CuratorFramework old = client;
    client = null;
    held.clear();
    if (old != null) old.close();  // its ephemeral lock nodes go with its session
    List<String> endpoints = new ArrayList<>();
    body.path("backend").path("endpoints").forEach(e -> endpoints.add(e.asText()));
    if (endpoints.isEmpty()) throw new Protocol.OpError(Protocol.MALFORMED_REQUEST, "no backend.endpoints");
    JsonNode st = body.path("backend").path("config").path("session_timeout_ms");
    int sessionMs = st.canConvertToInt() ? st.asInt() : body.path("lock").path("ttl_ms").asInt(1000);
    // One retry: an op fails soon after a connection loss. Not RetryNTimes(0, _) nor an elapsed-time
    // policy: with those Curator 5.4.0 recurses until StackOverflowError while disconnected
    // (FindAndDeleteProtectedNodeInBackground.java:53-57 re-runs an op whose elapsed time reset() keeps).
    CuratorFramework c = CuratorFrameworkFactory.builder().connectString(String.join(",", endpoints))
        .sessionTimeoutMs(sessionMs).connectionTimeoutMs(1000).retryPolicy(new RetryNTimes(1, 100)).build();
    c.getConnectionStateListenable().addListener((cl, state) -> stateChanged(cl, state));
    c.start();
    if (!c.blockUntilConnected(2, TimeUnit.SECONDS)) Protocol.log("init: not connected to ZooKeeper after 2 s, going on");
    client = c;
    ObjectNode ok = proto.body("init_ok").put("library", "curator-recipes").put("version", version());
    ok.putArray("capabilities").add("token").add("lost_event");
    return ok.put("wall_clock_ms", System.currentTimeMillis());
  }

  static void stateChanged(CuratorFramework c, ConnectionState state) {
    Protocol.log("connection state " + state + " (held: " + held.keySet() + ")");
    if (state != ConnectionState.LOST || c != client) return;
    for (Map.Entry<String, Held> e : held.entrySet()) {
      Held h = e.getValue();
      if (h.lostSent) continue;
      h.lostSent = true;
      proto.send(proto.body("lost").put("key", h.key).put("lease", e.getKey()).put("reason", "connection state LOST"));
    }
  }

  static ObjectNode acquire(JsonNode body) throws Exception {
    String key = Protocol.str(body, "key");
    long timeoutMs = Protocol.num(body, "timeout_ms");
    Mutex m;
    try {
      m = new Mutex(client, ROOT + key);  // a fresh mutex per grant: never a reentrant "grant"
    } catch (IllegalArgumentException e) {
      throw new Protocol.OpError(Protocol.MALFORMED_REQUEST, "bad key: " + e.getMessage());
    }
    boolean got;
    try {
      got = m.acquire(timeoutMs, TimeUnit.MILLISECONDS);
    } catch (Exception e) {
      throw new Protocol.OpError(Protocol.CRASH, "acquire failed: " + e);
    }
    if (!got) throw new Protocol.OpError(Protocol.TEMPORARILY_UNAVAILABLE, "not acquired within " + timeoutMs + " ms");
    String lease = m.lockPath();
    Stat stat;
    try {
      stat = client.checkExists().forPath(lease);
    } catch (Exception e) {
      stat = null;
      Protocol.log("acquire: czxid read of " + lease + " failed: " + e);
    }
    if (stat == null) {  // granted, but no token to show for it: release and say "may have happened"
      try { m.release(); } catch (Exception e) { Protocol.log("acquire: release after failed read: " + e); }
      throw new Protocol.OpError(Protocol.CRASH, "acquired " + lease + " but could not read its czxid");
    }
    long session = client.getZookeeperClient().getZooKeeper().getSessionId();
    if (stat.getEphemeralOwner() != session)  // the CURATOR-604 shape: granted on a node of an old session
      Protocol.log(String.format("acquire: %s is owned by session 0x%x, ours is 0x%x", lease, stat.getEphemeralOwner(), session));
    held.put(lease, new Held(key, m));
    ObjectNode ok = proto.body("acquire_ok").put("lease", lease).put("token", stat.getCzxid());
    // No time promise: the lock node is ephemeral and lasts as long as the ZooKeeper session.
    return ok.putNull("valid_ms").put("bound", "session");
  }

  static ObjectNode release(JsonNode body) throws Exception {
    String key = Protocol.str(body, "key"), lease = Protocol.str(body, "lease");
    Held h = held.get(lease);
    if (h == null || !h.key.equals(key)) throw new Protocol.OpError(Protocol.PRECONDITION_FAILED, "not holding " + key + " as " + lease);
    held.remove(lease);  // InterProcessMutex forgets it whatever release does (InterProcessMutex.java:158)
    try {
      h.mutex.release();  // deletes the node; a node already gone is not an error to Curator
    } catch (IllegalMonitorStateException e) {
      throw new Protocol.OpError(Protocol.PRECONDITION_FAILED, e.getMessage());
    } catch (Exception e) {
      throw new Protocol.OpError(Protocol.CRASH, "release failed: " + e);
    }
    return proto.body("release_ok").putNull("held_at_release");
  }

  static String version() {
    try (InputStream in = InterProcessMutex.class.getResourceAsStream("/META-INF/maven/org.apache.curator/curator-recipes/pom.properties")) {
      Properties p = new Properties();
      p.load(in);
      return p.getProperty("version", "unknown");
    } catch (Exception e) {
      return "unknown";
    }
  }
}
