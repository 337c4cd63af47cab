"""fencecheck adapter for kazoo's Lock recipe (Debian python3-kazoo 2.8.0) over ZooKeeper.

Protocol: adapters/PROTOCOL.md, plumbing in adapters/lib/python/adapter.py. See README.md.
One fresh kazoo Lock per acquire on /fencecheck/locks/<key> (a reused Lock would block on its
own node). Lease = the lock node's path; token = that node's czxid; valid_ms null, bound
"session". A connection-state listener, as kazoo's lock.py docstring tells users, sends
`lost` for every held lock on SUSPENDED or LOST (option lost_on=suspended, the default) or
on LOST only (lost_on=lost). Every kazoo call runs in a helper thread joined with a deadline:
kazoo's synchronous calls have no timeout of their own (requests queue while SUSPENDED).
"""
import datetime
import logging
import os
import sys
import threading

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib", "python"))
import adapter  # noqa: E402
from adapter import (CRASH, MALFORMED_REQUEST, NOT_SUPPORTED, PRECONDITION_FAILED,  # noqa: E402
                     TEMPORARILY_UNAVAILABLE, OpError, field)

import kazoo.version  # noqa: E402
from kazoo.client import KazooClient  # noqa: E402
from kazoo.exceptions import LockTimeout, NoNodeError  # noqa: E402
from kazoo.protocol.states import KazooState  # noqa: E402

ROOT = "/fencecheck/locks/"


def env_ms(name, default):
    return int(os.environ.get(name, str(default)))


# How long an acquire may take beyond its timeout_ms before the adapter answers 13 (the
# worker's op deadline is at least 2.5 s); the deadline of a release; of start; of stop+close.
SLACK_MS = env_ms("FENCECHECK_KAZOO_SLACK_MS", 1500)
RELEASE_MS = env_ms("FENCECHECK_KAZOO_RELEASE_MS", 1500)
START_MS = env_ms("FENCECHECK_KAZOO_START_MS", 5000)
STOP_MS = env_ms("FENCECHECK_KAZOO_STOP_MS", 2000)

logging.basicConfig(stream=sys.stderr, level=logging.WARNING,
                    format="%(asctime)s %(levelname)s %(name)s: %(message)s")


def tlog(text):
    """One timestamped line on stderr (the adapter's log)."""
    stamp = datetime.datetime.now().isoformat(timespec="milliseconds")
    print("%s %s" % (stamp, text), file=sys.stderr, flush=True)


class Grant:
    def __init__(self, key, lease, lock, watch):
        self.key, self.lease, self.lock, self.watch = key, lease, lock, watch
        self.announced = False  # its acquire_ok is on the wire: a lost may name it
        self.lost_due = None    # a trigger came before the acquire_ok: send lost right after it
        self.lost_sent = False


mu = threading.Lock()  # guards S: the listener runs on kazoo's connection thread
S = {"client": None, "lost_on": "suspended", "held": {}, "state": None}
A = None  # the protocol loop (KazooAdapter)


def in_thread(fn, seconds, name, on_late=None):
    """Runs fn in a daemon thread and waits at most `seconds` for it: (done, result, exc).
    When it does not finish in time, on_late(result, exc) is called when it does."""
    box = {"mu": threading.Lock(), "done": threading.Event(), "abandoned": False, "result": None, "exc": None}

    def run():
        try:
            box["result"] = fn()
        except BaseException as e:  # handed to the caller
            box["exc"] = e
        with box["mu"]:
            box["done"].set()
            late = box["abandoned"]
        if late and on_late is not None:
            on_late(box["result"], box["exc"])

    threading.Thread(target=run, name=name, daemon=True).start()
    box["done"].wait(seconds)
    with box["mu"]:
        if not box["done"].is_set():
            box["abandoned"] = True
            return False, None, None
    return True, box["result"], box["exc"]


def send_lost(g, reason):
    tlog("lost: key %s lease %s: %s" % (g.key, g.lease, reason))
    A.event({"type": "lost", "key": g.key, "lease": g.lease, "reason": reason})


