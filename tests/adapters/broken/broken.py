"""A deliberately broken fencecheck adapter, for the harness's own tests.

FENCECHECK_BROKEN_MODE chooses how it breaks (unset: ok). Every mode first writes
"broken adapter: mode=<mode>" to stderr, so a test can check that the harness quotes it.
  ok         behaves: acquire always acquire_ok {lease "b<n>", token null, valid_ms null},
             release always release_ok {held_at_release null}; no capabilities
  no-init    reads every line, never answers anything (not even init), keeps running
  garbage    answers init_ok; on the first acquire writes "hello from the adapter" to
             stdout, then the acquire_ok
  exit       answers init_ok; on the first acquire writes a line to stderr, exits with 3
  hang       answers init and release; never answers an acquire
  bad-reply  answers init_ok; answers the first acquire with an in_reply_to never sent
             (its msg_id + 1000000)
In every mode it exits with status 0 when stdin ends. An unknown mode exits with status 2.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "adapters", "lib", "python"))
import adapter  # noqa: E402
from adapter import log  # noqa: E402

MODES = ("ok", "no-init", "garbage", "exit", "hang", "bad-reply")
mode = os.environ.get("FENCECHECK_BROKEN_MODE") or "ok"
log("broken adapter: mode=%s" % mode)
if mode not in MODES:
    log("broken adapter: unknown FENCECHECK_BROKEN_MODE %r (one of %s)" % (mode, ", ".join(MODES)))
    sys.exit(2)

grants = {"n": 0, "acquires": 0}


def init(body):
    return {"library": "fencecheck-broken", "version": "1", "capabilities": []}


def acquire(body):
    adapter.field(body, "key", "str")
    grants["n"] += 1
    return {"lease": "b%d" % grants["n"], "token": None, "valid_ms": None}


def release(body):
    adapter.field(body, "key", "str")
    adapter.field(body, "lease", "str")
    return {"held_at_release": None}


class Broken(adapter.Adapter):
    def handle_line(self, line):
        body = self.parse(line)
        if body is None:
            return
        if mode == "no-init":
            log("broken adapter: not answering %s" % body.get("type"))
            return
        if body.get("type") != "acquire":
            return super().handle_line(line)
        grants["acquires"] += 1
        first = grants["acquires"] == 1
        if mode == "hang":
            log("broken adapter: not answering acquire msg_id %s" % body["msg_id"])
            return
        if mode == "exit" and first:
            log("broken adapter: exiting with status 3 on the first acquire")
            sys.exit(3)
        if mode == "garbage" and first:
            self.write_line("hello from the adapter")
        if mode == "bad-reply" and first:
            body = dict(body, msg_id=body["msg_id"] + 1000000)
            self.reply(body, dict(acquire(body), type="acquire_ok"))
            return
        super().handle_line(line)


if __name__ == "__main__":
    Broken(init, {"acquire": acquire, "release": release}).serve()
