"""fencecheck adapter for OpenStack tooz 3.1.0 locks (Debian python3-tooz), one driver per backend.

Protocol: adapters/PROTOCOL.md, through adapters/lib/python/adapter.py. README.md says what each
driver promises and how it can lose a lock without telling.

One coordinator per init (a fresh member id: node id + random suffix), started the way an
application starts it: coordinator.start(start_heart=True), so tooz's heart renews locks by
itself. tooz sets lock_timeout per coordinator, in whole seconds (each driver int()s it); an
acquire asking another ttl than the init's gets a coordinator of its own for that ttl (a run
asks one ttl throughout, so it has one coordinator).

Lost notice: for drivers whose lock implements is_still_owner() (redis, zookeeper, memcached)
a thread per held grant polls lock.acquired and lock.is_still_owner() every 100 ms and sends
one `lost` the first time tooz says the lock is no longer held. Other drivers (etcd3+http,
postgresql, mysql) have no such call: no `lost_event` capability, no notice.
"""
import logging
import os
import sys
import threading
import time
import uuid

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib", "python"))
import adapter  # noqa: E402
from adapter import (ABORT, CRASH, MALFORMED_REQUEST, NOT_SUPPORTED, PRECONDITION_FAILED,  # noqa: E402
                     TEMPORARILY_UNAVAILABLE, OpError, field, log)

# tooz's own logging (heartbeat failures, "Unable to heartbeat lock", ...) to the adapter log.
logging.basicConfig(stream=sys.stderr, level=logging.WARNING,
                    format="%(asctime)s %(name)s %(levelname)s: %(message)s")

import pbr.version  # noqa: E402
import tenacity  # noqa: E402
import tooz  # noqa: E402
from tooz import coordination, locking  # noqa: E402

VERSION = pbr.version.VersionInfo("tooz").version_string()
POLL_S = 0.1
STOP_WAIT_S = 3.0  # how long a re-init waits for the old coordinators to stop (in the background)

# backend kind -> tooz driver scheme. `timed`: the lock lives lock_timeout seconds unless
# the heart renews it (the promise is a validity); otherwise `bound` says what it lives by.
DRIVERS = {
    "redis": {"scheme": "redis", "timed": True},
    "etcd": {"scheme": "etcd3+http", "timed": True},
    "memcached": {"scheme": "memcached", "timed": True},
    "zookeeper": {"scheme": "zookeeper", "timed": False, "bound": "session"},
    "postgres": {"scheme": "postgresql", "timed": False, "bound": "connection"},
    "mariadb": {"scheme": "mysql", "timed": False, "bound": "connection"},
}

state = {"adapter": None, "init": None, "coords": {}, "grants": {}, "lost_capable": False}


# --- coordinators ---------------------------------------------------------------------------

def install_etcd3gw_client_shim():
    """Debian's etcd3gw 2.0.0 `client()` (etcd3gw/client.py:410) takes no `api_path`, which
    tooz 3.1.0 passes (tooz/drivers/etcd3gw.py:218): every etcd3+http coordinator dies in its
    constructor with TypeError. The class Etcd3Client does take api_path; this factory forwards
    it, as later etcd3gw releases do. Only the constructor's signature changes."""
    import etcd3gw

    def client(host="localhost", port=2379, ca_cert=None, cert_key=None, cert_cert=None, timeout=None,
               protocol="http", api_path="/v3alpha/"):
        return etcd3gw.Etcd3Client(host=host, port=port, ca_cert=ca_cert, cert_key=cert_key,
                                         cert_cert=cert_cert, timeout=timeout, protocol=protocol, api_path=api_path)

    etcd3gw.client = client


def seconds_of(ttl_ms):
    """tooz's lock_timeout: whole seconds (every driver int()s it); we floor, never promise more."""
    seconds = ttl_ms // 1000
    if seconds < 1:
        raise OpError(NOT_SUPPORTED, "tooz takes lock_timeout in whole seconds: a ttl of %d ms would be 0 s, "
                      "which tooz's redis driver takes as a lock that never expires; use --ttl-ms >= 1000" % ttl_ms)
    return seconds


