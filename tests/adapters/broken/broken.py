"""A deliberately broken fencecheck adapter, for the harness's own tests.

FENCECHECK_BROKEN_MODE chooses how it breaks (unset: ok). Every mode first writes
"broken adapter: mode=<mode>" to stderr, so a test can check that the harness quotes it.
  ok         behaves: acquire always acquire_ok {lease "b<n>", token null, valid_ms null},
             release always release_ok {held_at_release null}; no capabilities; init_ok
             repeats init's options as "options_seen"
  no-init    reads every line, never answers anything (not even init), keeps running
  garbage    answers init_ok; on the first acquire writes "hello from the adapter" to
             stdout, then the acquire_ok
  exit       answers init_ok; on the first acquire writes a line to stderr, exits with 3
  hang       answers init and release; never answers an acquire
  bad-reply  answers init_ok; answers the first acquire with an in_reply_to never sent
             (its msg_id + 1000000)
The pause modes declare capability pause_after_send and behave as ok, except:
  pause          an acquire with pause_after_send_ms N sends {"type":"paused","key":K,"ms":N},
                 sleeps N ms, then answers (a library that paused)
  no-pause       ignores pause_after_send_ms (a library that failed before sending)
  pause-twice    like pause, but sends the paused event twice
  pause-stray    sends a paused event in every acquire, with or without pause_after_send_ms
  pause-late     answers an acquire with pause_after_send_ms first, then sends its paused event
  pause-no-cap   like pause-stray, without declaring the capability
The promise mode behaves as ok, except that an acquire's key picks its acquire_ok's promise:
  "ms" valid_ms 1234; "session" valid_ms null, bound "session"; "null" valid_ms null alone;
  "none" no valid_ms; "bad-ms" valid_ms "soon"; "bad-bound" valid_ms null, bound 5.
The renew modes behave as ok, and follow each acquire_ok with a renewed event for its lease:
  renew            declares auto_renew; {"type":"renewed","key":K,"lease":L,"valid_ms":700}
  renew-no-cap     the same event without declaring auto_renew
  renew-malformed  declares auto_renew; the event's valid_ms is "soon"
In every mode it exits with status 0 when stdin ends. An unknown mode exits with status 2.
"""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "adapters", "lib", "python"))
import adapter  # noqa: E402
from adapter import log  # noqa: E402

MODES = ("ok", "no-init", "garbage", "exit", "hang", "bad-reply",
         "pause", "no-pause", "pause-twice", "pause-stray", "pause-late", "pause-no-cap",
         "promise", "renew", "renew-no-cap", "renew-malformed")
mode = os.environ.get("FENCECHECK_BROKEN_MODE") or "ok"
log("broken adapter: mode=%s" % mode)
if mode not in MODES:
    log("broken adapter: unknown FENCECHECK_BROKEN_MODE %r (one of %s)" % (mode, ", ".join(MODES)))
    sys.exit(2)

grants = {"n": 0, "acquires": 0}


def init(body):
    pauses = mode in ("pause", "no-pause", "pause-twice", "pause-stray", "pause-late")
    renews = mode in ("renew", "renew-malformed")
    return {"library": "fencecheck-broken", "version": "1", "options_seen": body.get("options"),
            "capabilities": ["pause_after_send"] if pauses else ["auto_renew"] if renews else []}


# The promise mode's acquire_ok members, by the acquire's key.
PROMISES = {"ms": {"valid_ms": 1234}, "session": {"valid_ms": None, "bound": "session"},
            "null": {"valid_ms": None}, "none": {}, "bad-ms": {"valid_ms": "soon"},
            "bad-bound": {"valid_ms": None, "bound": 5}}


def acquire(body):
    key = adapter.field(body, "key", "str")
    grants["n"] += 1
    ok = {"lease": "b%d" % grants["n"], "token": None}
    ok.update(PROMISES.get(key, {}) if mode == "promise" else {"valid_ms": None})
    return ok


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
        if mode.startswith("pause") and self.paused(body):
            return
        if mode.startswith("renew"):
            answer = dict(acquire(body), type="acquire_ok")
            self.reply(body, answer)
            valid_ms = "soon" if mode == "renew-malformed" else 700
            self.event({"type": "renewed", "key": body.get("key"), "lease": answer["lease"], "valid_ms": valid_ms})
            return
        super().handle_line(line)

    def paused(self, body):
        """The pause modes' acquire; True when it was answered here."""
        ms = body.get("pause_after_send_ms")
        event = {"type": "paused", "key": body.get("key"), "ms": ms or 1000}
        if mode in ("pause-stray", "pause-no-cap") or (ms and mode in ("pause", "pause-twice")):
            for _ in range(2 if mode == "pause-twice" else 1):
                self.event(event)
            if ms:
                time.sleep(ms / 1000.0)
        elif ms and mode == "pause-late":
            self.reply(body, dict(acquire(body), type="acquire_ok"))
            self.event(event)
            return True
        return False


if __name__ == "__main__":
    Broken(init, {"acquire": acquire, "release": release}).serve()