def make_listener(client):
    def listener(state):  # kazoo's connection thread: must not block
        sends = []
        with mu:
            if S["client"] is not client:
                return
            S["state"] = state
            held = sorted(S["held"])
            trigger = state == KazooState.LOST or (state == KazooState.SUSPENDED and S["lost_on"] == "suspended")
            reason = "kazoo connection state %s (lost_on=%s)" % (state, S["lost_on"])
            if trigger:
                for g in S["held"].values():
                    if g.lost_sent or g.lost_due:
                        continue
                    if g.announced:
                        g.lost_sent = True
                        sends.append(g)
                    else:
                        g.lost_due = reason
        tlog("connection state %s, session 0x%x (held: %s)" % (state, client._session_id or 0, held))
        for g in sends:
            send_lost(g, reason)
    return listener


class KazooAdapter(adapter.Adapter):
    def reply(self, request, body):
        super().reply(request, body)
        if body.get("type") != "acquire_ok":
            return
        due = None
        with mu:
            g = S["held"].get(body["lease"])
            if g is not None and not g.announced:
                g.announced = True
                if g.lost_due and not g.lost_sent:
                    g.lost_sent = True
                    due = g
        if due is not None:
            send_lost(due, due.lost_due)


def close_client(client):
    def stop():
        client.stop()
        client.close()
    done, _, exc = in_thread(stop, STOP_MS / 1000.0, "kazoo-stop")
    if not done:
        tlog("init: stopping the old client took over %d ms, left behind" % STOP_MS)
    elif exc is not None:
        tlog("init: stopping the old client: %s: %s" % (type(exc).__name__, exc))


def init(body):
    backend = body["backend"]
    if backend.get("kind") != "zookeeper":
        raise OpError(NOT_SUPPORTED, "kazoo adapter supports backend zookeeper, not %r" % backend.get("kind"))
    endpoints = field(backend, "endpoints", "list")
    if not endpoints or not all(isinstance(e, str) for e in endpoints):
        raise OpError(MALFORMED_REQUEST, "backend.endpoints must be host:port strings: %r" % endpoints)
    for e in endpoints:
        adapter.endpoint(e)
    config = backend.get("config") if isinstance(backend.get("config"), dict) else {}
    options = body.get("options") or {}
    if not isinstance(options, dict):
        raise OpError(MALFORMED_REQUEST, "options is not an object: %r" % options)
    lost_on = options.get("lost_on", os.environ.get("FENCECHECK_KAZOO_LOST_ON", "suspended"))
    if lost_on not in ("suspended", "lost"):
        raise OpError(MALFORMED_REQUEST, "option lost_on must be suspended or lost, not %r" % lost_on)
    session_ms = config.get("session_timeout_ms")
    if not isinstance(session_ms, int) or isinstance(session_ms, bool) or session_ms <= 0:
        session_ms = 10000  # kazoo's default timeout
    tlog("init %s: backend config %s, options %s, lock %s" % (body["node_id"], config, options, body.get("lock")))

    with mu:  # forget the old client and its grants before it goes (no lost for them)
        old, S["client"], S["held"], S["state"] = S["client"], None, {}, None
    if old is not None:
        old.state_listeners.clear()
        close_client(old)

    client = KazooClient(hosts=",".join(endpoints), timeout=session_ms / 1000.0)
    client.add_listener(make_listener(client))
    with mu:
        S["client"], S["lost_on"] = client, lost_on
    # kazoo's start(timeout) is start_async() + wait, but on a timeout it stops the client for
    # good; an init error breaks the run, so wait the same way and let kazoo keep connecting.
    client.start_async().wait(START_MS / 1000.0)
    tlog("init: hosts %s, session timeout %d ms, lost_on=%s, %s" % (
        ",".join(endpoints), session_ms, lost_on,
        "connected" if client.connected else "NOT connected after %d ms, kazoo keeps trying" % START_MS))
    return {"library": "kazoo", "version": kazoo.version.__version__, "capabilities": ["token", "lost_event"]}