def url_for(kind, endpoints, config, options, node_id, lock_seconds):
    """The coordinator URL (no secrets: the servers run without passwords) and a log line."""
    first = adapter.endpoint(endpoints[0])
    hostport = "%s:%d" % first
    query = []
    if lock_seconds is not None:
        query.append("lock_timeout=%d" % lock_seconds)
    if kind == "redis":
        # socket_timeout: whole seconds (CLIENT_INT_ARGS); tooz's default is 30 s.
        query.append("socket_timeout=%d" % 1)
    elif kind == "zookeeper":
        # tooz passes `timeout` to kazoo as the session timeout (and the start timeout); int().
        session_ms = int(config.get("session_timeout_ms", 10000))
        query.append("timeout=%d" % max(1, round(session_ms / 1000.0)))
        query.extend("hosts=%s:%d" % adapter.endpoint(e) for e in endpoints[1:])
    elif kind == "etcd":
        api = options.get("etcd_api", "v3")
        if api == "v3":
            query.append("api_version=v3")
        elif api != "library-default":
            raise OpError(MALFORMED_REQUEST, "option etcd_api must be v3 or library-default, not %r" % api)
        # tooz's `timeout` goes to requests.Session.timeout, which requests ignores.
    elif kind == "memcached":
        query.append("timeout=%d" % 1)
    userinfo, path = "", ""
    if kind == "postgres":
        userinfo, path = "postgres@", "/postgres"  # fencecheck's own client: user postgres, db postgres
    elif kind == "mariadb":
        userinfo, path = "root@", "/"  # fencecheck's own client: root over TCP, no password
    scheme = DRIVERS[kind]["scheme"]
    return "%s://%s%s%s%s" % (scheme, userinfo, hostport, path, ("?" + "&".join(query)) if query else "")


