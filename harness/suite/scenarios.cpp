#include "harness/suite/scenarios.h"

#include <algorithm>
#include <stdexcept>

#include "harness/run/run_command.h"

namespace fencecheck {
namespace {

using namespace scenario_table;


// The article's pause: the client whose acquire just completed is frozen for three leases.
// 8 s of test hold three pauses; the first already gave K1 and K2 their violations in
// every measured run, 2.0-4.0 s into the test (suite --repeat 10 each, 2026-12-03).
const Args kPauseHolder = {"--nemesis", "pause-holder", "--ttl-ms", "500", "--pause-ms", "1500",
                           "--nemesis-interval", "1000", "--hold-ms", "200", "--time-limit", "8"};
// etcd's lease (2 s) against pauses twice as long; an acquire may wait 10 s in the queue
// (the client's cap), longer than a pause, so a client frozen while it waits hears its
// Lock's answer after it resumes (a shorter wait would end in DEADLINE_EXCEEDED instead).
// With 8 s, a waiter behind four holders of up to 3 s each gave up before its turn in 1
// of 4 K8-11456 runs (seed 3: its turn came 8.5 s after it asked), so no grant was ever
// made on its expired lease.
Args etcd_pauses(const std::string& seconds) {
  return {"--backend", "etcd", "--pause-ms", "4000", "--nemesis-interval", "2000", "--ttl-ms", "10000",
          "--op-timeout-ms", "15000", "--resource", "fenced", "--time-limit", seconds};
}
const Args kEtcdPauses = etcd_pauses("20");
// Redlock on three masters, so that a majority is two nodes.
const Args kRedlock3 = {"--backend", "redlock", "--backend-opt", "n=3", "--time-limit", "15"};
// Redlock whose every fifth acquire sleeps 1.2 leases between sending the SETs and reading
// the replies: a GC pause while the replies are in flight (K4).
const Args kRepliesInFlight = {"--backend", "redlock", "--backend-opt", "stall_after_send_ms=1200",
                               "--backend-opt", "stall_every=5", "--nemesis", "none", "--time-limit", "15"};
// Redlock over five masters and two clients, faults from a shipped plan (plans/).
// 25 s: the plan's steps wait for c1's grants and releases, and a CI run under load (three
// Galera nodes beside it) spent 10 s at step 10 of 21 waiting for c1's grant: a 15 s run
// ended with the plan unfinished and nothing broken (2026-12-04). Time after the last step
// runs with no fault at all.
Args kRedlockTimeline(const std::string& plan) {
  return {"--backend", "redlock", "--plan", plan, "--concurrency", "2", "--ttl-ms", "3000",
          "--hold-ms", "1000", "--time-limit", "25"};
}
// A majority of the masters killed and started again; holds long enough to outlast a restart.
const Args kKillMajority = join_args(kRedlock3, {"--nemesis", "kill-server", "--nemesis-targets", "majority",
                                            "--nemesis-interval", "1000", "--hold-ms", "600"});

std::vector<Scenario> make_scenarios() {
  return {
      {"K1", "Redis lease, holder paused past it, unfenced resource",
       "A client paused longer than its lease still believes it holds the lock; its late write "
       "overwrites the next holder's: updates are lost.",
       join_args({"--backend", "redis", "--resource", "unfenced"}, kPauseHolder),
       {{"exclusion", I}, {"tokens", V}, {"resource", I}}, {kOverstayed}},
      {"K2", "Redis lease with a fencing token, holder paused, fenced resource",
       "Exclusion still fails, but the resource refuses the paused holder's stale token: no data is lost.",
       join_args({"--backend", "redis", "--resource", "fenced"}, kPauseHolder),
       {{"exclusion", I}, {"tokens", V}, {"resource", V}}, {kOverstayed}},
      // A bump moves each target's clock forward or back at random. With two of the three as
      // targets only 1 bump in 4 moved a majority forward, and a run of ~7 bumps missed in 1 of
      // 20 (suite --repeat 20, 2026-12-02); all three as targets, every second bump does, and
      // bumps twice as often make ~15 chances a run.
      {"K3", "Redlock (3 masters), the masters' clocks jump, a majority of them forward (the random variant)",
       "Redis expires keys by the wall clock: a jump on a majority frees the lock while its holder "
       "still holds it, and another client gets a quorum.",
       join_args(kRedlock3, {"--nemesis", "clock-bump", "--nemesis-targets", "all", "--clock-min-ms", "2500",
                        "--clock-max-ms", "5000", "--nemesis-interval", "500"}),
       {{"exclusion", I}}, {kPromiseBroken}},
      // Kleppmann's own timeline, step by step (plans/k3-exact.json, three times over): c1
      // takes n1-n3 while n4, n5 are cut from it; n3's clock jumps past the lease; c2, cut
      // from n1, n2, takes n3-n5. c1's hold (up to 1 s) outlasts c2's acquire (~50 ms).
      // c2 is held off first and c1 is cut from n4, n5 only as it releases, so that no key
      // of c1's lingers there (docs/plans.md says how two earlier orders missed).
      {"K3-exact", "Redlock (5 masters), Kleppmann's timeline: one master's clock jumps between two partial quorums",
       "A single clock jump on the one master two quorums share is enough: client 1 holds n1-n3, n3 "
       "expires the key early, client 2 gets n3-n5 while client 1 still believes it holds.",
       kRedlockTimeline("k3-exact"), {{"exclusion", I}}, {kPromiseBroken}},
      {"K3-exact-control", "Redlock (5 masters), the same timeline without the clock jump",
       "The same partitions alone: client 2 cannot reach a quorum while client 1 holds n1-n3.",
       kRedlockTimeline("k3-exact-control"), {{"exclusion", V}, {"resource", V}}},
      {"K3-control", "Redlock (3 masters), no faults",
       "With sane clocks and no pauses Redlock excludes.",
       join_args(kRedlock3, {"--nemesis", "none"}),
       {{"exclusion", V}, {"resource", V}, {"linearizable", V}}},
      {"K4", "Redlock, pause while the acquire's replies are in flight, no validity check",
       "A client that does not check the lease's validity after the replies (node-redlock 5 beta) "
       "takes an already expired lock.",
       join_args(kRepliesInFlight, {"--backend-opt", "validity_check=off"}),
       {{"exclusion", I}}, {kGrantedExpired}},
      {"K4-defended", "Redlock, the same pause, with antirez's validity check",
       "antirez: after acquiring, check the time again; an expired lease is not a grant.",
       join_args(kRepliesInFlight, {"--backend-opt", "validity_check=on"}),
       {{"exclusion", V}, {"resource", V}}},
      {"K5", "Redlock (3 masters), a majority killed and restarted at once without persistence",
       "A master that restarts without the key lets a second client reach a quorum.",
       join_args(kKillMajority, {"--backend-opt", "persistence=none", "--restart-ms", "0"}),
       {{"exclusion", I}}, {kPromiseBroken}},
      {"K5-delayed", "Redlock, the same crashes, restarted only after more than a lease",
       "antirez's delayed restart: a master that stays down longer than the TTL cannot hand out a "
       "lock that is still held.",
       join_args(kKillMajority, {"--backend-opt", "persistence=none", "--restart-ms", "1500"}),
       {{"exclusion", V}, {"resource", V}}},
      {"K5-fsync", "Redlock, the same crashes, appendfsync always",
       "A master that fsyncs every write keeps the key across the crash.",
       join_args(kKillMajority, {"--backend-opt", "persistence=always", "--restart-ms", "0"}),
       {{"exclusion", V}, {"resource", V}}},
      {"K6", "ZooKeeper, holder paused past its session timeout, fenced resource (czxid token)",
       "The ensemble expires the paused holder's session and grants the lock again; the czxid "
       "token still increases, so the fenced resource refuses the stale writes.",
       {"--backend", "zookeeper", "--backend-opt", "session_timeout_ms=3000", "--nemesis", "pause-holder",
        "--pause-ms", "5000", "--nemesis-interval", "2000", "--resource", "fenced", "--time-limit", "20"},
       {{"exclusion", I}, {"tokens", V}, {"resource", V}}, {kSessionLost}},
      {"K7", "PostgreSQL advisory lock, idle_session_timeout, holder paused",
       "The server ends the paused holder's idle session and frees its advisory lock; the holder "
       "learns of it only at its next statement.",
       {"--backend", "postgres", "--backend-opt", "lock=advisory", "--backend-opt", "idle_session_timeout_ms=1000",
        "--nemesis", "pause-holder", "--pause-ms", "3000", "--nemesis-interval", "1000", "--time-limit", "15"},
       {{"exclusion", I}}, {kSessionLost}},
      // The kill comes from the grant's lock event, before the holder's next op; the other
      // clients retry every 5-25 ms. Measured 2026-12-04 (suite --only K7-kill --repeat 10,
      // twice, the second while a build ran on the 2-core machine): 20/20 detected, every
      // violation session-lost, first one at 1.3 s (median); 261 of 270 kills (97%) let
      // another client in during the killed holder's hold, so a run (11-16 kills) misses
      // only if every kill does.
      {"K7-kill", "PostgreSQL advisory lock, the holder's session killed by the server",
       "An operator's pg_terminate_backend ends the holder's session and frees its advisory lock at "
       "once; the next client takes it while the holder still believes it holds, and learns otherwise "
       "only at its release.",
       {"--backend", "postgres", "--backend-opt", "lock=advisory", "--nemesis", "kill-session",
        "--nemesis-interval", "1000", "--time-limit", "15"},
       {{"exclusion", I}}, {kSessionLost}},
      {"K7-lease", "PostgreSQL lease table with a token, the server's clock jumps, fenced resource",
       "Leases follow the server clock and expire early, but the token is allocated in the same "
       "UPDATE and only goes up: the fenced resource stays safe.",
       {"--backend", "postgres", "--backend-opt", "lock=lease", "--nemesis", "clock-bump", "--clock-min-ms",
        "2000", "--clock-max-ms", "5000", "--nemesis-interval", "1000", "--resource", "fenced",
        "--time-limit", "15"},
       {{"tokens", V}, {"resource", V}}},
      {"K8", "etcd Lock RPC, holder paused past its lease, fenced resource (create revision token)",
       "Jepsen (etcd 3.4.3): etcd locks cannot exclude in an asynchronous system. The paused holder's "
       "lease expires and the lock goes to the next client; its key's create revision only grows, so "
       "the fenced resource refuses the stale holder.",
       join_args(kEtcdPauses, {"--nemesis", "pause-holder", "--hold-ms", "1000"}),
       {{"exclusion", I}, {"tokens", V}, {"resource", V}}, {kOverstayed}},
      {"K8-11456", "etcd Lock RPC, a client frozen while its Lock waits, past its lease",
       "etcd#11456, unfixed in 3.4: the server answers a waiting Lock once the holder goes, without "
       "checking that the waiter's lease (and key) still exist; the client hears \"locked\" on an "
       "expired lease (the op says so: key_at_grant false).",
       // Holds up to 3 s: the frozen waiter's turn tends to come after its lease ran out (the
       // bug) rather than while the lease still ran (a grant it then outlives, as in K8).
       // Not every pause ends in a grant on an expired lease: 13 of 19 did (suite --repeat 6,
       // 2026-12-04; the last pause of a run is often cut short by its end), and with 20 s
       // (two or three pauses) a CI run under load got none. 40 s hold about six pauses: a run
       // with no violation is then about 0.32^6 = 0.1%.
       join_args(etcd_pauses("40"), {"--nemesis", "pause-acquirer", "--hold-ms", "3000"}),
       {{"exclusion", I}, {"tokens", V}}, {kGrantedExpired}},
      {"K8-mutex", "etcd concurrency Mutex recipe, the same pauses (holder and waiter)",
       "The recipe in etcd 3.4 has the same gap as the RPC (no look at its own key after the wait): "
       "exclusion fails the same ways, and the revision still fences.",
       join_args(kEtcdPauses, {"--backend-opt", "lock=mutex", "--nemesis", "pause-holder,pause-acquirer",
                               "--hold-ms", "1000"}),
       {{"exclusion", I}, {"tokens", V}, {"resource", V}}, {kOverstayed, kGrantedExpired}},
      {"K8-control", "etcd Lock RPC, a member crashed and the leader cut off, no pauses",
       "Raft keeps the lock keys through a crash and a leader change, leases are renewed across "
       "elections, and a client fails over to a live member: nothing overlaps, and the history is "
       "a mutex's.",
       {"--backend", "etcd", "--nemesis", "kill-server,partition-leader", "--nemesis-interval", "1500",
        "--resource", "fenced", "--time-limit", "20"},
       {{"exclusion", V}, {"tokens", V}, {"resource", V}, {"linearizable", V}}},
      {"K9", "No lock: compare-and-set on the resource, every fault at once",
       "A version check made by the resource itself needs neither leases nor clocks.",
       {"--workload", "cas", "--nemesis",
        "pause-client,pause-server,partition-halves,partition-one,clock-bump,kill-server,kill-client",
        "--nemesis-interval", "1000", "--pause-ms", "1000", "--restart-ms", "300", "--time-limit", "20"},
       {{"resource", V}, {"linearizable", V}}},
  };
}

}  // namespace

std::string_view to_string(Expect e) {
  switch (e) {
    case Expect::kValid: return "valid";
    case Expect::kInvalid: return "invalid";
    case Expect::kAny: break;
  }
  return "any";
}

bool Scenario::safe() const {
  for (const auto& [checker, e] : expect) {
    if (e == Expect::kInvalid) return false;
  }
  return true;
}

const std::vector<Scenario>& kleppmann_scenarios() {
  static const std::vector<Scenario> scenarios = make_scenarios();
  return scenarios;
}

std::optional<std::string> run_args_problem(const std::string& id, const std::vector<std::string>& args) {
  try {
    RunConfig c = parse_run_args(args);
    c.seed = 1;
    if (c.runtime.empty()) c.runtime = "netns";  // what the suite runs under (it needs root)
    c.resolve();
    if (auto problem = c.input_problem()) return id + ": " + *problem;
  } catch (const std::invalid_argument& e) {
    return id + ": " + e.what();
  }
  return std::nullopt;
}

std::optional<std::string> scenario_problem(const Scenario& s) { return run_args_problem(s.id, s.args); }

const std::vector<ScenarioTable>& scenario_tables() {
  static const std::vector<ScenarioTable> tables = {
      {"kleppmann", "Kleppmann's scenarios K1–K9, each --repeat times, against the verdicts the argument predicts",
       "the article's scenarios, reproduced", kleppmann_scenarios},
      {"libraries", "each lock library's adapter under the faults that matter for it, against what its bug "
                    "reports predict",
       "lock libraries against their promises", library_scenarios},
      {"databases", "locks in a database teams already run (MariaDB named locks and lease tables, one server and "
                    "Galera), against what the server's behaviour predicts",
       "locks in databases against their servers' behaviour", database_scenarios},
      {"stores", "locks in a key-value store whose own version is the fencing token (NATS JetStream KV), against "
                 "what its server's behaviour predicts",
       "key-value stores whose version fences", store_scenarios},
  };
  return tables;
}

const Scenario* find_scenario(std::string_view id) {
  for (const ScenarioTable& table : scenario_tables()) {
    for (const auto& s : table.rows()) {
      if (s.id == id) return &s;
    }
  }
  return nullptr;
}

std::string scenario_ids(const std::vector<Scenario>& table) {
  std::string out;
  for (const auto& s : table) out += (out.empty() ? "" : ", ") + s.id;
  return out;
}

std::map<std::string, std::uint64_t> blame_counts(const nlohmann::json& results) {
  std::map<std::string, std::uint64_t> out;
  const nlohmann::json checkers =
      results.is_object() ? results.value("checkers", nlohmann::json::object()) : nlohmann::json::object();
  const nlohmann::json e = checkers.is_object() ? checkers.value("exclusion", nlohmann::json()) : nlohmann::json();
  const nlohmann::json b = e.is_object() ? e.value("blame", nlohmann::json()) : nlohmann::json();
  if (!b.is_object()) return out;
  for (const auto& [name, n] : b.items()) {
    if (n.is_number_integer() && n.get<std::int64_t>() > 0) out[name] = n.get<std::uint64_t>();
  }
  return out;
}

std::string blame_names_of(const std::vector<Blame>& blames) {
  std::string out;
  for (Blame b : blames) out += (out.empty() ? "" : " or ") + std::string(to_string(b));
  return out;
}

namespace {
// "exclusion blame: predicted overstayed, got promise-broken 1 (overstayed 3)"; empty when
// every violation is of a predicted class (or nothing is predicted).
std::string blame_off_prediction(const Scenario& s, const nlohmann::json& checkers) {
  if (s.blame.empty()) return "";
  std::string off, on;
  for (const auto& [name, n] : blame_counts({{"checkers", checkers}})) {
    const auto b = parse_blame(name);
    const bool predicted = b && std::find(s.blame.begin(), s.blame.end(), *b) != s.blame.end();
    (predicted ? on : off) += (((predicted ? on : off).empty()) ? "" : ", ") + name + " " + std::to_string(n);
  }
  if (off.empty()) return "";
  return "exclusion blame: predicted " + blame_names_of(s.blame) + ", got " + off + (on.empty() ? "" : " (" + on + ")");
}
}  // namespace

ScenarioVerdict judge_scenario(const Scenario& s, const nlohmann::json& results) {
  ScenarioVerdict v;
  const nlohmann::json checkers =
      results.is_object() ? results.value("checkers", nlohmann::json::object()) : nlohmann::json::object();
  bool all_expected_invalid_found = true, any_expected_valid_broken = false;
  for (const auto& [name, e] : s.expect) {
    if (e == Expect::kAny) continue;
    const nlohmann::json got = checkers.is_object() && checkers.contains(name) && checkers[name].is_object()
                                   ? checkers[name].value("valid", nlohmann::json())
                                   : nlohmann::json();
    const std::string observed = got.is_boolean() ? (got.get<bool>() ? "valid" : "invalid")
                                 : got.is_string() ? got.get<std::string>()
                                                   : "missing";
    const bool ok = e == Expect::kInvalid ? observed == "invalid" : observed == "valid" || observed == "skipped";
    if (e == Expect::kInvalid && observed != "invalid") all_expected_invalid_found = false;
    if (e == Expect::kValid && observed == "invalid") any_expected_valid_broken = true;
    if (!ok) {
      v.mismatches.push_back(name + ": expected " + std::string(to_string(e)) + ", got " + observed);
      v.broken.push_back(name);
    }
  }
  if (std::string off = blame_off_prediction(s, checkers); !off.empty()) {
    v.mismatches.push_back(off);
    v.broken.push_back("exclusion");
  }
  const bool unknown = results.is_object() && results.value("valid", nlohmann::json()) == "unknown";
  if (unknown && s.safe()) {
    std::string why = "the run is unknown";
    const nlohmann::json reasons = results.value("unknown_reasons", nlohmann::json::array());
    for (const auto& r : reasons) {
      if (r.is_string()) why += ": " + r.get<std::string>();
      break;
    }
    v.mismatches.push_back(why);
  }
  v.as_expected = v.mismatches.empty();
  v.detected = !s.safe() && all_expected_invalid_found;
  v.false_alarm = any_expected_valid_broken;
  v.undecided = unknown && !v.detected && !v.false_alarm;
  return v;
}

}  // namespace fencecheck
