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

// args with their --time-limit set to seconds (an option given twice is refused).
Args with_time_limit(Args args, const char* seconds) {
  for (std::size_t i = 0; i + 1 < args.size(); ++i) {
    if (args[i] == "--time-limit") args[i + 1] = seconds;
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
      {"L2", "node-redlock 5.0.0-beta.2, the same pause",
       "the same promise; 5.0.0-beta.2 computes the start once before its retries and never checks the "
       "expiration (node-redlock #296, #299, PR #369): a lock may be granted already expired",
       join_args(join_args(kRedlock, kPauseAcquirer), {"--client", "node-redlock-5"}),
       {{"exclusion", I}}, {kGrantedExpired},
       "detected 0/10 (2026-12-02): a SIGSTOP 20 ms into the acquire lands in the retry delay; L2-send "
       "reproduces the bug"},
      {"L1-send", "node-redlock 4.2.0, a pause between sending the SETs and reading the replies",
       "the validity check: after the replies, 4.2.0 finds the lease spent and does not grant it",
       join_args(join_args(kRedlock, kPauseAfterSend), {"--client", "node-redlock"}),
       {{"exclusion", V}}},
      {"L2-send", "node-redlock 5.0.0-beta.2, the same pause",
       "no validity check: 5.0.0-beta.2 grants the lease the pause spent while another client holds it",
       // 25 s: one 1500 ms pause overlaps in 2 of 5 (fencecheck budget, 2026-12-04), and a
       // CI run under load had one pause in its 15 s and missed.
       with_time_limit(join_args(join_args(kRedlock, kPauseAfterSend), {"--client", "node-redlock-5"}), "25"),
       {{"exclusion", I}}, {kGrantedExpired}},
      {"L3", "node-redlock 4.2.0, the clients' wall clocks jump",
       "node-redlock computes validity from the client's Date.now(); a jump can only shorten or lengthen "
       "what it believes, and the masters expire keys on their own clocks",
       join_args(kRedlock, {"--client", "node-redlock", "--nemesis", "clock-bump", "--nemesis-targets", "clients",
                       "--clock-min-ms", "1000", "--clock-max-ms", "5000", "--nemesis-interval", "1000"}),
       {{"exclusion", V}}, {},
       "valid 0/10 idle, but under CPU load (ctest -j3, or 3 busy loops) 2 of 3 runs overlapped: a "
       "100 ms hold stretched past its 500 ms lease (one read took 0.77 s), a pause with no fault "
       "(2026-12-04)"},
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
       // Holds of up to 6 s outlast the 3 s session the cut expires.
       {"--backend", "zookeeper", "--backend-opt", "session_timeout_ms=3000", "--client", "curator",
        "--nemesis", "partition-holder", "--pause-ms", "6000", "--hold-ms", "6000", "--nemesis-interval", "2000",
        "--resource", "fenced", "--time-limit", "25"},
       {{"exclusion", I}, {"tokens", V}, {"resource", V}}, {kSessionLost},
       "detected 4/10 (2026-12-02): in the other runs the holds ended before the session expired"},
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
  };
}

}  // namespace

const std::vector<Scenario>& library_scenarios() {
  static const std::vector<Scenario> scenarios = make_library_scenarios();
  return scenarios;
}

}  // namespace fencecheck
