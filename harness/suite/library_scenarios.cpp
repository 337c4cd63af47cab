// The lock libraries' scenarios (`fencecheck suite libraries`): each adapter under the
// faults that matter for it. A row's claim is what the library's own documentation
// promises, and its expectation what the bug reports (adapters/<name>/README.md) predict;
// the suite then says how often that reproduced, and whether the library said `lost`.
#include "harness/suite/scenarios.h"

namespace fencecheck {
namespace {

using namespace scenario_table;

// Three Redlock masters; an acquire may wait two leases for a held lock (node-redlock
// retries), so that acquires are in flight long enough for pause-acquirer to find one.
const Args kRedlock = {"--backend", "redlock", "--backend-opt", "n=3", "--ttl-ms", "500",
                       "--acquire-timeout-ms", "1000", "--time-limit", "15"};
const Args kPauseAcquirer = {"--nemesis", "pause-acquirer", "--pause-ms", "1500", "--nemesis-interval", "1000"};
// The same pause placed by the library itself between sending the SETs and reading a reply.
const Args kPauseAfterSend = {"--nemesis", "pause-after-send", "--pause-ms", "1500", "--nemesis-interval", "1000"};
// The article's pause: the holder frozen for three leases, just after its acquire.
const Args kLibraryPauseHolder = {"--nemesis", "pause-holder", "--ttl-ms", "500", "--pause-ms", "1500",
                           "--nemesis-interval", "1000", "--hold-ms", "200", "--time-limit", "15"};

// A ZooKeeper holder cut off from every server for 6 s, twice its 3 s session, and every
// hold 5-6 s: the session expires while the holder still holds.
const Args kZkHolderCut = {"--backend", "zookeeper", "--backend-opt", "session_timeout_ms=3000", "--nemesis",
                           "partition-holder", "--pause-ms", "6000", "--hold-min-ms", "5000", "--hold-ms", "6000",
                           "--nemesis-interval", "2000", "--resource", "fenced", "--time-limit", "25"};
const Args kCuratorCut = join_args(kZkHolderCut, {"--client", "curator"});
// tooz's lock_timeout is whole seconds: 2 s, and a holder paused 5 s just after its grant.
const Args kToozPauseHolder = {"--client", "tooz", "--nemesis", "pause-holder", "--ttl-ms", "2000", "--pause-ms",
                               "5000", "--nemesis-interval", "1000", "--hold-ms", "200", "--resource", "unfenced",
                               "--time-limit", "20"};
// A memcached that drops a held key (eviction, restart) before its 5 s expiry. The holder's
// adapter notices within its 100 ms poll of is_still_owner(), so the overlap needs another
// client's add inside that window: non-blocking acquires, retried at once, make one land
// there (acquires blocking 500 ms back off up to 1 s, and 3 runs in 10 had no overlap,
// 2026-12-04).
const Args kToozMemcachedLoss = {"--client", "tooz", "--acquire-timeout-ms", "0", "--nemesis-interval", "2000",
                                 "--ttl-ms", "5000", "--hold-min-ms", "1000", "--hold-ms", "1500",
                                 "--time-limit", "20"};
// The server ends the holder's session right after its grant, as an operator's KILL would.
// Holds of 1-1.5 s: the other clients poll GET_LOCK / pg_try_advisory_lock with a backoff of
// up to 1 s (tooz's tenacity retry), and with 200 ms holds one run in 5 had no poll land
// inside a killed holder's hold (2026-12-04).
const Args kToozKillSession = {"--client", "tooz", "--nemesis", "kill-session", "--ttl-ms", "2000",
                               "--nemesis-interval", "1000", "--hold-min-ms", "1000", "--hold-ms", "1500",
                               "--time-limit", "15"};

// args with `option`'s value replaced (an option given twice is refused).
Args with_option(Args args, const char* option, const char* value) {
  for (std::size_t i = 0; i + 1 < args.size(); ++i) {
    if (args[i] == option) args[i + 1] = value;
  }
  return args;
}

std::vector<Scenario> make_library_scenarios() {
  return {
      {"L1", "node-redlock 4.2.0, an acquirer paused while its acquire is in flight",
       "node-redlock: \"a lock is only resolved while its validity has not run out\" (4.2.0 checks "
       "expiration > Date.now() before resolving)",
       join_args(join_args(kRedlock, kPauseAcquirer), {"--client", "node-redlock"}),
       {{"exclusion", V}}},
      {"L2", "node-redlock 5.0.0-beta.2, the same pause: not reproduced under this fault (L2-send reproduces it)",
       "5.0.0-beta.2 computes the start once before its retries and never checks the expiration "
       "(node-redlock #296, #299, PR #369), so a lock may be granted already expired; but a SIGSTOP 20 ms "
       "into the acquire lands in the retry delay, not between the SETs and their replies: valid 10/10 "
       "(2026-12-02). L2-send places the pause where the bug is and detects it",
       join_args(join_args(kRedlock, kPauseAcquirer), {"--client", "node-redlock-5"}),
       {{"exclusion", V}}},
      {"L1-send", "node-redlock 4.2.0, a pause between sending the SETs and reading the replies",
       "the validity check: after the replies, 4.2.0 finds the lease spent and does not grant it",
       join_args(join_args(kRedlock, kPauseAfterSend), {"--client", "node-redlock"}),
       {{"exclusion", V}}},
      {"L2-send", "node-redlock 5.0.0-beta.2, the same pause",
       "no validity check: 5.0.0-beta.2 grants the lease the pause spent while another client holds it",
       // 25 s: one 1500 ms pause overlaps in 2 of 5 (fencecheck budget, 2026-12-04), and a
       // CI run under load had one pause in its 15 s and missed.
       with_option(join_args(join_args(kRedlock, kPauseAfterSend), {"--client", "node-redlock-5"}), "--time-limit", "25"),
       {{"exclusion", I}}, {kGrantedExpired}},
      {"L3", "node-redlock 4.2.0, the clients' wall clocks jump",
       "node-redlock computes validity from the client's Date.now(); a jump can only shorten or lengthen "
       "what it believes, and the masters expire keys on their own clocks",
       // 2 s leases, still shorter than the 1-5 s jumps: with 500 ms ones, a loaded machine
       // (ctest -j3, or 3 busy loops) stretched a 100 ms hold past its lease in 2 runs of 3
       // with no fault at all (one read took 0.77 s; 0/10 idle, 2026-12-04).
       with_option(join_args(kRedlock, {"--client", "node-redlock", "--nemesis", "clock-bump", "--nemesis-targets",
                                        "clients", "--clock-min-ms", "1000", "--clock-max-ms", "5000",
                                        "--nemesis-interval", "1000"}),
                   "--ttl-ms", "2000"),
       {{"exclusion", V}}},
      {"L4", "redis-semaphore 5.8.0 Mutex, holder paused past lockTimeout",
       "redis-semaphore: the Mutex is refreshed in the background, and onLockLost is called when a "
       "refresh finds it gone (#175: it once re-acquired silently)",
       join_args({"--backend", "redis", "--client", "redis-semaphore", "--resource", "unfenced"}, kLibraryPauseHolder),
       // onLockLost comes at the first refresh after the resume, within milliseconds; the
       // client skips its write once told, but a write queued behind the pause can win that
       // race (1 run in 10 of `suite libraries --repeat 10`): the resource may go either way.
       {{"exclusion", I}, {"resource", Expect::kAny}}, {kOverstayed}},
      {"L4-control", "redis-semaphore 5.8.0 Mutex, no faults", "the Mutex excludes while its refreshes arrive",
       {"--backend", "redis", "--client", "redis-semaphore", "--nemesis", "none", "--time-limit", "15"},
       {{"exclusion", V}, {"resource", V}}},
      {"L5", "Curator 5.4.0 InterProcessMutex, holder cut off past its session, fenced by czxid",
       "Curator: \"at any snapshot in time no two clients think they hold the same lock\"; a lost "
       "session is reported as connection state LOST (CURATOR-206)",
       // Every hold (5-6 s) outlasts the 3 s session the cut expires: with holds of 0-6 s,
       // 4 runs in 10 had every cut holder release before its session ended (2026-12-02).
       kCuratorCut,
       {{"exclusion", I}, {"tokens", V}, {"resource", V}}, {kSessionLost}},
      {"L6", "redis-py 4.3.4 Lock, holder paused past its timeout",
       "redis-py: a Lock has a timeout after which Redis releases it; nothing tells the holder",
       join_args({"--backend", "redis", "--client", "redis-py", "--resource", "unfenced"}, kLibraryPauseHolder),
       {{"exclusion", I}}, {kOverstayed}},
      {"L6-release", "redis-py 4.3.4 Lock, the server paused under releases",
       "a release that fails on the network drops the token first (redis-py PR #4258): the key stays "
       "until its timeout, which costs waiting, never exclusion",
       {"--backend", "redis", "--client", "redis-py", "--nemesis", "pause-server", "--pause-ms", "1500",
        "--nemesis-interval", "1000", "--op-timeout-ms", "1000", "--time-limit", "15"},
       {{"exclusion", V}}},
      {"L7", "tooz 3.1.0, redis driver, holder paused past lock_timeout",
       "tooz: a lock kept alive by the coordinator's heartbeat (start_heart=True); the redis driver's "
       "heartbeat that finds the key gone logs \"Unable to heartbeat lock\" and keeps the lock in its "
       "acquired set, so lock.acquired stays True (tooz/drivers/redis.py); is_still_owner() reads the key",
       join_args({"--backend", "redis"}, kToozPauseHolder), {{"exclusion", I}}, {kOverstayed}},
      {"L8", "tooz 3.1.0, etcd3+http driver (etcd3gw), holder paused past lock_timeout",
       "the etcd3gw driver's heartbeat ignores refresh()'s -1 for an expired lease and logs nothing; it has "
       "no is_still_owner(): the holder is never told (tooz/drivers/etcd3gw.py)",
       join_args({"--backend", "etcd"}, kToozPauseHolder), {{"exclusion", I}}, {kOverstayed}},
      {"L9", "tooz 3.1.0, memcached driver, holder paused past lock_timeout",
       "the memcached driver's heartbeat touches the key without checking whose it is: after the key "
       "expired and another member added it, the old holder's touch succeeds on the new owner's key "
       "(tooz/drivers/memcached.py); is_still_owner() reads the value",
       join_args({"--backend", "memcached"}, kToozPauseHolder), {{"exclusion", I}}, {kOverstayed}},
      {"L9-evict", "tooz 3.1.0, memcached driver, the server's memory filled (LRU eviction)",
       "Symfony's docs: memcached locks \"may disappear by mistake at any time\"; an evicted key is a lock "
       "the server dropped before its expiry, with no notice to the holder",
       join_args({"--backend", "memcached", "--backend-opt", "memory_mb=8", "--nemesis", "memory-pressure",
                  "--pause-ms", "2000"},
                 kToozMemcachedLoss),
       {{"exclusion", I}}, {kPromiseBroken}},
      {"L9-restart", "tooz 3.1.0, memcached driver, the server restarted",
       "memcached keeps nothing across a restart: \"every lock would be lost without notifying the running "
       "processes\" (Symfony's docs)",
       join_args({"--backend", "memcached", "--nemesis", "kill-server", "--restart-ms", "0"}, kToozMemcachedLoss),
       {{"exclusion", I}}, {kPromiseBroken}},
      {"L10", "tooz 3.1.0, postgresql driver, the holder's connection killed by the server",
       "the advisory lock lives by its connection; tooz never rechecks its acquired flag, so a holder whose "
       "session an operator ended (pg_terminate_backend) still holds in its own eyes",
       join_args({"--backend", "postgres"}, kToozKillSession), {{"exclusion", I}}, {kSessionLost}},
      {"L11", "tooz 3.1.0, mysql driver on MariaDB, the holder's connection killed by the server",
       "GET_LOCK lives by its connection; the mysql driver has no heartbeat and no is_still_owner(), so a "
       "KILLed holder still holds in its own eyes",
       join_args({"--backend", "mariadb"}, kToozKillSession), {{"exclusion", I}}, {kSessionLost}},
      {"L12", "kazoo 2.8.0 Lock, holder cut off past its session, fenced by czxid, SUSPENDED obeyed",
       "kazoo's docs: on SUSPENDED a lock holder should pause what it is doing, on LOST its locks are gone; "
       "an application that stops at SUSPENDED (lost_on=suspended) is told within ~1.5 s of the cut, "
       "before its 3 s session can expire",
       join_args(kZkHolderCut, {"--client", "kazoo", "--client-opt", "lost_on=suspended"}),
       {{"exclusion", V}, {"tokens", V}, {"resource", V}}},
      {"L12-lost", "kazoo 2.8.0 Lock, the same cut, only LOST obeyed",
       "LOST comes only when the client reconnects and the server says the session expired "
       "(kazoo/protocol/connection.py), after the cut heals: a holder waiting for LOST overstays its "
       "session, and the czxid fences its writes",
       join_args(kZkHolderCut, {"--client", "kazoo", "--client-opt", "lost_on=lost"}),
       {{"exclusion", I}, {"tokens", V}, {"resource", V}}, {kSessionLost}},
      {"L13", "kazoo 2.8.0 Lock, non-blocking acquires under 1 s network flaps (#732)",
       "kazoo #732: a non-blocking acquire that fails while the connection is SUSPENDED leaves its "
       "contender node behind; when the session resumes, the lock is one nobody holds and nobody can take. "
       "Safety holds; the report's liveness section lists such locks (\"locks nobody held that nobody could "
       "take\")",
       {"--backend", "zookeeper", "--backend-opt", "session_timeout_ms=3000", "--client", "kazoo",
        "--acquire-timeout-ms", "0", "--nemesis", "partition-halves", "--nemesis-interval", "1000",
        "--resource", "fenced", "--time-limit", "30"},
       {{"exclusion", V}, {"tokens", V}, {"resource", V}}},
  };
}

}  // namespace

const std::vector<Scenario>& library_scenarios() {
  static const std::vector<Scenario> scenarios = make_library_scenarios();
  return scenarios;
}

}  // namespace fencecheck
