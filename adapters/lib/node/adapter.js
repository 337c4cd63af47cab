'use strict';
// Shared plumbing of fencecheck's Node.js adapters (adapters/PROTOCOL.md): JSON lines on
// stdin/stdout, replies, errors and events, dispatch by body.type, init, exit on EOF.
// Each adapter's main.js only supplies the library-specific handlers, through run().

const crypto = require('crypto');
const fs = require('fs');
const path = require('path');
const readline = require('readline');

// stdout belongs to the protocol: anything a library prints through console goes to stderr.
for (const name of ['log', 'info', 'debug', 'warn', 'trace']) console[name] = console.error;
process.on('unhandledRejection', (err) => log('unhandled rejection:', err));
process.on('uncaughtException', (err) => log('uncaught exception:', err));
process.stdout.on('error', (err) => { log('stdout:', err.message); process.exit(0); });

function log(...args) {
  console.error(new Date().toISOString(), ...args);
}

// Definite error codes (the op did not happen); every other code is indefinite.
const CODES = { TIMEOUT: 0, NOT_SUPPORTED: 10, UNAVAILABLE: 11, MALFORMED: 12, CRASH: 13,
  ABORT: 14, PRECONDITION: 22 };

class ProtocolError extends Error {
  constructor(code, text) { super(text); this.code = code; }
}
const fail = (code, text) => new ProtocolError(code, text);

let self = null; // node_id from the latest init
let generation = 0; // bumped by each init, so work of a retired process can tell it is stale
let initialized = false; // the latest init has answered init_ok

// One whole line per write, written synchronously on fd 1 (a socket libuv made non-blocking):
// the JS thread is single, so replies and events never interleave, nothing waits in a stream
// buffer (a `paused` event must be out before the thread stops), and the order of writes is
// the order on the wire. A full socket (the worker reads slowly) is waited out; a closed one
// means the worker is gone.
function send(body) {
  const line = Buffer.from(JSON.stringify({ src: self, dest: 'h', body }) + '\n');
  for (let done = 0; done < line.length;) {
    try {
      done += fs.writeSync(1, line, done);
    } catch (err) {
      if (err.code !== 'EAGAIN') { log('stdout:', err.message); process.exit(0); }
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1);
    }
  }
}
function event(type, fields) { send({ type, ...fields }); }

// The installed version, read from the package.json of the module that require() resolves,
// so it is what runs, not what package.json asked for.
function packageVersion(name, fromDir) {
  let dir = path.dirname(require.resolve(name, { paths: [fromDir] }));
  for (;;) {
    const file = path.join(dir, 'package.json');
    if (fs.existsSync(file)) {
      const pkg = JSON.parse(fs.readFileSync(file, 'utf8'));
      if (pkg.name === name) return String(pkg.version).replace(/^v/, '');
    }
    const up = path.dirname(dir);
    if (up === dir) throw new Error(`no package.json of ${name}`);
    dir = up;
  }
}

// Field checks: a missing or mistyped field is a malformed request (12).
const CHECKS = {
  string: (v) => typeof v === 'string' && v.length > 0,
  ms: (v) => Number.isInteger(v) && v >= 0,
  positive_ms: (v) => Number.isInteger(v) && v > 0,
};
function need(body, spec) {
  for (const [field, kind] of Object.entries(spec)) {
    if (!CHECKS[kind](body[field])) throw fail(CODES.MALFORMED, `${field} must be ${kind}`);
  }
}

// "host:port" -> {host, port}
function hostPort(endpoint) {
  const m = /^(.*):(\d+)$/.exec(String(endpoint));
  if (!m) throw fail(CODES.MALFORMED, `endpoint ${endpoint} is not host:port`);
  return { host: m[1].replace(/^\[(.*)\]$/, '$1'), port: Number(m[2]) };
}

