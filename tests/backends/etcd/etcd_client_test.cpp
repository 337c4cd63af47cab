// The etcd backend's C++ gRPC client against a real cluster (label `integration`, local
// runtime: the client's gRPC threads then share the servers' network): the token that is
// the lock key's create revision, the promise and renewals, releases, and etcd#11456 as
// Debian's etcd still has it.
#include "tests/backends/etcd/etcd_cluster.h"

namespace fencecheck::testing {
namespace {

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
