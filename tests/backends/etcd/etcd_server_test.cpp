// The etcd backend with real servers (label `integration`): a 3-member etcd 3.4 cluster
// started through the registry's LockServer (netns as root, else local), a member
// killed and restarted on its data, the leader found and re-elected, a paused member
// skipped; the clock library refused by the Go binary; and, with the C++ gRPC client
// (local runtime: the client's gRPC threads then share the servers' network), the token
// that is the lock key's create revision, and etcd#11456 as Debian's etcd still has it.
//
// Without etcd a test is skipped, except under CI=1, where it fails.
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <thread>

#include "backends/etcd/etcd_backend.h"
#include "backends/etcd/etcd_connection.h"
#include "backends/etcd/etcd_keepalive.h"
#include "backends/etcd/etcd_lock_client.h"
#include "backends/registry.h"
#include "harness/run/fault_capabilities.h"
#include "nemesis/clock/node_clocks.h"
#include "platform/errors.h"
#include "platform/run_state.h"
#include "platform/runtime_registry.h"
#include "tests/runtime/test_util.h"
#include "tests/support/deadline.h"

namespace fencecheck::testing {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

class EtcdCluster : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (auto missing = missing_binary_message(etcd_backend_info())) {
      if (std::getenv("CI") != nullptr) FAIL() << *missing << " (CI must run scripts/setup.sh)";
      GTEST_SKIP() << *missing;
    }
    if (GetParam() == "netns" && ::geteuid() != 0) GTEST_SKIP() << "netns needs root";
    runtime_ = make_runtime(GetParam(), state_.run_id(), state_);
    runtime_->share(tmp_.path(), true);
    runtime_->create({"n1", "n2", "n3", "c1"});
  }
  void TearDown() override {
    clients_.clear();
    if (server_) server_->teardown(test_deadline());
    if (runtime_) runtime_->destroy();
  }

  void start_cluster(const std::vector<std::string>& options = {}) {
    const BackendInfo& etcd = *find_backend("etcd");
    server_ = etcd.make_server(resolve_backend_options(etcd, options));
    auto t0 = Clock::now();
    server_->setup(*runtime_, tmp_.path() / "nodes");
    std::cout << "[ etcd ] " << GetParam() << ": cluster ready after "
              << std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0).count() << " ms\n";
  }
  EtcdLockClient& client(const nlohmann::json& overrides = nlohmann::json::object()) {
    nlohmann::json cfg = server_->client_config();
    cfg.update(overrides);
    clients_.push_back(std::make_unique<EtcdLockClient>(EtcdClientConfig::from_json(cfg)));
    return *clients_.back();
  }
  EtcdConnection connection() { return EtcdConnection(EtcdClientConfig::from_json(server_->client_config()).endpoints); }
  // The lock key's create revision as a Range reads it; 0 when the key does not exist.
  static std::int64_t create_revision(EtcdConnection& conn, const std::string& key) {
    etcdserverpb::RangeRequest req;
    req.set_key(key);
    etcdserverpb::RangeResponse resp;
    for (int attempt = 0; attempt < 6; ++attempt) {
      if (conn.range(req, &resp, 1s).ok()) return resp.kvs().empty() ? 0 : resp.kvs(0).create_revision();
    }
    ADD_FAILURE() << "no member answered a Range";
    return -1;
  }
  static std::int64_t lease_of(const Grant& g) { return std::stoll(g.owner, nullptr, 16); }

  TempDir tmp_;
  RunState state_{RunState::new_run_id()};
  std::unique_ptr<Runtime> runtime_;
  std::unique_ptr<LockServer> server_;
  std::vector<std::unique_ptr<EtcdLockClient>> clients_;
};

using EtcdServerTest = EtcdCluster;
using EtcdClientTest = EtcdCluster;

