// The databases' scenarios (`fencecheck suite databases`): the locks teams take in a
// database they already run — MariaDB's GET_LOCK named locks and hand-written lease tables,
// on one server and on a three-node Galera cluster. A row's claim is what the database's
// documentation (or the pattern's users) promise, its expectation what the server's own
// behaviour predicts; rows whose lock holds are controls, also under partitions and kills.
#include "harness/suite/scenarios.h"

namespace fencecheck {
namespace {

using namespace scenario_table;

const Args kMariadb = {"--backend", "mariadb"};
const Args kGalera = {"--backend", "mariadb", "--backend-opt", "cluster=galera"};
const Args kNoFault = {"--nemesis", "none", "--time-limit", "10"};
Args lease(const char* mode) { return {"--backend-opt", "lock=lease", "--backend-opt", std::string("lease=") + mode}; }
// Partitions and crashes, with the fenced resource: a safe lock stays safe, and a client cut
// off keeps what the fenced resource refuses from reaching the data.
const Args kPartitionsAndKills = {"--nemesis", "partition-halves,partition-one,kill-server", "--nemesis-interval",
                                  "2000", "--resource", "fenced", "--time-limit", "12"};

std::vector<Scenario> make_database_scenarios() {
  return {
      {"D1-galera", "MariaDB 10.11 GET_LOCK on a 3-node Galera cluster, clients on every node, no fault",
       "MariaDB KB \"Galera known limitations\": GET_LOCK is unsupported; MDEV-30473 made it an error "
       "(10.11.3), MDEV-31325 reverted that: each node grants the name from its own table, unreplicated "
       "(gh-ost#224)",
       join_args(join_args(kGalera, {"--backend-opt", "lock=named"}), kNoFault),
       // The lock promises no time, so the checker's class is session-lost, though no session
       // was lost: two nodes each kept their own lock.
       {{"exclusion", I}, {"resource", I}}, {kSessionLost}},
      {"D2-wait-timeout", "MariaDB GET_LOCK, wait_timeout 2 s, holder paused 3 s",
       "a named lock is the connection's: the server closes a session idle past wait_timeout and frees "
       "its locks, and the holder learns of it only at its next statement (K7, for MariaDB)",
       join_args(kMariadb, {"--backend-opt", "wait_timeout_s=2", "--nemesis", "pause-holder", "--pause-ms",
                            "3000", "--nemesis-interval", "1000", "--time-limit", "15"}),
       {{"exclusion", I}}, {kSessionLost}},
      {"D3-read-update", "MariaDB lease table, SELECT then UPDATE at REPEATABLE READ, no fault",
       "the hand-written lease: read the row, and if it has expired, write yourself in, in one "
       "transaction; at REPEATABLE READ with innodb_snapshot_isolation OFF (the default before 11.6.2) "
       "a second UPDATE writes over the first one's committed row: a lost update (Jepsen MySQL 8.0.34)",
       join_args(join_args(kMariadb, lease("read-update")), kNoFault),
       {{"exclusion", I}, {"tokens", I}}, {kPromiseBroken}},
      {"D3-snapshot", "the same transaction with innodb_snapshot_isolation ON, partitions and kills",
       "with snapshot isolation the second UPDATE fails (\"Record has changed since last read\"): one "
       "writer wins",
       join_args(join_args(join_args(kMariadb, lease("read-update")),
                           {"--backend-opt", "innodb_snapshot_isolation=ON"}),
                 kPartitionsAndKills),
       {{"exclusion", V}, {"tokens", V}, {"resource", V}}},
      {"D3-for-update", "MariaDB lease table, SELECT … FOR UPDATE, partitions and kills",
       "FOR UPDATE locks the row it reads: the second transaction waits and then sees the first one's "
       "lease",
       join_args(join_args(kMariadb, lease("for-update")), kPartitionsAndKills),
       {{"exclusion", V}, {"tokens", V}, {"resource", V}}},
      {"D4-galera-read-update", "the read-then-update lease on Galera, clients on every node, no fault",
       "Galera certifies conflicting writes from different nodes (first committer wins), but two "
       "clients of the same node meet InnoDB's REPEATABLE READ, and Jepsen (Galera 12.1.2, 2026-03) "
       "found lost updates in a healthy cluster",
       join_args(join_args(kGalera, lease("read-update")), kNoFault),
       {{"exclusion", I}, {"tokens", I}}, {kPromiseBroken}},
      {"D5-galera-conditional", "Galera, one conditional UPDATE per acquire, token in the same statement, "
       "fenced resource, partitions and kills",
       "one atomic UPDATE … WHERE expired takes the row and raises its token; the fenced resource "
       "refuses whatever a cut-off holder sends late",
       join_args(join_args(kGalera, lease("conditional")), kPartitionsAndKills),
       {{"tokens", V}, {"resource", V}}},
      {"D5-pause", "MariaDB conditional lease, holder paused past it, fenced resource",
       "a lease alone does not exclude a paused holder (Kleppmann); the token, raised in the same "
       "UPDATE, lets the fenced resource refuse it",
       join_args(join_args(kMariadb, lease("conditional")),
                 {"--nemesis", "pause-holder", "--pause-ms", "3000", "--nemesis-interval", "1000", "--hold-ms",
                  "1000", "--resource", "fenced", "--time-limit", "15"}),
       {{"exclusion", I}, {"tokens", V}, {"resource", V}}, {kOverstayed}},
      {"D6-kill", "MariaDB GET_LOCK, the holder's session killed by the server, unfenced resource",
       "a named lock is \"released when the connection terminates (either normally or abnormally)\" "
       "(MariaDB KB): a KILL, a proxy's reconnect or a restart frees it while its holder goes on "
       "writing; nothing tells the holder until its next statement",
       join_args(kMariadb, {"--backend-opt", "lock=named", "--nemesis", "kill-session", "--nemesis-interval", "1000",
                            "--time-limit", "15"}),
       {{"exclusion", I}, {"resource", I}}, {kSessionLost}},
      {"D6-kill-lease", "MariaDB conditional lease, the holder's session killed by the server, and partitions",
       "a lease row does not belong to a session: a killed session costs its client a reconnect, "
       "never the lease",
       join_args(join_args(kMariadb, lease("conditional")),
                 {"--nemesis", "kill-session,partition-halves,partition-one", "--nemesis-interval", "1000",
                  "--resource", "fenced", "--time-limit", "15"}),
       {{"exclusion", V}, {"tokens", V}, {"resource", V}}},
  };
}

}  // namespace

const std::vector<Scenario>& database_scenarios() {
  static const std::vector<Scenario> scenarios = make_database_scenarios();
  return scenarios;
}

}  // namespace fencecheck
