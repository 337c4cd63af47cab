"""The fencecheck adapter protocol (adapters/PROTOCOL.md) for Python adapters.

One module shared by every Python adapter: JSON-lines framing on stdin/stdout, the init
handshake, request dispatch, error replies and unsolicited events. An adapter supplies
an `init` function and one function per operation; each gets the request body and
returns the reply body's fields, or raises OpError(code, text).

stdout belongs to the protocol alone. `Adapter()` moves the protocol stream to a private
file descriptor and points fd 1 (and sys.stdout) at stderr, so a stray print() or a
library's logging can never corrupt the protocol.
"""
import json
import os
import sys
import threading
import time
import traceback

# Maelstrom's error codes (PROTOCOL.md, "Errors: definite or not").
TIMEOUT = 0             # indefinite
NOT_SUPPORTED = 10      # definite
TEMPORARILY_UNAVAILABLE = 11
MALFORMED_REQUEST = 12
CRASH = 13              # indefinite
ABORT = 14
PRECONDITION_FAILED = 22


class OpError(Exception):
    """Raised by a handler: the request is answered with an error of this code."""

    def __init__(self, code, text):
        super().__init__(text)
        self.code = code
        self.text = text


def log(*parts):
    """One line on stderr, the adapter's log."""
    print(*parts, file=sys.stderr, flush=True)


def field(body, name, kind, optional=False):
    """body[name], checked to be of `kind` ("str", "int", "int?", ...) else malformed (12)."""
    if name not in body or body[name] is None:
        if optional:
            return None
        raise OpError(MALFORMED_REQUEST, "missing field %r" % name)
    value = body[name]
    ok = {
        "str": isinstance(value, str),
        "int": isinstance(value, int) and not isinstance(value, bool),
        "dict": isinstance(value, dict),
        "list": isinstance(value, list),
    }[kind]
    if not ok:
        raise OpError(MALFORMED_REQUEST, "field %r is not a %s: %r" % (name, kind, value))
    return value


class Adapter:
    def __init__(self, init, handlers):
        """`init(body)` returns {"library", "version", "capabilities", ...}; it is called for
        every init (a second init resets the adapter). `handlers` maps a request type to a
        function(body) returning the *_ok body's fields."""
        self.node_id = None
        self.initialised = False
        self._init = init
        self._handlers = dict(handlers)
        self._write_lock = threading.Lock()
        # The protocol gets a private copy of fd 1; fd 1 itself becomes stderr.
        proto_fd = os.dup(1)
        os.dup2(2, 1)
        sys.stdout = sys.stderr
        sys.stdin.reconfigure(encoding="utf-8", errors="replace")
        self._out = os.fdopen(proto_fd, "w", encoding="utf-8", buffering=1)

    # --- output -----------------------------------------------------------------
    def write_line(self, text):
        """One whole line on the protocol stream; never interleaves with another."""
        with self._write_lock:
            try:
                self._out.write(text + "\n")
                self._out.flush()
            except BrokenPipeError:  # the harness is gone: nobody to answer
                log("stdout closed, exiting")
                os._exit(0)

    def send(self, body, dest="h"):
        self.write_line(json.dumps({"src": self.node_id, "dest": dest, "body": body},
                                   separators=(",", ":")))

    def reply(self, request, body):
        body = dict(body)
        body["in_reply_to"] = request["msg_id"]
        self.send(body)

    def error(self, request, code, text):
        self.reply(request, {"type": "error", "code": code, "text": text})

    def event(self, body):
        """An unsolicited event (e.g. type "lost"); safe from any thread."""
        self.send(body)

    # --- input ------------------------------------------------------------------
    def serve(self):
        """Answers requests until stdin ends, then exits with status 0."""
        try:
            for line in sys.stdin:
                line = line.strip()
                if line:
                    self.handle_line(line)
        except KeyboardInterrupt:  # SIGINT to the process group: no traceback, no stdout
            log("interrupted, exiting")
            sys.exit(130)
        log("stdin closed, exiting")
        sys.exit(0)

    def parse(self, line):
        """The request body of one line, or None (logged) when it cannot be answered."""
        try:
            message = json.loads(line)
        except ValueError as e:
            log("not JSON, ignored: %s: %r" % (e, line[:200]))
            return None
        body = message.get("body") if isinstance(message, dict) else None
        if not isinstance(body, dict) or not isinstance(body.get("msg_id"), int):
            log("no body.msg_id, cannot answer: %r" % line[:200])
            return None
        if self.node_id is None and isinstance(message.get("dest"), str):
            self.node_id = message["dest"]  # our name until init gives it
        return body

    def handle_line(self, line):
        body = self.parse(line)
        if body is None:
            return
        kind = body.get("type")
        try:
            if not isinstance(kind, str):
                raise OpError(MALFORMED_REQUEST, "body.type missing or not a string")
            if kind == "init":
                result = self.handle_init(body)
            elif kind in self._handlers:
                if not self.initialised:
                    raise OpError(MALFORMED_REQUEST, "%s before init" % kind)
                result = self._handlers[kind](body)
                result = dict(result)
                result.setdefault("type", kind + "_ok")
            else:
                raise OpError(NOT_SUPPORTED, "unsupported request type %r" % kind)
        except OpError as e:
            self.error(body, e.code, e.text)
            return
        except Exception as e:  # a library exception we did not map: may have happened
            log("%s failed:\n%s" % (kind, traceback.format_exc()))
            self.error(body, CRASH, "%s: %s" % (type(e).__name__, e))
            return
        self.reply(body, result)

    def handle_init(self, body):
        node_id = field(body, "node_id", "str")
        field(body, "backend", "dict")
        field(body, "lock", "dict", optional=True)
        self.node_id = node_id
        self.initialised = False
        result = dict(self._init(body))
        self.initialised = True
        result["type"] = "init_ok"
        result["wall_clock_ms"] = int(time.time() * 1000)
        return result


def endpoint(text):
    """"host:port" -> (host, port); malformed (12) otherwise."""
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise OpError(MALFORMED_REQUEST, "endpoint is not host:port: %r" % text)
    return host.strip("[]"), int(port)