class Watch:
    """What kazoo's Lock did inside one acquire, seen by wrapping its internals (no change of
    behaviour): the last _inner_acquire's result or exception, and what cleanup did."""

    def __init__(self, lock):
        self.inner = None    # True / False (a predecessor was seen) / an exception
        self.cleanup = None  # None (not run), "deleted", "no node", "failed: ..."
        inner, cleanup, delete, find = lock._inner_acquire, lock._best_effort_cleanup, lock._delete_node, lock._find_node
        predecessor = lock._get_predecessor
        self.lock = lock
        self.predecessor = None  # the last predecessor kazoo saw (which node blocks us)
        self.in_cleanup = False
        self.released = None  # what release()'s delete found, for the log

        def w_inner(*a, **kw):
            try:
                self.inner = inner(*a, **kw)
            except BaseException as e:
                self.inner = e
                raise
            return self.inner

        def w_cleanup():
            self.in_cleanup, self.cleanup = True, "no node"
            try:
                return cleanup()
            finally:
                self.in_cleanup = False

        def w_delete(node):
            try:
                delete(node)
            except NoNodeError:
                if self.in_cleanup:
                    self.cleanup = "no node"
                else:
                    self.released = "no node (kazoo ignores NoNodeError and reports True)"
                raise
            except BaseException as e:
                if self.in_cleanup:
                    self.cleanup = "failed: delete: %s %s" % (type(e).__name__, e)
                else:
                    self.released = "delete failed: %s %s" % (type(e).__name__, e)
                raise
            if self.in_cleanup:
                self.cleanup = "deleted"
            else:
                self.released = "deleted"

        def w_find():
            try:
                return find()
            except BaseException as e:
                if self.in_cleanup:
                    self.cleanup = "failed: get_children: %s %s" % (type(e).__name__, e)
                raise

        def w_predecessor(node):
            self.predecessor = predecessor(node)
            return self.predecessor

        lock._inner_acquire, lock._best_effort_cleanup, lock._delete_node, lock._find_node = w_inner, w_cleanup, w_delete, w_find
        lock._get_predecessor = w_predecessor


def abandon_late(lock, watch, what):
    """For an acquire the adapter already answered 13: a grant that comes anyway is released."""
    def late(result, exc):
        got = result is not None and result[0]
        tlog("%s finished after its deadline: %s" % (what, "granted, releasing it" if got else
             "not granted (%r, last attempt %r, cleanup: %s)" % (exc, watch.inner, watch.cleanup)))
        if got:
            try:
                tlog("%s: late grant released: %s" % (what, lock.release()))
            except Exception as e:
                tlog("%s: releasing the late grant failed: %s: %s" % (what, type(e).__name__, e))
    return late


def acquire(body):
    key = field(body, "key", "str")
    field(body, "ttl_ms", "int")
    timeout_ms = field(body, "timeout_ms", "int")
    if not key or "/" in key or key in (".", "..") or timeout_ms < 0:
        raise OpError(MALFORMED_REQUEST, "bad key or timeout_ms: %r, %r" % (key, timeout_ms))
    client = S["client"]
    lock = client.Lock(ROOT + key, identifier=A.node_id)
    watch = Watch(lock)

    def run():
        if timeout_ms == 0:
            got = lock.acquire(blocking=False)
        else:
            got = lock.acquire(blocking=True, timeout=timeout_ms / 1000.0)
        if not got:
            return False, None, None
        path = lock.path + "/" + lock.node
        try:
            return True, path, client.exists(path)
        except Exception as e:
            return True, path, e

    what = "acquire %s" % key
    done, result, exc = in_thread(run, (timeout_ms + SLACK_MS) / 1000.0, "kazoo-acquire",
                                  on_late=abandon_late(lock, watch, what))
    if not done:
        lock.cancel()  # kazoo's own cancel: a waiting acquire gives up, cleans up and raises
        raise OpError(CRASH, "%s: no answer from kazoo within %d ms (connection state %s); it may "
                      "still take the lock" % (what, timeout_ms + SLACK_MS, client.state))
    if exc is not None:
        return not_granted(what, watch, exc, timeout_ms)
    got, path, stat = result
    if not got:
        return not_granted(what, watch, None, timeout_ms)
    if stat is None or isinstance(stat, Exception):
        tlog("%s: granted %s but its czxid could not be read: %r; releasing" % (what, path, stat))
        in_thread(lambda: lock.release(), RELEASE_MS / 1000.0, "kazoo-release")
        raise OpError(CRASH, "%s: granted %s but could not read its czxid (%r)" % (what, path, stat))
    session = client._session_id or 0
    if stat.ephemeralOwner != session:
        tlog("%s: %s is owned by session 0x%x, ours is 0x%x" % (what, path, stat.ephemeralOwner, session))
    with mu:
        g = Grant(key, path, lock, watch)
        if S["state"] == KazooState.LOST or (S["state"] == KazooState.SUSPENDED and S["lost_on"] == "suspended"):
            g.lost_due = "kazoo connection state %s at the grant (lost_on=%s)" % (S["state"], S["lost_on"])
        S["held"][path] = g
    return {"lease": path, "token": stat.czxid, "valid_ms": None, "bound": "session"}


