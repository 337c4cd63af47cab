"""fencecheck adapter for redis-py's Lock (Debian python3-redis 4.3.4) over one Redis server.

Protocol: adapters/PROTOCOL.md. One Lock object per key (the one of the key's latest
grant), kept for release and extend, used the way a redis-py user would use it.
Capabilities: extend. No fencing token, no lost event: redis-py has none. valid_ms is the PX
the library sets (its SET NX PX on acquire, its PEXPIRE on extend): int(seconds * 1000), as
redis-py computes it, counted from the request's receipt, before the command is sent.

redis-py's Lock.release() forgets its token *before* the round trip (lock.py:252), so a
release that failed on the network leaves the lock object unable to release or extend the
key again: the first release answers 13 (indefinite), every later release or extend of
that lease answers 22 with "Cannot release an unlocked lock" while the key may still be
held in Redis until its TTL ends: a 22 ("LockError ... Redis was not asked") that follows
a 13 on the same lease. A fresh init forgets every lease (they answer 22 too, with
"not this adapter's latest grant").
"""
import os
import time
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib", "python"))
import adapter  # noqa: E402
from adapter import CRASH, NOT_SUPPORTED, PRECONDITION_FAILED, TEMPORARILY_UNAVAILABLE, OpError, field, log  # noqa: E402

import redis  # noqa: E402
from redis.exceptions import LockError, LockNotOwnedError, RedisError  # noqa: E402
from redis.lock import Lock  # noqa: E402

# Socket timeouts of every command, short and explicit (ms); no retries on timeout.
SOCKET_TIMEOUT_MS = int(os.environ.get("FENCECHECK_REDIS_PY_SOCKET_TIMEOUT_MS", "500"))
# Sleep between SET NX attempts while another client holds the key (redis-py's `sleep`).
RETRY_SLEEP_S = 0.01

state = {"client": None, "locks": {}}  # locks: key -> (Lock, lease)


def indefinite(op, e):
    """A Redis error during an op: the command may have run (13)."""
    log("%s: %s: %s" % (op, type(e).__name__, e))
    return OpError(CRASH, "%s: %s: %s" % (op, type(e).__name__, e))


def init(body):
    backend = body["backend"]
    if backend.get("kind") != "redis":
        raise OpError(NOT_SUPPORTED, "redis-py Lock adapter supports backend redis, not %r" % backend.get("kind"))
    endpoints = field(backend, "endpoints", "list")
    if len(endpoints) != 1 or not isinstance(endpoints[0], str):
        raise OpError(adapter.MALFORMED_REQUEST, "backend redis needs one endpoint: %r" % endpoints)
    host, port = adapter.endpoint(endpoints[0])
    if state["client"] is not None:  # a second init: forget everything
        try:
            state["client"].close()
        except Exception as e:
            log("closing the old client: %s" % e)
    timeout_s = SOCKET_TIMEOUT_MS / 1000.0
    state["client"] = redis.Redis(host=host, port=port, socket_timeout=timeout_s,
                                  socket_connect_timeout=timeout_s, retry_on_timeout=False,
                                  health_check_interval=0)
    state["locks"] = {}
    log("init %s: redis %s:%d, socket timeouts %d ms" % (body["node_id"], host, port, SOCKET_TIMEOUT_MS))
    return {"library": "redis", "version": redis.__version__, "capabilities": ["extend"]}


def px(seconds):
    """The PX redis-py sets for a timeout in seconds (lock.py: int(timeout * 1000))."""
    return int(seconds * 1000)


def acquire(body):
    key = field(body, "key", "str")
    ttl_ms = field(body, "ttl_ms", "int")
    timeout_ms = field(body, "timeout_ms", "int")
    lock = Lock(state["client"], key, timeout=ttl_ms / 1000.0, sleep=RETRY_SLEEP_S,
                blocking_timeout=timeout_ms / 1000.0, thread_local=False)
    # Lock.acquire retries its SET NX PX every `sleep`: the lease runs from the attempt that
    # took, whose start bounds its send from below.
    arrived = time.monotonic()
    attempts = {"last": arrived}
    do_acquire = lock.do_acquire

    def timed_attempt(token):
        attempts["last"] = time.monotonic()
        return do_acquire(token)

    lock.do_acquire = timed_attempt
    try:
        acquired = lock.acquire()
    except RedisError as e:  # SET NX may have been applied
        raise indefinite("acquire", e)
    if not acquired:
        raise OpError(TEMPORARILY_UNAVAILABLE, "not acquired within %d ms" % timeout_ms)
    lease = lock.local.token.decode("ascii")
    state["locks"][key] = (lock, lease)
    # A ttl_ms of 0 would be a Lock without timeout: a SET without PX, no time promised. The
    # PX counts from the attempt that took; valid_ms from this request's arrival, less the
    # 1 ms Redis rounds an expiry down to (it keeps whole ms of its clock).
    waited_ms = int((attempts["last"] - arrived) * 1000)
    return {"lease": lease, "token": None,
            "valid_ms": px(lock.timeout) + waited_ms - 1 if lock.timeout else None}


def lock_of(body):
    key = field(body, "key", "str")
    lease = field(body, "lease", "str")
    lock, held = state["locks"].get(key, (None, None))
    if lock is None or held != lease:
        raise OpError(PRECONDITION_FAILED, "lease %r of %r is not this adapter's latest grant" % (lease, key))
    return lock


def release(body):
    lock = lock_of(body)
    try:
        lock.release()
    except LockNotOwnedError as e:  # the release script found another token or none
        raise OpError(PRECONDITION_FAILED, "LockNotOwnedError: %s" % e)
    except LockError as e:  # the Lock has no token: released before, or a failed release cleared it
        raise OpError(PRECONDITION_FAILED, "LockError: %s (no token left in the Lock: released "
                      "before, or a failed release cleared it; Redis was not asked)" % e)
    except RedisError as e:
        raise indefinite("release", e)
    return {"held_at_release": True}


def extend(body):
    lock = lock_of(body)
    seconds = field(body, "ttl_ms", "int") / 1000.0
    try:
        lock.extend(seconds, replace_ttl=True)
    except LockNotOwnedError as e:  # the extend script found another token or none
        raise OpError(PRECONDITION_FAILED, "LockNotOwnedError: %s" % e)
    except LockError as e:  # no token held (see release)
        raise OpError(PRECONDITION_FAILED, "LockError: %s (no token left in the Lock; Redis was not asked)" % e)
    except RedisError as e:
        raise indefinite("extend", e)
    return {"valid_ms": px(seconds)}


if __name__ == "__main__":
    adapter.Adapter(init, {"acquire": acquire, "release": release, "extend": extend}).serve()