def libpq_environment(node_id, config):
    """tooz's postgresql driver passes only host/port/user/dbname to psycopg2: the rest comes
    from libpq's environment, as for any libpq application."""
    os.environ["PGAPPNAME"] = node_id  # fencecheck's kill-session ends the sessions named so
    connect_ms = int(config.get("connect_timeout_ms", 2000))
    os.environ["PGCONNECT_TIMEOUT"] = str(max(2, -(-connect_ms // 1000)))  # libpq: whole s, at least 2
    settings = []
    idle_ms = int(config.get("idle_session_timeout_ms", 0) or 0)
    if idle_ms > 0:
        # psycopg2 opens a transaction with the lock's SELECT (no autocommit), so tooz's lock
        # connection idles "in transaction": the backend's idle timeout means both settings.
        settings.append("-c idle_session_timeout=%d -c idle_in_transaction_session_timeout=%d" % (idle_ms, idle_ms))
    if settings:
        os.environ["PGOPTIONS"] = " ".join(settings)
    else:
        os.environ.pop("PGOPTIONS", None)


def start_coordinator(lock_seconds):
    init = state["init"]
    kind = init["kind"]
    url = url_for(kind, init["endpoints"], init["config"], init["options"], init["node_id"], lock_seconds)
    member = ("%s-%s" % (init["node_id"], uuid.uuid4().hex[:8])).encode("ascii")
    log("tooz %s: coordinator %s, member %s" % (VERSION, url, member.decode()))
    try:
        coord = coordination.get_coordinator(url, member)
    except Exception as e:  # e.g. TypeError: Debian's etcd3gw 2.0.0 without the shim
        log("get_coordinator(%s) failed: %s: %s" % (url, type(e).__name__, e))
        raise OpError(ABORT, "tooz %s cannot build its %s driver for %s: %s: %s" %
                      (VERSION, DRIVERS[kind]["scheme"], url, type(e).__name__, e))
    try:
        coord.start(start_heart=True)
    except Exception as e:
        if kind == "etcd" and "api_version=v3" not in url and "Not Found" in str(e):
            raise OpError(NOT_SUPPORTED, "etcd answered 404 Not Found to tooz %s's default API path /v3alpha/ "
                          "(gone since etcd 3.4, tooz LP#2043810): run with --client-opt etcd_api=v3" % VERSION)
        raise OpError(ABORT, "tooz coordinator %s did not start: %s: %s" % (url, type(e).__name__, e))
    log("coordinator started, heart %s, lock_timeout %s" %
        ("beating" if coord.heart.is_alive() else "not beating", getattr(coord, "lock_timeout", "n/a")))
    return coord


def coordinator_for(ttl_ms):
    """The coordinator whose lock_timeout is this ttl (timed drivers), else the init's."""
    if not DRIVERS[state["init"]["kind"]]["timed"]:
        return state["coords"][None]
    seconds = seconds_of(ttl_ms)
    if seconds not in state["coords"]:
        log("an acquire asks ttl %d ms, the init %d ms: a coordinator with lock_timeout %d s" %
            (ttl_ms, state["init"]["ttl_ms"], seconds))
        state["coords"][seconds] = start_coordinator(seconds)
    return state["coords"][seconds]


def forget_everything():
    """A re-init: the old grants' pollers end, the old coordinators stop in the background."""
    for grant in state["grants"].values():
        grant.end()
    old = list(state["coords"].values())
    state["coords"], state["grants"] = {}, {}

    def stop_all():
        for coord in old:
            try:
                coord.stop()
            except Exception as e:
                log("stopping an old coordinator: %s: %s" % (type(e).__name__, e))
    if old:
        t = threading.Thread(target=stop_all, daemon=True)
        t.start()
        t.join(STOP_WAIT_S)


def init(body):
    backend = body["backend"]
    kind = backend.get("kind")
    if kind not in DRIVERS:
        raise OpError(NOT_SUPPORTED, "the tooz adapter supports backends %s, not %r" % (", ".join(DRIVERS), kind))
    endpoints = field(backend, "endpoints", "list")
    if not endpoints or not all(isinstance(e, str) for e in endpoints):
        raise OpError(MALFORMED_REQUEST, "backend %s needs endpoints host:port: %r" % (kind, endpoints))
    config = backend.get("config") or {}
    options = body.get("options") or {}
    if not isinstance(options, dict) or not all(isinstance(v, str) for v in options.values()):
        raise OpError(MALFORMED_REQUEST, "options must be an object of strings: %r" % (options,))
    ttl_ms = (body.get("lock") or {}).get("ttl_ms", 30000)
    forget_everything()
    log("init %s: backend %s endpoints %s config %s options %s ttl_ms %s" %
        (body["node_id"], kind, endpoints, config, options, ttl_ms))
    state["init"] = {"kind": kind, "endpoints": endpoints, "config": config, "options": options,
                     "node_id": body["node_id"], "ttl_ms": ttl_ms}
    if kind == "etcd" and options.get("etcd3gw_shim", "on") == "on":
        install_etcd3gw_client_shim()
        log("etcd3gw %s: client() forwards api_path to Etcd3Client (tooz 3.1.0 passes it, Debian's etcd3gw "
            "2.0.0 client() does not take it; init option etcd3gw_shim=off shows the TypeError)" % etcd3gw_version())
    if kind == "postgres":
        libpq_environment(body["node_id"], config)
    lock_seconds = seconds_of(ttl_ms) if DRIVERS[kind]["timed"] else None
    coord = start_coordinator(lock_seconds)
    state["coords"][lock_seconds] = coord
    # lost_event only where tooz's lock can say it no longer holds: is_still_owner implemented.
    lock_class = type(coord.get_lock(b"fencecheck-probe"))
    state["lost_capable"] = lock_class.is_still_owner is not locking.Lock.is_still_owner
    log("%s.is_still_owner %s: %s" % (lock_class.__name__,
                                      "implemented" if state["lost_capable"] else "not implemented",
                                      "lost notices polled every %d ms" % (POLL_S * 1000) if state["lost_capable"]
                                      else "no lost notice possible (capability lost_event not declared)"))
    return {"library": "tooz", "version": VERSION,
            "capabilities": ["lost_event"] if state["lost_capable"] else []}


def etcd3gw_version():
    try:
        return pbr.version.VersionInfo("etcd3gw").version_string()
    except Exception:
        return "?"


# --- grants and their lost notice -------------------------------------------------------------

class Grant:
    def __init__(self, key, lock, lease):
        self.key, self.lock, self.lease = key, lock, lease
        self.mu = threading.Lock()  # held while a lost is sent and while the grant ends
        self.ended = False
        self.stop = threading.Event()

    def end(self):
        with self.mu:
            self.ended = True
        self.stop.set()

    def watch(self):
        threading.Thread(target=self._poll, name="lost-" + self.key, daemon=True).start()

    def _poll(self):
        errors = 0
        while not self.stop.wait(POLL_S):
            try:
                if not self.lock.acquired:
                    reason = "tooz: lock.acquired is False"
                elif not self.lock.is_still_owner():
                    reason = "tooz: lock.is_still_owner() returned False"
                else:
                    continue
            except Exception as e:  # the library could not tell: not a loss, ask again
                errors += 1
                if errors == 1 or errors % 50 == 0:
                    log("lost poll of %r: is_still_owner raised %s: %s (%d so far)" %
                        (self.key, type(e).__name__, e, errors))
                continue
            with self.mu:
                if self.ended:
                    return
                self.ended = True
                state["adapter"].event({"type": "lost", "key": self.key, "lease": self.lease, "reason": reason})
            log("lost %r lease %s: %s" % (self.key, self.lease, reason))
            return


class AttemptClock:
    """Times the start of each lock attempt a driver makes inside one acquire (the last one is
    the one that took): it wraps the call that starts an attempt, on this thread only, and
    changes nothing else. redis: redis-py Lock.do_acquire (SET NX PX); etcd3+http: the client's
    lease() (a fresh lease per attempt, tooz etcd3gw.py:89); memcached: the client's add()."""

    def __init__(self, kind, coord, lock):
        self.last = time.monotonic()
        self.target, self.name = {
            "redis": (getattr(lock, "_lock", None), "do_acquire"),
            "etcd": (getattr(coord, "client", None), "lease"),
            "memcached": (getattr(coord, "client", None), "add"),
        }.get(kind, (None, None))

    def __enter__(self):
        if self.target is None or not hasattr(self.target, self.name):
            self.target = None
            return self
        original, me = getattr(self.target, self.name), threading.get_ident()

        def timed(*args, **kwargs):
            if threading.get_ident() == me:
                self.last = time.monotonic()
            return original(*args, **kwargs)
        setattr(self.target, self.name, timed)
        return self

    def __exit__(self, *exc):
        if self.target is not None:
            delattr(self.target, self.name)  # the instance attribute goes, the method shows again


def promise(kind, coord, arrived, attempt):
    """valid_ms and bound, counted from the request's receipt (PROTOCOL.md "The promise")."""
    driver = DRIVERS[kind]
    if not driver["timed"]:
        return {"valid_ms": None, "bound": driver["bound"]}
    seconds = coord.lock_timeout  # what tooz set: int(lock_timeout)
    waited_ms = int((attempt - arrived) * 1000)
    if kind == "redis":  # PX = int(timeout * 1000); Redis may expire a key 1 ms early
        valid = seconds * 1000 - 1
    elif kind == "memcached":  # expire in whole seconds of a clock that ticks once a second
        valid = (seconds - 1) * 1000
    else:  # etcd: a lease of TTL seconds, granted by etcd at or after this attempt's start
        valid = seconds * 1000
    return {"valid_ms": valid + waited_ms, "bound": None}


def not_acquired(key, timeout_ms, why):
    return OpError(TEMPORARILY_UNAVAILABLE, "%r not acquired within %d ms (%s)" % (key, timeout_ms, why))


def acquire(body):
    arrived = time.monotonic()
    key = field(body, "key", "str")
    ttl_ms = field(body, "ttl_ms", "int")
    timeout_ms = field(body, "timeout_ms", "int")
    kind = state["init"]["kind"]
    coord = coordinator_for(ttl_ms)
    lock = coord.get_lock(key.encode("utf-8"))
    # tooz: blocking False = one attempt; a number = retry until that many seconds passed.
    blocking = False if timeout_ms <= 0 else timeout_ms / 1000.0
    try:
        with AttemptClock(kind, coord, lock) as clock:
            acquired = lock.acquire(blocking=blocking)
    except tenacity.RetryError:  # tooz's _retry gave up (etcd3gw, postgresql, mysql, memcached)
        raise not_acquired(key, timeout_ms, "tooz stopped retrying")
    except Exception as e:
        if type(e).__name__ == "LockTimeout":  # kazoo: waited for the predecessor, cleaned up its node
            raise not_acquired(key, timeout_ms, "kazoo LockTimeout: %s" % e)
        log("acquire %r: %s: %s" % (key, type(e).__name__, e))
        raise OpError(CRASH, "acquire %r: %s: %s" % (key, type(e).__name__, e))
    if not acquired:
        raise not_acquired(key, timeout_ms, "lock.acquire returned False")
    lease = uuid.uuid4().hex[:16]
    grant = Grant(key, lock, lease)
    old = state["grants"].get(key)
    if old is not None:
        old.end()
    state["grants"][key] = grant
    if kind == "mariadb":
        register_mariadb_session(key)
    if state["lost_capable"]:
        grant.watch()
    reply = {"lease": lease, "token": None}
    reply.update(promise(kind, coord, arrived, clock.last))
    return reply


def register_mariadb_session(key):
    """fencecheck's kill-session ends the connections listed in fencecheck.sessions. tooz's
    mysql lock opens a connection of its own per lock; IS_USED_LOCK names it (the connection
    that holds the name), so a separate connection lists it there. Best effort: logged."""
    import pymysql
    host, port = adapter.endpoint(state["init"]["endpoints"][0])
    try:
        conn = pymysql.connect(host=host, port=port, user="root", connect_timeout=1, read_timeout=1,
                               write_timeout=1, autocommit=True)
        try:
            with conn.cursor() as cur:
                cur.execute("SELECT IS_USED_LOCK(%s)", key.encode("utf-8"))
                holder = cur.fetchone()[0]
                if holder is None:
                    log("kill-session registration of %r: nobody holds it now" % key)
                    return
                cur.execute("INSERT INTO fencecheck.sessions (client, server_id, connection_id, host) VALUES "
                            "(%s, @@server_id, %s, (SELECT HOST FROM information_schema.PROCESSLIST WHERE ID = %s)) "
                            "ON DUPLICATE KEY UPDATE host = VALUES(host)",
                            (state["init"]["node_id"], holder, holder))
        finally:
            conn.close()
    except Exception as e:
        log("kill-session registration of %r failed (kill-session will not end it): %s: %s" %
            (key, type(e).__name__, e))


def release(body):
    key = field(body, "key", "str")
    lease = field(body, "lease", "str")
    grant = state["grants"].get(key)
    if grant is None or grant.lease != lease:
        raise OpError(PRECONDITION_FAILED, "lease %r of %r is not this adapter's latest grant" % (lease, key))
    del state["grants"][key]
    grant.end()
    try:
        released = grant.lock.release()
    except Exception as e:
        log("release %r: %s: %s" % (key, type(e).__name__, e))
        raise OpError(CRASH, "release %r: %s: %s" % (key, type(e).__name__, e))
    if not released:
        log("release %r: tooz returned False (it did not hold the lock)" % key)
    return {"held_at_release": bool(released) if isinstance(released, bool) else None}


if __name__ == "__main__":
    state["adapter"] = adapter.Adapter(init, {"acquire": acquire, "release": release})
    state["adapter"].serve()
