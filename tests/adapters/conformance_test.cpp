// The adapter conformance suite (adapters/PROTOCOL.md, "Adding an adapter"): every entry of
// adapter_registry(), driven through AdapterLockClient against real servers of the adapter's
// first backend, started through the backend registry on a local Runtime (every node on
// 127.0.0.1). A new adapter is tested by adding it to the registry; nothing here names one.
//
// Each case: init; acquire (lease, token only with the capability, tokens growing); a held
// lock as a definite error (11) for another client; release; extend where supported; an
// indefinite outcome while every server is paused, and a usable client after; a `lost` event
// where the library has one (and none invented where it has not); the promise of every grant
// and a `renewed` event where the library renews by itself; pause-after-send and its
// `paused` event where the registry says the adapter can (and none where not); the adapter
// inside the test's process group and under a clock offset from libfcclock.so.
//
// Without a server program, the adapter's interpreter or its dependencies a case is skipped,
// except under CI, where it fails: a suite that skips itself there would pass vacuously.
#include <chrono>

#include "tests/adapters/conformance_fixture.h"
#include "tests/support/deadline.h"

namespace fencecheck {
namespace {

TEST_P(AdapterConformanceTest, InitNamesTheLibraryItsVersionCapabilitiesAndClock) {
  const std::int64_t before = wall_ms();
  AdapterLockClient& a = client("c1");
  const std::int64_t after = wall_ms();
  nlohmann::json init = a.init_reply();
  EXPECT_EQ(init.value("type", ""), "init_ok") << init.dump();
  ASSERT_TRUE(init.contains("library") && init["library"].is_string()) << init.dump();
  EXPECT_EQ(init["library"], adapter_->library) << "the library must call itself what the registry says";
  ASSERT_TRUE(init.contains("version") && init["version"].is_string()) << init.dump();
  EXPECT_EQ(init["version"], adapter_->version) << "the registry pins another version than the adapter runs";
  ASSERT_TRUE(init.contains("capabilities") && init["capabilities"].is_array()) << init.dump();
  for (const auto& cap : init["capabilities"]) {
    ASSERT_TRUE(cap.is_string()) << init.dump();
    const std::string c = cap.get<std::string>();
    EXPECT_TRUE(c == "token" || c == "extend" || c == "auto_renew" || c == "lost_event" || c == "pause_after_send")
        << "capability \"" << c << "\" is not one of PROTOCOL.md's";
  }
  ASSERT_TRUE(init.contains("wall_clock_ms") && init["wall_clock_ms"].is_number_integer()) << init.dump();
  const std::int64_t clock = init["wall_clock_ms"].get<std::int64_t>();
  EXPECT_GE(clock, before - 3000) << "the adapter's wall clock is behind the test's";
  EXPECT_LE(clock, after + 3000) << "the adapter's wall clock is ahead of the test's";
}

TEST_P(AdapterConformanceTest, AcquireGrantsALeaseAndATokenOnlyWithTheCapability) {
  AdapterLockClient& a = client("c1");
  AdapterLockClient& b = client("c2");
  const auto asked = std::chrono::steady_clock::now();
  LockResult g1 = a.acquire("k", kLongTtl);
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - asked);
  ASSERT_EQ(g1.outcome, Outcome::kOk) << describe(g1);
  ASSERT_TRUE(g1.grant);
  EXPECT_TRUE(g1.error.empty()) << g1.error;
  EXPECT_EQ(g1.grant->key, "k");
  EXPECT_FALSE(g1.grant->owner.empty()) << "a grant without a lease";
  EXPECT_EQ(g1.grant->token.has_value(), a.can("token"))
      << describe(g1) << ": a token is there exactly when the adapter has capability \"token\"";
  // The promise (PROTOCOL.md, valid_ms): every adapter here can say one, a validity counted
  // from the request's receipt, or what the lock lives by. A library that retries its SET
  // counts the lease from the attempt that took, which may start a few ms after the receipt
  // (CI, 2026-12-04: 10004 for a 10000 ms ttl); never later than the reply, though.
  ASSERT_TRUE(g1.grant->promise.has_value()) << describe(g1) << ": acquire_ok without valid_ms";
  if (const std::optional<std::int64_t> valid = g1.grant->promise->valid_ms) {
    EXPECT_GT(*valid, 0) << "an uncontended grant promised nothing";
    EXPECT_LE(*valid, (kLongTtl + took).count()) << "a promise beyond the ttl asked plus the acquire's time (" << took.count() << " ms)";
  } else {
    EXPECT_FALSE(g1.grant->promise->bound.empty()) << "valid_ms null without a bound saying what the lock lives by";
  }
  std::cout << "[ " << adapter_->name << " ] promise " << g1.grant->promise->to_json().dump() << "\n";