TEST_P(EtcdServerTest, ClusterHasALeaderAndAKilledMemberRestartsOnItsData) {
  start_cluster();
  EXPECT_EQ(server_->nodes(), (std::vector<std::string>{"n1", "n2", "n3"}));
  for (const std::string n : {"n1", "n2", "n3"}) {
    EXPECT_TRUE(std::filesystem::exists(tmp_.path() / "nodes" / n / "data" / "member" / "wal")) << n;
    EXPECT_TRUE(std::filesystem::exists(server_->log_files(n).at(0)));
  }
  std::optional<std::string> leader = server_->leader();
  ASSERT_TRUE(leader);

  Process* victim = server_->processes(*leader).at(0);
  auto killed = Clock::now();
  server_->kill(*leader, test_deadline());
  EXPECT_FALSE(victim->alive());
  EXPECT_TRUE(victim->exit_expected());
  std::optional<std::string> next;
  ASSERT_TRUE(eventually([&] { return (next = server_->leader()) && *next != *leader; }, 20s));
  std::cout << "[ etcd ] " << GetParam() << ": new leader " << *next << " after "
            << std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - killed).count() << " ms\n";

  // It rejoins from its WAL (a fresh member with the same name could not: the cluster
  // knows its id), and start() waits until it serves again.
  server_->start(*leader);
  EXPECT_TRUE(server_->running(*leader));
  std::string log = read_text(server_->log_files(*leader).at(0));
  EXPECT_NE(log.find("restarting local member"), std::string::npos) << "not restarted from its data dir";
  EXPECT_TRUE(server_->leader());
}

TEST_P(EtcdServerTest, PausedMemberIsSkippedWhenAskingForTheLeader) {
  start_cluster();
  std::optional<std::string> leader = server_->leader();
  ASSERT_TRUE(leader);
  std::string follower = *leader == "n1" ? "n2" : "n1";
  server_->pause(follower, test_deadline());
  auto t0 = Clock::now();
  EXPECT_EQ(server_->leader(), leader);
  EXPECT_LT(Clock::now() - t0, 400ms);
  server_->resume(follower, test_deadline());
}

// libfcclock's LD_PRELOAD never reaches a static Go binary: etcd never maps its node's
// clock file, so the runner's ServerClocks refuses the shift instead of taking it. (The
// run refuses clock faults on etcd's servers before it starts: etcd_config_test.)
TEST_P(EtcdServerTest, AClockShiftCannotReachEtcdAndIsRefused) {
  runtime_->share(FC_CLOCK_LIB, false);
  NodeClocks clocks(FC_CLOCK_LIB, tmp_.path() / "clock", {"n1", "n2", "n3"});
  runtime_->set_spec_decorator([&](ProcessSpec& s) { clocks.decorate(s); });
  start_cluster();
  EXPECT_EQ(server_->processes("n1").at(0)->spec().preload.size(), 1u) << "the library was offered";
  ServerClocks server_clocks(clocks, *server_, *runtime_);
  try {
    server_clocks.set_offset("n1", 5000ms, test_deadline());
    ADD_FAILURE() << "a clock shift was taken although etcd cannot see it";
  } catch (const HarnessError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot shift the clock of n1"), std::string::npos) << e.what();
  }
  EXPECT_EQ(server_clocks.offset("n1"), 0ms);
}

// The runtime this machine runs by default (netns as root): the same probes run under
// local in the client tests below.
INSTANTIATE_TEST_SUITE_P(Runtimes, EtcdServerTest, ::testing::Values(default_runtime_kind()),
                         [](const auto& info) { return info.param; });

TEST_P(EtcdClientTest, TheTokenIsTheLockKeysCreateRevisionAndWaitersQueue) {
  for (const std::string lock : {"rpc", "mutex"}) {
    SCOPED_TRACE(lock);
    start_cluster({"lock=" + lock});
    EtcdConnection conn = connection();
    EtcdLockClient& a = client();
    LockResult ga = a.acquire("k", 5s);
    ASSERT_EQ(ga.outcome, Outcome::kOk) << ga.error;
    ASSERT_TRUE(ga.grant->token);
    EXPECT_EQ(*ga.grant->token, create_revision(conn, EtcdLockClient::lock_key("k", lease_of(*ga.grant))));
    EXPECT_EQ(ga.grant->detail.value("key_exists", false), true) << ga.grant->detail.dump();
    EXPECT_GT(ga.grant->detail.value("lease_ttl_s", -1), 0) << ga.grant->detail.dump();

    // An impatient client gives up, and its revoked lease takes its waiting key along.
    LockResult gi = client({{"max_wait_ms", 300}}).acquire("k", 5s);
    EXPECT_EQ(gi.outcome, Outcome::kFail) << gi.error;
    EXPECT_NE(gi.error.find("lease was revoked"), std::string::npos) << gi.error;

    // A waiter queues behind the holder: its key is created now, granted at the release.
    EtcdLockClient& b = client();
    LockResult gb;
    std::atomic<bool> granted{false};
    std::thread waiter([&] {
      gb = b.acquire("k", 8s);
      granted = true;
    });
    std::this_thread::sleep_for(2500ms);  // longer than the lease: the keepalive holds it
    EXPECT_FALSE(granted) << "granted while the holder held the lock";
    LockResult ra = a.release(*ga.grant);
    waiter.join();
    EXPECT_EQ(ra.outcome, Outcome::kOk) << ra.error;
    ASSERT_EQ(gb.outcome, Outcome::kOk) << gb.error;
    ASSERT_TRUE(gb.grant->token);
    // The waiter's token is its key's creation, before the grant; not the grant's revision.
    EXPECT_EQ(*gb.grant->token, create_revision(conn, EtcdLockClient::lock_key("k", lease_of(*gb.grant))));
    EXPECT_GT(*gb.grant->token, *ga.grant->token);
    EXPECT_EQ(a.release(*ga.grant).outcome, Outcome::kFail) << "released twice";
    EXPECT_EQ(b.release(*gb.grant).outcome, Outcome::kOk);
    EXPECT_EQ(create_revision(conn, EtcdLockClient::lock_key("k", lease_of(*gb.grant))), 0) << "key left behind";
    clients_.clear();
    server_->teardown(test_deadline());
    std::filesystem::remove_all(tmp_.path() / "nodes");
  }
}

