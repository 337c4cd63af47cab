// The stores' scenarios (`fencecheck suite stores`): locks in a key-value store whose own
// version is the fencing token — NATS JetStream's key-value bucket (nats-server 2.9.10, as
// Debian ships it), where a lock is "create the key if absent", its lease the bucket's max
// age and its token the key's revision. Kleppmann's argument assumes that token only grows;
// these rows ask whether it does, and what the fenced resource makes of it when it does not.
#include "harness/suite/scenarios.h"

namespace fencecheck {
namespace {

using namespace scenario_table;

const Args kNats = {"--backend", "nats", "--resource", "fenced"};
const Args kOneServer = {"--backend-opt", "servers=1"};
// Every server SIGKILLed at once every 5 s, started again at once: after the cluster
// elected its leaders again (about 5 s), there is time for grants before the next kill.
const Args kKillAll = {"--nemesis", "kill-server", "--nemesis-targets", "all", "--restart-ms", "0",
                       "--nemesis-interval", "8000", "--time-limit", "20"};

std::vector<Scenario> make_store_scenarios() {
  return {
      {"N1", "NATS KV on a 3-node JetStream cluster, concurrent creates, no fault",
       "KV Create is a publish with Nats-Expected-Last-Subject-Sequence; a clustered stream checks it before "
       "proposing, not when it applies the entry, so two creates in flight at once can both be stored "
       "(nats-server#4320, 2.9.15–2.9.20; #5644 for an expected 0): the revision still grows",
       join_args(kNats, {"--nemesis", "none", "--time-limit", "10"}),
       {{"exclusion", I}, {"tokens", V}, {"resource", V}}, {kPromiseBroken}},
      {"N1-single", "the same on one server",
       "one server checks the expected sequence and stores the message under one lock: one create wins",
       join_args(join_args(kNats, kOneServer), {"--nemesis", "none", "--time-limit", "10"}),
       {{"exclusion", V}, {"tokens", V}, {"resource", V}}},
      {"N2", "NATS KV on one server, holder paused past the bucket's max age, fenced by revision",
       "a lease alone does not exclude a paused holder (Kleppmann); the key's revision, the stream sequence, "
       "lets the resource refuse the holder that overstayed",
       join_args(join_args(kNats, kOneServer),
                 {"--nemesis", "pause-holder", "--pause-ms", "3000", "--nemesis-interval", "1000", "--hold-ms",
                  "1000", "--time-limit", "15"}),
       {{"exclusion", I}, {"tokens", V}, {"resource", V}}, {kOverstayed}},
      {"N3", "NATS KV on 3 nodes, partitions and the stream leader cut off",
       "a minority side cannot store (no quorum for the stream's raft group); revisions come from the one "
       "leader of a majority, so they grow, and the fenced resource refuses a holder cut off past its key "
       "(exclusion meets N1's race as well)",
       join_args(kNats, {"--nemesis", "partition-halves,partition-leader,partition-one", "--nemesis-interval", "2000",
                         "--time-limit", "15"}),
       {{"tokens", V}, {"resource", V}}},
      {"N4", "NATS KV on 3 nodes, every server killed at once and restarted (a process crash)",
       "JetStream fsyncs every 2 minutes, but a write(2) it made survives a crash of the process: the kernel "
       "keeps it, so nothing acknowledged is lost and revisions go on growing after the restart",
       join_args(kNats, kKillAll), {{"tokens", V}, {"resource", V}}},
      {"N5-power", "NATS KV on 3 nodes, every node's power cut at once 10 s in (writes not fsynced for 5 s lost)",
       "Jepsen (NATS 2.12.1): JetStream acknowledges before it fsyncs (every 2 minutes), so a coordinated power "
       "failure loses acknowledged writes (nats-server#7564) — lock records and their revisions with them: the "
       "stream numbers its next messages from where its disks stopped, and the fencing token goes backwards",
       // crash_loses=unsynced: each node's store on fclazydisk; the stream may then stay without a leader for
       // the rest of the run, which the suite's "longest out of reach" column shows, so the stall rule is
       // pushed past the run's end (the servers are unavailable, the bench is not broken).
       // Measured 2026-12-04, 10 runs: the bucket served again 12–13 s after the power came back in 5, and in 4 of
       // those its revisions went backwards (up to 31 below the highest granted; up to 17 granted twice); in the
       // other 5 the stream had no leader until the run ended. A regression in 4 of 10 is no prediction one run
       // can meet: tokens are left open, and the fenced resource, which remembers the highest token it accepted,
       // refused every write of a re-issued revision (10/10 valid).
       join_args(kNats, {"--backend-opt", "crash_loses=unsynced", "--plan", "kill-all-servers-at-10s",
                         "--time-limit", "25", "--stall-ms", "60000"}),
       {{"tokens", Expect::kAny}, {"resource", V}}},
  };
}

}  // namespace

const std::vector<Scenario>& store_scenarios() {
  static const std::vector<Scenario> scenarios = make_store_scenarios();
  return scenarios;
}

}  // namespace fencecheck
