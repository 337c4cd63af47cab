'use strict';
// fencecheck adapter: redlock 5.0.0-beta.2 (node-redlock, Redlock algorithm) over ioredis 5,
// backend "redlock" (one client per master). Protocol plumbing: ../lib/node/adapter.js.
const A = require('../lib/node/adapter');
const Redis = require('ioredis');
const { default: Redlock, ExecutionError, ResourceLockedError } = require('redlock');

const RETRY_DELAY_MS = 50;
const RETRY_JITTER_MS = 20;

let clients = [];
let redlock = null;
let locks = new Map(); // lease (the lock's random value) -> current redlock Lock

// An ExecutionError's attempts are promises of each attempt's votes, settled once every
// client answered (each within the command timeout); they say whether it may have taken effect.
async function classify(err, definiteCode) {
  if (!(err instanceof ExecutionError)) return err;
  const stats = await Promise.all(err.attempts || []);
  const messages = [];
  const attempts = stats.map((s) => {
    const a = { for: s.votesFor.size, against: 0, unsure: 0, refused: 0 };
    for (const e of s.votesAgainst.values()) {
      if (e instanceof ResourceLockedError) { a.against++; continue; }
      messages.push(e.message);
      a[A.neverSent(e) ? 'refused' : 'unsure']++;
    }
    return a;
  });
  return A.quorumVerdict(attempts, Math.floor(clients.length / 2) + 1, definiteCode,
    `${err.message} (${stats.length} attempts)`, messages);
}

const heldLock = (body) => A.heldLock(locks, body, (lock) => lock.resources[0]);

A.run({
  library: 'redlock',
  version: A.packageVersion('redlock', __dirname), // its package.json says "v5.0.0-beta.2"
  capabilities: ['extend', 'pause_after_send'],

  async init(body) {
    locks = new Map();
    clients = await A.reconnectAll(Redis, clients, body);
    // retryCount 0 for release and extend (lock.release() and lock.extend() use these
    // settings): a failed quorum there is an answer, not something a retry would fix.
    redlock = new Redlock(clients, { retryCount: 0, retryDelay: RETRY_DELAY_MS,
      retryJitter: RETRY_JITTER_MS });
    redlock.on('error', (err) => {
      if (!(err instanceof ResourceLockedError)) A.log('redlock error:', err.message);
    });
    A.installPauseHook(clients, redlock.scripts.acquireScript.value);
  },

  handlers: {
    async acquire(body, gen, received) {
      A.need(body, { key: 'string', ttl_ms: 'positive_ms', timeout_ms: 'ms' });
      const retryCount = Math.max(0, Math.floor(body.timeout_ms / RETRY_DELAY_MS));
      let lock;
      try {
        lock = await A.withPauseAfterSend(body, () => redlock.acquire([body.key], body.ttl_ms,
          { retryCount, retryDelay: RETRY_DELAY_MS, retryJitter: RETRY_JITTER_MS }));
      } catch (err) {
        throw await classify(err, A.CODES.UNAVAILABLE);
      }
      locks.set(lock.value, lock);
      // Counted from this request's receipt (PROTOCOL.md), not from the reply, and not
      // clamped: redlock 5 computes expiration from a start taken before all retries and does
      // not check it before returning, so a lease that ran out during the acquire (a pause
      // after send) shows a valid_ms smaller than the time the acquire took.
      return { lease: lock.value, token: null, valid_ms: lock.expiration - received };
    },

    async release(body) {
      const lock = heldLock(body);
      locks.delete(body.lease);
      try {
        await lock.release();
      } catch (err) {
        throw await classify(err, A.CODES.PRECONDITION);
      }
      return { held_at_release: true }; // the value was deleted on a quorum of masters
    },

    async extend(body, gen, received) {
      A.need(body, { ttl_ms: 'positive_ms' });
      const lock = heldLock(body);
      let replacement;
      try {
        replacement = await lock.extend(body.ttl_ms); // a new Lock; the old one is expired
      } catch (err) {
        throw await classify(err, A.CODES.PRECONDITION);
      }
      locks.set(body.lease, replacement);
      return { valid_ms: replacement.expiration - received }; // as acquire's
    },
  },
});