  LockResult r1 = a.release(*g1.grant);
  ASSERT_EQ(r1.outcome, Outcome::kOk) << describe(r1);
  LockResult g2 = b.acquire("k", kLongTtl);
  ASSERT_EQ(g2.outcome, Outcome::kOk) << describe(g2);
  ASSERT_TRUE(g2.grant);
  EXPECT_FALSE(g2.grant->owner.empty());
  EXPECT_NE(g2.grant->owner, g1.grant->owner) << "two grants share a lease";
  EXPECT_EQ(g2.grant->token.has_value(), b.can("token")) << describe(g2);
  if (g1.grant->token && g2.grant->token) {
    EXPECT_GT(*g2.grant->token, *g1.grant->token) << "fencing tokens must grow from grant to grant";
  }
  EXPECT_EQ(b.release(*g2.grant).outcome, Outcome::kOk);
}

TEST_P(AdapterConformanceTest, HeldLockIsADefiniteErrorForAnotherClient) {
  AdapterLockClient& a = client("c1");
  AdapterLockClient& b = client("c2");
  LockResult ga = a.acquire("k", kLongTtl);
  ASSERT_EQ(ga.outcome, Outcome::kOk) << describe(ga);

  auto t0 = Clock::now();
  LockResult gb = b.acquire("k", kLongTtl);
  auto took = std::chrono::duration_cast<milliseconds>(Clock::now() - t0);
  EXPECT_EQ(gb.outcome, Outcome::kFail) << describe(gb);
  EXPECT_FALSE(gb.grant);
  EXPECT_NE(gb.error.find("error 11"), std::string::npos) << "not acquired in time is code 11: " << gb.error;
  EXPECT_LE(took, kAcquireTimeout + kSlack) << "the acquire waited far beyond its acquire timeout";
  std::cout << "[ " << adapter_->name << " ] a held lock refused after " << took.count() << " ms\n";

  // Not the owner: releasing another client's lease is definite too, and changes nothing.
  LockResult wrong = b.release(*ga.grant);
  EXPECT_EQ(wrong.outcome, Outcome::kFail) << describe(wrong);
  LockResult again = b.acquire("k", kLongTtl);
  EXPECT_EQ(again.outcome, Outcome::kFail) << "a stranger's release freed the lock: " << describe(again);
  EXPECT_EQ(a.release(*ga.grant).outcome, Outcome::kOk);
}

TEST_P(AdapterConformanceTest, ReleaseFreesTheLockOnce) {
  AdapterLockClient& a = client("c1");
  AdapterLockClient& b = client("c2");
  LockResult ga = a.acquire("k", kLongTtl);
  ASSERT_EQ(ga.outcome, Outcome::kOk) << describe(ga);
  LockResult ra = a.release(*ga.grant);
  EXPECT_EQ(ra.outcome, Outcome::kOk) << describe(ra);
  EXPECT_TRUE(ra.error.empty()) << ra.error;
  LockResult twice = a.release(*ga.grant);
  EXPECT_EQ(twice.outcome, Outcome::kFail) << "released twice: " << describe(twice);

  LockResult gb = b.acquire("k", kLongTtl);
  ASSERT_EQ(gb.outcome, Outcome::kOk) << "the lock stayed taken after its release: " << describe(gb);
  EXPECT_EQ(b.release(*gb.grant).outcome, Outcome::kOk);
}

TEST_P(AdapterConformanceTest, ExtendWhereSupported) {
  AdapterLockClient& a = client("c1");
  AdapterLockClient& b = client("c2");
  const milliseconds short_ttl = 2000ms;
  LockResult ga = a.acquire("k", short_ttl);
  ASSERT_EQ(ga.outcome, Outcome::kOk) << describe(ga);
  LockResult e = a.extend(*ga.grant, kLongTtl);
  if (!a.can("extend")) {
    EXPECT_EQ(e.outcome, Outcome::kFail) << describe(e);
    EXPECT_NE(e.error.find("not supported"), std::string::npos) << e.error;
    EXPECT_EQ(a.release(*ga.grant).outcome, Outcome::kOk);
    return;
  }
  ASSERT_EQ(e.outcome, Outcome::kOk) << describe(e);
  // Past the first ttl the extended lock still keeps others out.
  std::this_thread::sleep_for(short_ttl + 500ms);
  LockResult gb = b.acquire("k", kLongTtl);
  EXPECT_EQ(gb.outcome, Outcome::kFail) << "the extension did not hold: " << describe(gb);
  EXPECT_EQ(a.release(*ga.grant).outcome, Outcome::kOk) << "the extended lease could not be released";
}

TEST_P(AdapterConformanceTest, PausedServersGiveAnIndefiniteErrorThenTheClientRecovers) {
  AdapterLockClient& a = client("c1");
  LockResult warm = a.acquire("warm", kLongTtl);  // connections up before the pause
  ASSERT_EQ(warm.outcome, Outcome::kOk) << describe(warm);
  ASSERT_EQ(a.release(*warm.grant).outcome, Outcome::kOk);
  {
    PausedServers paused(*server_);
    auto t0 = Clock::now();
    LockResult r = a.acquire("k-paused", kLongTtl);
    auto took = std::chrono::duration_cast<milliseconds>(Clock::now() - t0);
    EXPECT_EQ(r.outcome, Outcome::kUnknown)
        << "an acquire the servers never answered may have happened: " << describe(r);
    EXPECT_FALSE(r.grant);
    EXPECT_LE(took, kOpTimeout + kReplyGrace + kSlack);
    std::cout << "[ " << adapter_->name << " ] acquire with every server paused: " << describe(r) << " after "
              << took.count() << " ms\n";
  }
  // Resumed: the same client (its adapter kept, or replaced after a missing reply) locks
  // again. Another key: the paused acquire may have taken k-paused once the servers woke.
  auto t0 = Clock::now();
  LockResult after = acquire_until_ok(a, "k-after", kLongTtl, 20s);
  ASSERT_EQ(after.outcome, Outcome::kOk) << "no acquire succeeded within 20 s of the resume: " << describe(after);
  std::cout << "[ " << adapter_->name << " ] first ok acquire "
            << std::chrono::duration_cast<milliseconds>(Clock::now() - t0).count() << " ms after the resume\n";
  EXPECT_EQ(a.release(*after.grant).outcome, Outcome::kOk);
}

// The holder's adapter stopped (as a paused client) until its lock expires (its session
// expires) and another client takes the key; then it runs again. A library with `lost_event`
// says so; one without must not invent it.
TEST_P(AdapterConformanceTest, LostEventOnlyWhereTheLibraryHasOne) {
  AdapterLockClient& a = client("c1");
  AdapterLockClient& b = client("c2");
  std::mutex mu;
  std::vector<LostEvent> lost;
  a.set_notice_listener([&](const LibraryNotice& n) {
    if (n.kind != LibraryNotice::Kind::kLost) return;
    std::lock_guard lock(mu);
    lost.push_back({n.key, n.owner, n.reason});
  });
  auto lost_count = [&] {
    std::lock_guard lock(mu);
    return lost.size();
  };
  const milliseconds ttl = 1000ms;
  LockResult ga = a.acquire("k", ttl);
  ASSERT_EQ(ga.outcome, Outcome::kOk) << describe(ga);
  const pid_t holder = a.pid();
  ASSERT_GT(holder, 0);
  auto t0 = Clock::now();
  {
    StoppedProcess stopped(holder);
    ASSERT_TRUE(stopped.stopped()) << "the adapter (pid " << holder << ") did not stop";
    LockResult gb = acquire_until_ok(b, "k", kLongTtl, 20s);
    ASSERT_EQ(gb.outcome, Outcome::kOk) << "the stopped holder's lock never expired: " << describe(gb);
    std::cout << "[ " << adapter_->name << " ] another client took the key "
              << std::chrono::duration_cast<milliseconds>(Clock::now() - t0).count() << " ms after the stop\n";
  }
  auto resumed = Clock::now();
  if (a.can("lost_event")) {
    EXPECT_TRUE(eventually([&] { return lost_count() > 0; }, 10s))
        << "the library has lost_event but said nothing within 10 s of the SIGCONT";
    std::cout << "[ " << adapter_->name << " ] lost "
              << std::chrono::duration_cast<milliseconds>(Clock::now() - resumed).count()
              << " ms after the SIGCONT\n";
    std::lock_guard lock(mu);
    ASSERT_FALSE(lost.empty());
    EXPECT_EQ(lost[0].key, "k");
    EXPECT_EQ(lost[0].owner, ga.grant->owner) << "the lost event names another lease";
    EXPECT_FALSE(lost[0].reason.empty());
  } else {
    // Longer than any measured delay of a real lost event (curator: 1.9 s).
    std::this_thread::sleep_for(3s);
    std::lock_guard lock(mu);
    EXPECT_TRUE(lost.empty()) << "a library without lost_event sent one: key " << lost[0].key << ", lease "
                              << lost[0].owner << ", reason " << lost[0].reason;
  }
}

// A library that renews by itself (auto_renew) says so after each renewal: `renewed` for the
// grant, with a validity no longer than the ttl, and the lock outlives its first ttl. (Without
// the capability a `renewed` breaks the adapter, which adapter_client_test covers.)
TEST_P(AdapterConformanceTest, RenewalsAreToldWhereTheLibraryRenews) {
  AdapterLockClient& a = client("c1");
  if (!a.can("auto_renew")) return;
  AdapterLockClient& b = client("c2");
  struct Told {
    std::mutex mu;
    std::vector<LibraryNotice> renewed;
  };
  auto told = std::make_shared<Told>();  // shared: a notice may still be told as the test ends
  a.set_notice_listener([told](const LibraryNotice& n) {
    std::lock_guard lock(told->mu);
    if (n.kind == LibraryNotice::Kind::kRenewed) told->renewed.push_back(n);
  });
  const milliseconds ttl = 1000ms;
  LockResult ga = a.acquire("k", ttl);
  ASSERT_EQ(ga.outcome, Outcome::kOk) << describe(ga);
  EXPECT_TRUE(eventually([&] {
    std::lock_guard lock(told->mu);
    return told->renewed.size() >= 2;
  }, 5s)) << "fewer than two renewed notices within 5 s of a " << ttl.count() << " ms grant";
  LockResult gb = b.acquire("k", kLongTtl);
  EXPECT_EQ(gb.outcome, Outcome::kFail) << "the renewed lock was taken past its first ttl: " << describe(gb);
  std::lock_guard lock(told->mu);
  const std::vector<LibraryNotice>& renewed = told->renewed;
  for (const LibraryNotice& n : renewed) {
    EXPECT_EQ(n.key, "k");
    EXPECT_EQ(n.owner, ga.grant->owner) << "the renewed event names another lease";
    EXPECT_GT(n.valid, 0ms);
    EXPECT_LE(n.valid, ttl);
  }
  if (!renewed.empty()) {
    std::cout << "[ " << adapter_->name << " ] renewed, valid " << renewed[0].valid.count() << " ms\n";
  }
}

// pause-after-send: the registry says which adapters can stop themselves after sending an
// acquire's lock commands, and those that say so do: the acquire takes the pause at least, its
// `paused` notice (key, ms) is told before it returns, and it says it paused; with nothing
// sent (every server down) it does not pause. Any other adapter's acquire says it did not,
// and no `paused` comes.
TEST_P(AdapterConformanceTest, PauseAfterSendWhereTheRegistrySaysSo) {
  AdapterLockClient& a = client("c1");
  PausedNotices paused(a);
  const bool pauses = adapter_->offers.has(Capability::kPausesInsideClient);
  EXPECT_EQ(a.can("pause_after_send"), pauses)
      << "the registry's kPausesInsideClient must match the adapter's capability pause_after_send";
  if (!pauses) {
    LockResult r = a.acquire("k", kLongTtl);
    EXPECT_EQ(r.outcome, Outcome::kOk) << describe(r);
    EXPECT_EQ(r.paused_after_send, 0ms);
    EXPECT_TRUE(paused.all().empty()) << "a paused notice from an adapter without the capability";
    return;
  }
  a.pause_next_acquire_after_send(1000ms);
  const auto start = Clock::now();
  LockResult r = paused.acquire("k", kLongTtl);
  const auto took = Clock::now() - start;
  EXPECT_GE(took, 1000ms) << "the adapter did not stop itself: " << describe(r);
  EXPECT_EQ(r.outcome, Outcome::kOk) << describe(r);
  EXPECT_EQ(r.paused_after_send, 1000ms) << "the acquire must say that it paused";
  std::vector<PausedNotices::Told> told = paused.all();
  ASSERT_EQ(told.size(), 1u) << "one paused notice per paused acquire";
  EXPECT_EQ(told[0].notice.key, "k");
  EXPECT_EQ(told[0].notice.pause, 1000ms);
  EXPECT_TRUE(told[0].before_return) << "the paused notice came after its acquire returned";
  // Only that acquire: the next is quick again, and says it did not pause.
  LockResult other = a.acquire("k2", kLongTtl);
  EXPECT_EQ(other.outcome, Outcome::kOk) << describe(other);
  EXPECT_EQ(other.paused_after_send, 0ms);
  EXPECT_EQ(paused.all().size(), 1u);

  // An armed acquire that writes no lock command (every server is down) does not pause, and
  // says so: no notice, paused_after_send 0 (the fault is then not applied).
  for (const std::string& n : server_->nodes()) server_->kill(n, test_deadline());
  std::this_thread::sleep_for(500ms);  // the library sees its links drop
  a.pause_next_acquire_after_send(1000ms);
  const auto down = Clock::now();
  LockResult none = paused.acquire("k3", kLongTtl);
  const auto none_took = std::chrono::duration_cast<milliseconds>(Clock::now() - down);
  std::cout << "[ " << adapter_->name << " ] armed acquire with every server down: " << describe(none) << " after "
            << none_took.count() << " ms\n";
  EXPECT_NE(none.outcome, Outcome::kOk) << describe(none);
  EXPECT_LT(none_took, 1000ms) << "the adapter paused although it sent nothing";
  EXPECT_EQ(none.paused_after_send, 0ms) << "nothing was sent, so nothing may count as paused";
  EXPECT_EQ(paused.all().size(), 1u) << "a paused notice for an acquire that sent nothing";
}

// A client fault reaches the adapter: it is in the test process's group (a pause or kill of
// the worker's group takes it too), and a clock offset from libfcclock.so shifts its clock.
TEST_P(AdapterConformanceTest, FaultsReachTheAdapter) {
  const fs::path lib = fs::path(FENCECHECK_BIN).parent_path() / "libfcclock.so";
  ASSERT_TRUE(fs::exists(lib)) << lib << " is not built";
  const fs::path clock_file = dir_ / "c1.clock";
  const std::int64_t offset_ns = 3600LL * 1000 * 1000 * 1000;
  {
    unsigned char bytes[8];
    const auto bits = static_cast<std::uint64_t>(offset_ns);
    for (int i = 0; i < 8; ++i) bytes[i] = static_cast<unsigned char>((bits >> (8 * i)) & 0xff);  // little-endian
    std::ofstream out(clock_file, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes), sizeof bytes);
    ASSERT_TRUE(out.good());
  }
  AdapterLockClient* shifted = nullptr;
  std::int64_t started = 0;
  {
    // The adapter inherits the environment; nothing else is started meanwhile.
    ScopedEnv preload("LD_PRELOAD", lib.string());
    ScopedEnv file("FENCECHECK_CLOCK_FILE", clock_file.string());
    started = wall_ms();
    shifted = &client("c1");
  }
  ASSERT_GT(shifted->pid(), 0);
  EXPECT_EQ(::getpgid(shifted->pid()), ::getpgrp()) << "the adapter is not in the worker's process group";
  nlohmann::json init = shifted->init_reply();
  ASSERT_TRUE(init.contains("wall_clock_ms") && init["wall_clock_ms"].is_number_integer()) << init.dump();
  const std::int64_t ahead = init["wall_clock_ms"].get<std::int64_t>() - started;
  EXPECT_GE(ahead, 3600 * 1000 - 1000) << "the clock offset did not reach the adapter";
  EXPECT_LE(ahead, 3600 * 1000 + 5000);
  // The library still locks with its clock an hour ahead of the servers'.
  LockResult g = shifted->acquire("k", kLongTtl);
  EXPECT_EQ(g.outcome, Outcome::kOk) << describe(g);
}

// Named by the adapter alone when it locks on one backend ("redis_py"), else by the pair
// ("tooz_redis").
INSTANTIATE_TEST_SUITE_P(Registry, AdapterConformanceTest, ::testing::ValuesIn(adapter_backend_pairs()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param;
                           const AdapterInfo* a = find_adapter(name.substr(0, name.find(':')));
                           if (a != nullptr && a->backends.size() == 1) name = a->name;
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace fencecheck