// spec: {library, version, capabilities, init(body, gen), handlers: {acquire, release, extend}}
// init resets the library state (a later init follows a retired process) and may return extra
// init_ok fields. A handler, called as handler(body, gen, received) with `received` the
// Date.now() at which its request line was read (what valid_ms counts from, PROTOCOL.md),
// returns the fields of its `<type>_ok` reply, or throws fail(code, text); any other exception
// becomes an indefinite error (13).
function run(spec) {
  async function handle(body, received) {
    if (body.type === 'init') {
      need(body, { node_id: 'string' });
      if (!body.backend || !Array.isArray(body.backend.endpoints) || !body.backend.endpoints.length) {
        throw fail(CODES.MALFORMED, 'backend.endpoints must be a non-empty array');
      }
      self = body.node_id;
      const gen = ++generation;
      initialized = false;
      const extra = (await spec.init(body, gen)) || {};
      initialized = gen === generation;
      return { library: spec.library, version: spec.version, capabilities: spec.capabilities,
        wall_clock_ms: Date.now(), ...extra };
    }
    const handler = Object.prototype.hasOwnProperty.call(spec.handlers, body.type)
      ? spec.handlers[body.type] : null;
    if (!handler) throw fail(CODES.NOT_SUPPORTED, `unsupported request type ${body.type}`);
    if (!initialized) throw fail(CODES.ABORT, 'no init (or init not finished) yet');
    return handler(body, generation, received);
  }

  async function onLine(line) {
    if (!line.trim()) return;
    let msg;
    try { msg = JSON.parse(line); } catch (e) { log('not JSON, ignored:', line); return; }
    const body = msg && msg.body;
    if (!body || typeof body !== 'object' || !Number.isInteger(body.msg_id)) {
      log('no body.msg_id, ignored:', line);
      return;
    }
    if (self === null && msg.dest) self = msg.dest;
    const started = Date.now();
    try {
      const fields = await handle(body, started);
      send({ ...fields, type: `${body.type}_ok`, in_reply_to: body.msg_id });
    } catch (err) {
      const code = err instanceof ProtocolError ? err.code : CODES.CRASH;
      const text = (err && err.message) || String(err);
      log(`${body.type} #${body.msg_id} -> error ${code}: ${text}`);
      send({ type: 'error', in_reply_to: body.msg_id, code, text });
    }
    log(`${body.type} #${body.msg_id} done in ${Date.now() - started} ms`);
  }

  // Requests are handled as they come (the harness sends one at a time), so a fresh init is
  // never stuck behind an operation of a retired process.
  const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  rl.on('line', (line) => { onLine(line); });
  rl.on('close', () => { log('stdin closed, exiting'); process.exit(0); });
}

// The redis command timeout for a lock of ttl ms: a quarter of the ttl, within 50..1000 ms.
// Redlock 4 waits for every master's answer before it judges an attempt, so one hung master
// delays each attempt (and the unlock after a failed one) by the whole command timeout; at
// timeout >= ttl no attempt could ever end with a valid lock. A quarter leaves most of the
// ttl valid, and is still far above a loopback or LAN round trip.
function commandTimeoutFor(ttlMs) {
  return Math.max(50, Math.min(1000, Math.floor((ttlMs || 1000) / 4)));
}

// ioredis options shared by the adapters. Short, explicit timeouts so that a hung server turns
// into an error reply, not a hang; no offline queue and no resend after a reconnect, so a
// command is either refused before it is sent (definite) or was sent once (maybe indefinite).
function ioredisOptions(endpoint, commandTimeoutMs) {
  return {
    ...hostPort(endpoint),
    connectTimeout: 1000,
    commandTimeout: commandTimeoutMs,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    autoResendUnfulfilledCommands: false,
    retryStrategy: (times) => Math.min(50 * times, 500),
    reconnectOnError: () => false,
  };
}

// A redis client error that proves the command never left this process: with the offline
// queue off, ioredis refuses a command while the connection is not ready. "Connection is
// closed." is NOT one: ioredis also fails commands already sent with it when a link drops.
function neverSent(err) {
  return /^Stream isn't writeable and enableOfflineQueue/.test((err && err.message) || '');
}

// The error reply for a failed Redlock operation (used by both redlock adapters), from the
// votes of each attempt: {for, against, unsure, refused} = the script succeeded, the script
// said no (locked by another / not ours), an error that may have reached the server (timeout,
// dropped link), a command refused before sending. Indefinite (13) when some attempt could
// have reached a quorum through its unsure votes; else definiteCode when the servers' own
// answers were a quorum against; else 11 (not enough masters answered).
function quorumVerdict(attempts, quorum, definiteCode, text, messages) {
  const why = messages.length ? ` (${[...new Set(messages)].join('; ')})` : '';
  if (attempts.some((a) => a.unsure > 0 && a.for + a.unsure >= quorum)) {
    return fail(CODES.CRASH, `${text}${why}; unsure votes could have made a quorum`);
  }
  const last = attempts[attempts.length - 1];
  if (!last || last.against >= quorum) return fail(definiteCode, `${text}${why}`);
  return fail(CODES.UNAVAILABLE, `${text}${why}`);
}

// Resolves when every client is ready or has failed its first connection, or after waitMs
// (init must answer within 10 s even when a backend server is down or partitioned away;
// later commands then fail and say so).
function whenReady(clients, waitMs) {
  return Promise.race([
    Promise.all(clients.map((c) => (c.status === 'ready' ? null
      : new Promise((resolve) => { c.once('ready', resolve); c.once('error', resolve); })))),
    new Promise((resolve) => setTimeout(resolve, waitMs).unref()),
  ]);
}

// Connects one ioredis client per endpoint, logging its errors to stderr (an 'error' event
// without a listener would be printed by ioredis and must never crash the adapter).
function connectAll(Redis, endpoints, commandTimeoutMs) {
  return endpoints.map((ep) => {
    const client = new Redis(ioredisOptions(ep, commandTimeoutMs));
    let last = null; // a server that stays down is logged once, not at every reconnect
    client.on('error', (err) => {
      if (err.message !== last) log(`redis ${ep}:`, err.message);
      last = err.message;
    });
    client.on('ready', () => { if (last !== null) log(`redis ${ep}: ready again`); last = null; });
    return client;
  });
}