// Issue 29: a grant promises its lease's TTL from the acquire's start — more for a waiter
// whose keepalive renewed its lease while it queued — and, while held, each keepalive answer
// is a kRenewed notice of it (TTL − time since that keepalive was sent); none once released.
TEST_P(EtcdClientTest, GrantsPromiseTheirLeaseAndEachKeepaliveIsARenewal) {
  start_cluster();
  std::mutex mu;
  std::vector<LibraryNotice> notices;
  auto listen = [&](EtcdLockClient& c) {
    c.set_notice_listener([&](const LibraryNotice& n) {
      std::lock_guard lock(mu);
      notices.push_back(n);
    });
  };
  auto renewals_of = [&](const Grant& g) {
    std::lock_guard lock(mu);
    std::vector<LibraryNotice> of;
    for (const LibraryNotice& n : notices) {
      if (n.owner == g.owner) of.push_back(n);
    }
    return of;
  };
  EtcdLockClient& a = client();
  EtcdLockClient& b = client();
  listen(a);
  listen(b);
  LockResult ga = a.acquire("k", 5s);
  ASSERT_EQ(ga.outcome, Outcome::kOk) << ga.error;
  ASSERT_TRUE(ga.grant->promise && ga.grant->promise->valid_ms);
  EXPECT_LE(*ga.grant->promise->valid_ms, 2000) << "the lease's 2 s, from before its LeaseGrant was sent";
  EXPECT_GT(*ga.grant->promise->valid_ms, 1500);

  LockResult gb;
  Clock::duration waited{};
  std::thread waiter([&] {
    auto t0 = Clock::now();
    gb = b.acquire("k", 8s);
    waited = Clock::now() - t0;
  });
  std::this_thread::sleep_for(2500ms);
  EXPECT_EQ(a.release(*ga.grant).outcome, Outcome::kOk);
  const std::vector<LibraryNotice> while_held = renewals_of(*ga.grant);
  waiter.join();
  std::cout << "[ etcd ] " << while_held.size() << " renewals of a grant held 2.5 s\n";
  EXPECT_GE(while_held.size(), 2u) << "a renewal every TTL/3";
  for (const LibraryNotice& n : while_held) {
    EXPECT_EQ(n.kind, LibraryNotice::Kind::kRenewed);
    EXPECT_EQ(n.key, "k");
    EXPECT_LE(n.valid, 2000ms);
    EXPECT_GT(n.valid, 1000ms);
  }
  ASSERT_EQ(gb.outcome, Outcome::kOk) << gb.error;
  ASSERT_TRUE(gb.grant->promise && gb.grant->promise->valid_ms);
  // Queued 2.5 s behind a, renewed every 0.67 s: its last renewal was sent at least 1.8 s
  // in, and promised 2 s from there.
  std::cout << "[ etcd ] waiter queued " << std::chrono::duration_cast<std::chrono::milliseconds>(waited).count()
            << " ms, promised " << *gb.grant->promise->valid_ms << " ms\n";
  EXPECT_GT(*gb.grant->promise->valid_ms, 3500);
  EXPECT_LE(std::chrono::milliseconds(*gb.grant->promise->valid_ms), waited + 2000ms);

  // A client that gives up (behind b) never held its lease: no renewals of it.
  EtcdLockClient& c = client({{"max_wait_ms", 1000}});
  listen(c);
  EXPECT_EQ(c.acquire("k", 5s).outcome, Outcome::kFail);
  std::this_thread::sleep_for(1000ms);  // more keepalive rounds for b, none for a or c
  EXPECT_EQ(renewals_of(*ga.grant).size(), while_held.size()) << "renewals after the release";
  EXPECT_GE(renewals_of(*gb.grant).size(), 1u);
  EXPECT_EQ(b.release(*gb.grant).outcome, Outcome::kOk);
  const std::size_t b_renewals = renewals_of(*gb.grant).size();
  std::this_thread::sleep_for(1000ms);
  EXPECT_EQ(renewals_of(*gb.grant).size(), b_renewals) << "renewals after the release";
  std::lock_guard lock(mu);
  EXPECT_EQ(notices.size(), while_held.size() + b_renewals) << "only held grants are renewed";
}