def not_granted(what, watch, exc, timeout_ms):
    """Why kazoo's acquire did not grant: definite (11) when it was not granted, else 13."""
    left = "" if watch.cleanup in (None, "deleted", "no node") else \
        "; kazoo's cleanup failed (%s), its contender node %s may remain" % (watch.cleanup, watch.lock.node)
    if left:
        tlog("%s: not acquired (%r, last attempt %r)%s" % (what, exc, watch.inner, left))
    if isinstance(exc, LockTimeout):
        raise OpError(TEMPORARILY_UNAVAILABLE, "%s: LockTimeout: %s, predecessor %s%s" % (what, exc, watch.predecessor, left))
    if exc is None and watch.inner is False:  # non-blocking: a predecessor holds it
        raise OpError(TEMPORARILY_UNAVAILABLE, "%s: held by another contender, predecessor %s (non-blocking)%s"
                      % (what, watch.predecessor, left))
    why = "%s: %s" % (type(exc).__name__, exc) if exc is not None else \
        "kazoo gave up retrying (last attempt: %r)" % (watch.inner,)
    if watch.cleanup in ("deleted", "no node"):  # our node is gone: never granted
        raise OpError(TEMPORARILY_UNAVAILABLE, "%s: not acquired: %s; kazoo removed its node" % (what, why))
    raise OpError(CRASH, "%s: not acquired: %s; its lock node may exist (cleanup: %s)" % (what, why, watch.cleanup))


def release(body):
    key = field(body, "key", "str")
    lease = field(body, "lease", "str")
    with mu:
        g = S["held"].get(lease)
        if g is None or g.key != key:
            raise OpError(PRECONDITION_FAILED, "lease %r of %r is not this adapter's grant" % (lease, key))
        del S["held"][lease]  # whatever release does, this lease is not released again
    def late(result, exc):
        tlog("release %s finished after its deadline: returned %r, raised %r; its delete: %s"
             % (lease, result, exc, g.watch.released))

    done, result, exc = in_thread(lambda: g.lock.release(), RELEASE_MS / 1000.0, "kazoo-release", on_late=late)
    if not done:
        raise OpError(CRASH, "release %s: no answer from kazoo within %d ms (connection state %s); "
                      "kazoo may still delete the node" % (lease, RELEASE_MS, S["client"].state))
    if exc is not None:
        tlog("release %s raised %r; its delete: %s" % (lease, exc, g.watch.released))
        raise OpError(CRASH, "release %s: %s: %s" % (lease, type(exc).__name__, exc))
    if g.watch.released != "deleted":
        tlog("release %s: kazoo returned %r; its delete: %s" % (lease, result, g.watch.released))
    return {"held_at_release": bool(result)}


if __name__ == "__main__":
    A = KazooAdapter(init, {"acquire": acquire, "release": release})
    A.serve()
