'use strict';
// fencecheck adapter: redis-semaphore 5.8.0 (Mutex: SET NX PX + auto-refresh) over ioredis 5,
// backend "redis" (single endpoint). Protocol plumbing: ../lib/node/adapter.js.
const A = require('../lib/node/adapter');
const Redis = require('ioredis');
const { Mutex, TimeoutError } = require('redis-semaphore');

let client = null;
let mutexes = new Map(); // key -> the Mutex that acquired it (refreshing until released/lost)

// A background refresh that succeeded is a renewal (capability auto_renew), told as a
// `renewed` event. The library has no hook for it: its refresh timer (Lock._processRefresh,
// every refreshInterval) calls the instance's _refresh() (mutex/refresh.js, a pexpire of
// lockTimeout if the key is still ours) and takes true for refreshed, so _refresh is wrapped on
// this one instance, once acquired. valid_ms: lockTimeout less what passed since the refresh
// was sent (a monotonic clock), so that the event's arrival plus valid_ms is never later than
// the end that pexpire set. Only for the current grant of a live process.
function reportRenewals(mutex, key, gen, lockTimeout) {
  const refresh = mutex._refresh;
  mutex._refresh = async function refreshReported() {
    const sent = performance.now();
    const refreshed = await refresh.call(this);
    if (refreshed && this.isAcquired && gen === A.generation() && mutexes.get(key) === this) {
      A.event('renewed', { key, lease: this.identifier,
        valid_ms: Math.floor(lockTimeout - (performance.now() - sent)) - 1 });
    }
    return refreshed;
  };
}

function resetMutexes() {
  for (const m of mutexes.values()) m.stopRefresh();
  mutexes = new Map();
}

A.run({
  library: 'redis-semaphore',
  version: A.packageVersion('redis-semaphore', __dirname),
  capabilities: ['auto_renew', 'lost_event'],

  async init(body) {
    resetMutexes();
    if (client) client.disconnect();
    const endpoints = body.backend.endpoints;
    if (endpoints.length > 1) A.log(`init: ${endpoints.length} endpoints, using the first`);
    const commandTimeoutMs = A.commandTimeoutFor(body.lock && body.lock.ttl_ms);
    [client] = A.connectAll(Redis, [endpoints[0]], commandTimeoutMs);
    await A.whenReady([client], 2000);
    A.log(`init: ${endpoints[0]}, commandTimeout ${commandTimeoutMs} ms, status ${client.status}`);
  },

  handlers: {
    async acquire(body, gen) {
      A.need(body, { key: 'string', ttl_ms: 'positive_ms', timeout_ms: 'ms' });
      const { key } = body;
      // acquireTimeout 0 would make no attempt at all (mutex/acquire.js loops while
      // Date.now() < end): timeout 0 is one attempt.
      const limits = body.timeout_ms > 0 ? { acquireTimeout: body.timeout_ms }
        : { acquireTimeout: 1, acquireAttemptsLimit: 1 };
      const mutex = new Mutex(client, key, {
        lockTimeout: body.ttl_ms,
        ...limits,
        retryInterval: 10,
        // refreshInterval left at the library's default, Math.round(0.8 * lockTimeout).
        // Replaces the default onLockLost, which throws from a timer (an unhandled rejection).
        onLockLost: (err) => {
          A.log(`onLockLost ${key} ${mutex.identifier}:`, err.message);
          if (gen !== A.generation()) return; // a retired process's lock: no longer reported
          A.event('lost', { key, lease: mutex.identifier, reason: err.message });
        },
      });
      // The Mutex retries its SET NX every retryInterval: the lease runs from the attempt that
      // took, not from this request. The start of the last attempt bounds its send from below.
      const arrived = performance.now();
      let lastAttempt = arrived;
      client.set = function setTimed(...args) {
        lastAttempt = performance.now();
        return Object.getPrototypeOf(client).set.apply(this, args);
      };
      try {
        await mutex.acquire();
      } catch (err) {
        if (err instanceof TimeoutError) throw A.fail(A.CODES.UNAVAILABLE, err.message);
        if (A.neverSent(err)) throw A.fail(A.CODES.UNAVAILABLE, err.message);
        throw err; // e.g. a timed-out SET NX, which may have set the key: indefinite (13)
      } finally {
        delete client.set; // the prototype's again
      }
      if (gen !== A.generation()) {
        mutex.stopRefresh(); // acquired for a process retired meanwhile: stop renewing it
      } else {
        mutexes.set(key, mutex);
        reportRenewals(mutex, key, gen, body.ttl_ms);
      }
      // The PX of the SET NX that took, counted from this request's arrival, less the 1 ms
      // Redis rounds an expiry down to (it keeps whole ms of its clock).
      return { lease: mutex.identifier, token: null, valid_ms: body.ttl_ms + Math.floor(lastAttempt - arrived) - 1 };
    },

    async release(body) {
      A.need(body, { key: 'string', lease: 'string' });
      const mutex = mutexes.get(body.key);
      if (!mutex || mutex.identifier !== body.lease) {
        throw A.fail(A.CODES.PRECONDITION, `no lock ${body.lease} on ${body.key}`);
      }
      mutexes.delete(body.key);
      if (!mutex.isAcquired) {
        // The library found the lock lost (a refresh said so) and called onLockLost.
        mutex.stopRefresh();
        throw A.fail(A.CODES.PRECONDITION, `lock ${body.lease} on ${body.key} was lost`);
      }
      await mutex.release(); // the library does not say whether it still held the key
      return { held_at_release: null };
    },
  },
});