// Every member killed at once and started again on its data: the store (and so the
// revision counter tokens come from) survives, so tokens keep growing.
TEST_P(EtcdClientTest, AWholeClusterCrashKeepsTheRevisionsTokensComeFrom) {
  start_cluster();
  EtcdLockClient& a = client();
  LockResult g1 = a.acquire("k", 5s);
  ASSERT_EQ(g1.outcome, Outcome::kOk) << g1.error;
  ASSERT_EQ(a.release(*g1.grant).outcome, Outcome::kOk);
  for (const std::string n : {"n1", "n2", "n3"}) server_->kill(n, test_deadline());
  EXPECT_FALSE(server_->leader());
  LockResult down = a.acquire("k", 1s);
  EXPECT_EQ(down.outcome, Outcome::kFail) << down.error;
  auto t0 = Clock::now();
  server_->start("n1");
  EXPECT_LT(Clock::now() - t0, 2s) << "a lone member cannot be ready; its start must not wait";
  server_->start("n2");
  server_->start("n3");
  LockResult g2;
  ASSERT_TRUE(eventually([&] { return (g2 = a.acquire("k", 2s)).outcome == Outcome::kOk; }, 20s)) << g2.error;
  ASSERT_TRUE(g1.grant->token && g2.grant->token);
  EXPECT_GT(*g2.grant->token, *g1.grant->token);
}

// A release's outcome is what etcd confirmed: a lease that expired under the grant makes it
// "not held"; with every member down nothing is sent, so the grant is still held and a
// later release tries again.
TEST_P(EtcdClientTest, ReleaseOutcomesFollowWhatEtcdConfirmed) {
  start_cluster();
  EtcdConnection conn = connection();
  EtcdLockClient& a = client();
  LockResult g1 = a.acquire("k1", 5s);
  ASSERT_EQ(g1.outcome, Outcome::kOk) << g1.error;
  ASSERT_TRUE(conn.lease_revoke(lease_of(*g1.grant), 1s).ok());  // as if it had expired
  LockResult r1 = a.release(*g1.grant);
  EXPECT_EQ(r1.outcome, Outcome::kFail);
  EXPECT_EQ(r1.error.rfind("not held", 0), 0u) << r1.error;

  LockResult g2 = a.acquire("k2", 5s);
  ASSERT_EQ(g2.outcome, Outcome::kOk) << g2.error;
  for (const std::string n : {"n1", "n2", "n3"}) server_->kill(n, test_deadline());
  // Until each of its three channels has noticed, a call may still count as sent.
  for (int member = 0; member < 3; ++member) {
    ASSERT_TRUE(eventually([&] { return a.acquire("probe", 1s).not_sent; }, 10s)) << "member " << member;
  }
  LockResult down = a.release(*g2.grant);
  EXPECT_EQ(down.outcome, Outcome::kFail) << down.error;
  EXPECT_TRUE(down.not_sent) << down.error;
  // Nothing reached etcd, so the grant is still this client's: asked again, the release
  // is tried again (not refused as "not a grant of this client").
  LockResult again = a.release(*g2.grant);
  EXPECT_EQ(again.outcome, Outcome::kFail) << again.error;
  EXPECT_TRUE(again.not_sent) << again.error;
}

