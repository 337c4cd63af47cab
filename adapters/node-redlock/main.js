'use strict';
// fencecheck adapter: redlock 4.2.0 (node-redlock, Redlock algorithm) over ioredis 4, backend
// "redlock" (one client per master). Protocol plumbing: ../lib/node/adapter.js.
const A = require('../lib/node/adapter');
const Redis = require('ioredis');
const Redlock = require('redlock');

const RETRY_DELAY_MS = 50;
const RETRY_JITTER_MS = 20;

let clients = [];
let locks = new Map(); // lease (the lock's random value) -> redlock Lock

// redlock 4 reads per-call retry options as `options.retryCount || self.retryCount`
// (redlock.js:393), so a retryCount of 0 cannot be passed to lockWithOptions: each operation
// gets its own Redlock over the shared clients, with the counts in the constructor, which
// takes 0. Its script calls are tallied per attempt (attempts are sequential, each calls
// every master once), so a failure can tell whether it may have taken effect.
function redlock(retryCount, script) {
  const r = new Redlock(clients, { retryCount, retryDelay: RETRY_DELAY_MS,
    retryJitter: RETRY_JITTER_MS });
  const tally = { attempts: [], current: null, messages: [] };
  r._executeScript = function executeScript(server, name, args, callback) {
    return Redlock.prototype._executeScript.call(this, server, name, args, (err, result) => {
      if (err) { tally.messages.push(err.message); A.log(`${name}:`, err.message); }
      if (name === script) {
        const c = tally.current || (tally.current = { for: 0, against: 0, unsure: 0, refused: 0 });
        if (err) c[A.neverSent(err) ? 'refused' : 'unsure']++;
        else c[Number(result) === 1 ? 'for' : 'against']++;
        if (c.for + c.against + c.unsure + c.refused === clients.length) {
          tally.attempts.push(c);
          tally.current = null;
        }
      }
      callback(err, result);
    });
  };
  r.tally = tally;
  return r;
}

function classify(err, r, definiteCode) {
  if (!(err instanceof Redlock.LockError)) return err;
  return A.quorumVerdict(r.tally.attempts, Math.floor(clients.length / 2) + 1, definiteCode,
    err.message, r.tally.messages);
}

const heldLock = (body) => A.heldLock(locks, body, (lock) => lock.resource[0]);

A.run({
  library: 'redlock',
  version: A.packageVersion('redlock', __dirname),
  capabilities: ['extend', 'pause_after_send'],

  async init(body) {
    locks = new Map();
    clients = await A.reconnectAll(Redis, clients, body);
    A.installPauseHook(clients, new Redlock(clients).scripts.lockScript.value);
  },

  handlers: {
    async acquire(body, gen, received) {
      A.need(body, { key: 'string', ttl_ms: 'positive_ms', timeout_ms: 'ms' });
      const r = redlock(Math.max(0, Math.floor(body.timeout_ms / RETRY_DELAY_MS)), 'lockScript');
      let lock;
      try {
        lock = await A.withPauseAfterSend(body, () => r.lock(body.key, body.ttl_ms));
      } catch (err) {
        throw classify(err, r, A.CODES.UNAVAILABLE);
      }
      locks.set(lock.value, lock);
      // Counted from this request's receipt (PROTOCOL.md), not from the reply: the library
      // measures from each attempt's start, which comes later.
      return { lease: lock.value, token: null, valid_ms: lock.expiration - received };
    },

    async release(body) {
      const lock = heldLock(body);
      locks.delete(body.lease);
      const r = redlock(0, 'unlockScript');
      try {
        await r.unlock(lock);
      } catch (err) {
        throw classify(err, r, A.CODES.PRECONDITION);
      }
      return { held_at_release: true }; // the value was deleted on a quorum of masters
    },

    async extend(body, gen, received) {
      A.need(body, { ttl_ms: 'positive_ms' });
      const lock = heldLock(body);
      const r = redlock(0, 'extendScript');
      try {
        // One attempt: a failed extend attempt deletes the lock's value (redlock.js:424),
        // so a retry could not succeed anyway.
        await r.extend(lock, body.ttl_ms);
      } catch (err) {
        throw classify(err, r, A.CODES.PRECONDITION);
      }
      return { valid_ms: lock.expiration - received }; // as acquire's
    },
  },
});