// The lock a release or extend names: its lease in `locks` (lease -> lock), on the key the
// request names (keyOf(lock) says which key a lock is on); else precondition-failed (22).
function heldLock(locks, body, keyOf) {
  need(body, { key: 'string', lease: 'string' });
  const lock = locks.get(body.lease);
  if (!lock || keyOf(lock) !== body.key) throw fail(CODES.PRECONDITION, `no lock ${body.lease} on ${body.key}`);
  return lock;
}

// Fault hook `pause_after_send_ms` of an acquire: a stop-the-world pause of the JS thread (like
// a GC pause) right after the library has written the acquire's lock command to the masters
// and before any reply is read, the point Redlock's validity check guards. installPauseHook
// wraps each client's sendCommand; the first EVALSHA/EVAL of the lock script (its text) that
// ioredis wrote (it joined the client's commandQueue; a command refused on a link that is not
// ready never does) while an acquire is armed schedules the stall with process.nextTick, so
// every master's command of that attempt (sent in the same tick) is written first. Later
// attempts: no pause; an acquire that writes no lock command never pauses. The stall starts
// with the `paused` event (PROTOCOL.md), written before the thread blocks.
// The pause does not count toward the adapter's own ioredis commandTimeout (ttl/4): Node runs
// expired timers before it reads sockets, so without restarting those commands' timers after
// the stall each would fail "Command timed out" with its reply unread in the buffer.
let pauseHook = null; // {clients, script} of the latest init
let armed = null; // {key, ms} of the acquire in flight, consumed by its first written lock command
let paused = null; // the lock commands of the paused attempt, until the stall
function installPauseHook(clients, script) {
  const sha = crypto.createHash('sha1').update(script).digest('hex');
  pauseHook = { clients, script };
  armed = null;
  for (const client of clients) {
    const sendCommand = client.sendCommand;
    client.sendCommand = function pausingSendCommand(command, ...rest) {
      const queued = this.commandQueue.length;
      const result = sendCommand.call(this, command, ...rest);
      const first = command && command.args && String(command.args[0]);
      if ((command.name === 'evalsha' && first === sha) || (command.name === 'eval' && first === script)) {
        if (armed && this.commandQueue.length > queued) {
          paused = [];
          process.nextTick(stall, armed);
          armed = null;
        }
        if (paused) paused.push(command);
      }
      return result;
    };
  }
}
function stall({ key, ms }) {
  const commands = paused;
  paused = null;
  log(`pause_after_send: ${commands.length} lock commands sent, pausing the JS thread for ${ms} ms`);
  event('paused', { key, ms });
  const t0 = process.hrtime.bigint();
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
  for (const c of commands) if (c._commandTimeoutTimer) c._commandTimeoutTimer.refresh();
  log(`pause_after_send: resumed after ${Number(process.hrtime.bigint() - t0) / 1e6} ms`);
}
// Runs acquire() (the library's acquire) with the request's pause_after_send_ms, if any,
// armed. The lock script is loaded on every master first (failures only logged): on a fresh
// server the library's EVALSHA answers NOSCRIPT and its EVAL, the command that takes the
// lock, would only be sent after the pause.
async function withPauseAfterSend(body, acquire) {
  const ms = body.pause_after_send_ms;
  if (ms === undefined) return acquire();
  if (!CHECKS.positive_ms(ms)) throw fail(CODES.MALFORMED, 'pause_after_send_ms must be positive_ms');
  if (!pauseHook) throw fail(CODES.NOT_SUPPORTED, 'pause_after_send is not installed');
  const { clients, script } = pauseHook;
  await Promise.all(clients.map((c) => c.script('LOAD', script)
    .catch((err) => log('pause_after_send: script load:', err.message))));
  armed = { key: body.key, ms };
  try {
    return await acquire();
  } finally {
    if (armed) log('pause_after_send: no lock command was written, so no pause');
    armed = null;
  }
}

// init of an adapter over several masters: drops the previous clients, connects one per
// endpoint with command timeouts sized by the lease, and waits (up to 2 s) until each is
// ready or has failed its first connection.
async function reconnectAll(Redis, previous, body) {
  for (const c of previous) c.disconnect();
  const commandTimeoutMs = commandTimeoutFor(body.lock && body.lock.ttl_ms);
  const clients = connectAll(Redis, body.backend.endpoints, commandTimeoutMs);
  await whenReady(clients, 2000);
  log(`init: ${clients.length} masters, commandTimeout ${commandTimeoutMs} ms, ready:`,
    clients.map((c) => c.status).join(','));
  return clients;
}

module.exports = { run, send, event, fail, need, log, CODES, packageVersion, hostPort, heldLock, reconnectAll,
  commandTimeoutFor, ioredisOptions, neverSent, quorumVerdict, whenReady, connectAll,
  installPauseHook, withPauseAfterSend,
  generation: () => generation };