// lock=rpc: a lease that expired under the grant makes the release "not held" also when
// the look at the key gets no answer, so that only what etcd confirms can tell: v3lock's
// Unlock is a bare delete, OK for a key long gone, and must not count as a release.
// The client knows the two followers only and starts on one of them at random; it is made
// to hold the lock through F1 (F2 paused meanwhile), and F1 is paused for the release.
TEST_P(EtcdClientTest, ARpcReleaseOfAnExpiredLeaseIsNotHeldWhenTheLookGetsNoAnswer) {
  start_cluster({"lock=rpc"});
  std::optional<std::string> leader = server_->leader();
  ASSERT_TRUE(leader);
  const std::vector<std::string> nodes = server_->nodes();
  const nlohmann::json all = server_->client_config()["endpoints"];
  std::vector<std::size_t> followers;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i] != *leader) followers.push_back(i);
  }
  ASSERT_EQ(followers.size(), 2u);
  const std::string f1 = nodes[followers[0]], f2 = nodes[followers[1]];
  EtcdLockClient& a = client({{"endpoints", {all[followers[0]], all[followers[1]]}}});
  server_->pause(f2, test_deadline());
  LockResult g;  // a first try that starts on F2 gets no lease and moves the client to F1
  for (int attempt = 0; attempt < 2 && g.outcome != Outcome::kOk; ++attempt) g = a.acquire("k", 5s);
  server_->resume(f2, test_deadline());
  ASSERT_EQ(g.outcome, Outcome::kOk) << g.error;
  ASSERT_TRUE(g.grant->detail.contains("lease_ttl_s")) << "a read after the grant moved the client to F2";
  EtcdConnection conn = connection();
  ASSERT_TRUE(conn.lease_revoke(lease_of(*g.grant), 1s).ok());  // the lease ends under the grant
  // The keepalive hears TTL 0 within TTL/3 and forgets the lease: it makes no more calls.
  std::this_thread::sleep_for(1500ms);
  server_->pause(f1, test_deadline());
  LockResult r = a.release(*g.grant);  // the look times out on F1; the rest goes to F2
  server_->resume(f1, test_deadline());
  EXPECT_EQ(r.outcome, Outcome::kFail) << r.error;
  EXPECT_EQ(r.error.rfind("not held", 0), 0u) << r.error;
}

// etcd#11456 on the etcd Debian ships: a Lock that waits behind a holder while its own
// lease expires (here: a lease nobody keeps alive, as a frozen client's) still returns
// success once the holder goes, for a key that no longer exists.
TEST_P(EtcdClientTest, TheLockRpcGrantsAnExpiredLease_Etcd11456) {
  start_cluster();
  EtcdConnection conn = connection();
  EtcdKeepAlive keepalive(conn, 2s);
  etcdserverpb::LeaseGrantResponse holder, waiter;
  ASSERT_TRUE(conn.lease_grant(2, &holder, 1s).ok());
  ASSERT_TRUE(conn.lease_grant(2, &waiter, 1s).ok());
  keepalive.add(holder.id(), {Clock::now(), 2s});
  v3lockpb::LockResponse held;
  ASSERT_TRUE(conn.lock("fc/bug", holder.id(), &held, 2s).ok());

  EtcdStatus waited;
  v3lockpb::LockResponse granted;
  std::thread t([&] { waited = conn.lock("fc/bug", waiter.id(), &granted, 15s); });
  etcdserverpb::LeaseTimeToLiveResponse ttl;
  const bool expired =
      eventually([&] { return conn.lease_time_to_live(waiter.id(), &ttl, 1s).ok() && ttl.ttl() == -1; }, 8s);
  const bool unlocked = conn.unlock(held.key(), 1s).ok();
  t.join();  // before any assertion can return: a joinable thread's destructor aborts
  ASSERT_TRUE(expired) << "the waiter's lease did not expire";
  ASSERT_TRUE(unlocked);
  EXPECT_TRUE(waited.ok()) << "etcd no longer grants an expired lease (fixed?): " << waited.describe();
  EXPECT_EQ(granted.key(), "fc/bug/" + EtcdLockClient::lock_key("", waiter.id()).substr(4));
  EXPECT_EQ(create_revision(conn, granted.key()), 0) << "the granted key exists";
}

INSTANTIATE_TEST_SUITE_P(Local, EtcdClientTest, ::testing::Values("local"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace fencecheck::testing
