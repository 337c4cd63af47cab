// AdapterLockClient against the deliberately broken adapter (tests/adapters/broken, a
// protocol peer with no lock service behind it), and the adapter registry (label `unit`: no
// servers, a Python process per case). Every way an adapter can break its protocol throws
// AdapterBroken naming the adapter and quoting its stderr; a missing reply is an unknown
// outcome after which a fresh adapter serves; error codes map to fail or unknown; a pause
// after send counts only when the adapter's `paused` event says it began; acquire_ok's
// valid_ms and bound become the grant's promise, and `renewed` needs auto_renew.
#include "adapters/adapter_client.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "tests/adapters/broken/broken_adapter.h"
#include "tests/adapters/paused_notices.h"
#include "tests/runtime/test_util.h"
#include "tests/support/setup_sh.h"

namespace fencecheck {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

const fs::path kSource = FENCECHECK_SOURCE_DIR;

class BrokenAdapterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::access("/usr/bin/python3", X_OK) != 0) {
      if (std::getenv("CI") != nullptr) FAIL() << "/usr/bin/python3 is missing (CI must run scripts/setup.sh)";
      GTEST_SKIP() << "/usr/bin/python3 is missing";
    }
    char tmpl[] = "/tmp/fc-adapter-client-test-XXXXXX";
    dir_ = ::mkdtemp(tmpl);
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  // An adapter program: the broken adapter in `mode`, through a wrapper script.
  AdapterSettings settings(const std::string& mode) {
    fs::path run = testing::write_broken_adapter(dir_ / ("run-" + mode), kSource, mode);
    AdapterSettings s;
    s.adapter = find_adapter("redis-py");  // any entry: it only names the adapter in messages
    s.program = run;
    s.node = "c1";
    s.backend = "redis";
    s.endpoints = {"127.0.0.1:1"};
    s.log = dir_ / (mode + ".log");
    s.op_timeout = milliseconds(1500);
    s.init_timeout = milliseconds(3000);
    return s;
  }
  // The message AdapterBroken carries when `make` throws it; "" when it does not.
  template <class F>
  static std::string broken_message(F make) {
    try {
      make();
    } catch (const AdapterBroken& e) {
      return e.what();
    }
    return "";
  }
  fs::path dir_;
};

TEST_F(BrokenAdapterTest, InitCarriesTheAdaptersOptions) {
  AdapterSettings s = settings("ok");
  s.options = {{"lost_on", "lost"}};
  AdapterLockClient c(s);
  EXPECT_EQ(c.init_reply().value("options_seen", nlohmann::json()), nlohmann::json({{"lost_on", "lost"}}))
      << c.init_reply().dump();
  AdapterLockClient plain(settings("ok"));
  EXPECT_EQ(plain.init_reply().value("options_seen", nlohmann::json()), nlohmann::json::object())
      << "no --client-opt: an empty object, never absent";
}

TEST_F(BrokenAdapterTest, AWellBehavedPeerAnswersEveryOp) {
  AdapterLockClient c(settings("ok"));
  EXPECT_EQ(c.init_reply().value("type", ""), "init_ok");
  LockResult got = c.acquire("l0", milliseconds(1000));
  ASSERT_EQ(got.outcome, Outcome::kOk) << got.error;
  ASSERT_TRUE(got.grant.has_value());
  EXPECT_FALSE(got.grant->owner.empty());
  EXPECT_FALSE(got.grant->token.has_value()) << "the peer gives no token, and none may be invented";
  ASSERT_TRUE(got.grant->promise.has_value()) << "valid_ms null is a promise bound to something unsaid";
  EXPECT_FALSE(got.grant->promise->valid_ms.has_value());
  EXPECT_EQ(got.grant->promise->bound, "");
  EXPECT_EQ(c.release(*got.grant).outcome, Outcome::kOk);
  LockResult ext = c.extend(*got.grant, milliseconds(1000));
  EXPECT_EQ(ext.outcome, Outcome::kFail) << "no extend capability: not supported, definitely not done";
}

TEST_F(BrokenAdapterTest, NoInitOkWithinTheTimeoutNamesTheAdapterAndQuotesItsStderr) {
  std::string m = broken_message([&] { AdapterLockClient c(settings("no-init")); });
  EXPECT_NE(m.find("adapter redis-py"), std::string::npos) << m;
  EXPECT_NE(m.find("did not answer init within 3000 ms"), std::string::npos) << m;
  EXPECT_NE(m.find("broken adapter: mode=no-init"), std::string::npos) << m;
}

TEST_F(BrokenAdapterTest, GarbageOnStdoutIsABrokenAdapter) {
  AdapterLockClient c(settings("garbage"));
  std::string m = broken_message([&] { c.acquire("l0", milliseconds(1000)); });
  EXPECT_NE(m.find("wrote a line on stdout that is no protocol message: \"hello from the adapter\""), std::string::npos)
      << m;
  EXPECT_NE(m.find("broken adapter: mode=garbage"), std::string::npos) << m;
}

TEST_F(BrokenAdapterTest, AnExitMidOpIsABrokenAdapter) {
  AdapterLockClient c(settings("exit"));
  std::string m = broken_message([&] { c.acquire("l0", milliseconds(1000)); });
  EXPECT_NE(m.find("ended unprompted: it exited with status 3"), std::string::npos) << m;
}

TEST_F(BrokenAdapterTest, AReplyToAMessageNeverSentIsABrokenAdapter) {
  AdapterLockClient c(settings("bad-reply"));
  std::string m = broken_message([&] { c.acquire("l0", milliseconds(1000)); });
  EXPECT_NE(m.find("which was never sent"), std::string::npos) << m;
}

// A hang is no proof of a broken adapter (a paused client hangs too): the op is unknown, and
// the adapter is replaced by a fresh one for the next op.
TEST_F(BrokenAdapterTest, AMissingReplyIsUnknownAndTheAdapterIsReplaced) {
  AdapterLockClient c(settings("hang"));
  const int first = c.pid();
  LockResult r = c.acquire("l0", milliseconds(1000));
  EXPECT_EQ(r.outcome, Outcome::kUnknown);
  EXPECT_NE(r.error.find("did not answer acquire within 2000 ms (it was replaced)"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("broken adapter: mode=hang"), std::string::npos) << "the stderr is quoted: " << r.error;
  EXPECT_EQ(c.pid(), 0) << "the silent adapter is stopped at once";
  EXPECT_NE(::kill(first, 0), 0) << "the old adapter process must be gone (killed and reaped)";
  c.acquire("l0", milliseconds(1000));  // a fresh adapter, init'ed again
  EXPECT_NE(c.pid(), first);
}

// pause-after-send (PROTOCOL.md, `paused`): the pause is counted only when the adapter says
// it began, and its notice is told before the acquire returns; a `paused` that the protocol
// forbids is a broken adapter.
class PauseEventTest : public BrokenAdapterTest {
 protected:
  static constexpr milliseconds kPause{300};
  // A client in `mode`, its paused notices kept.
  AdapterLockClient& client(const std::string& mode) {
    paused_.reset();
    client_ = std::make_unique<AdapterLockClient>(settings(mode));
    paused_ = std::make_unique<PausedNotices>(*client_);
    return *client_;
  }
  LockResult armed_acquire(const std::string& key) {
    client_->pause_next_acquire_after_send(kPause);
    return paused_->acquire(key, milliseconds(1000));
  }
  std::vector<PausedNotices::Told> notices() { return paused_->all(); }
  std::unique_ptr<AdapterLockClient> client_;
  std::unique_ptr<PausedNotices> paused_;  // after client_: destroyed before it
};

TEST_F(PauseEventTest, APauseIsToldBeforeItsAcquireReturnsAndTheAcquireSaysItPaused) {
  client("pause");
  const auto t0 = std::chrono::steady_clock::now();
  LockResult r = armed_acquire("l0");
  EXPECT_GE(std::chrono::steady_clock::now() - t0, kPause);
  ASSERT_EQ(r.outcome, Outcome::kOk) << r.error;
  EXPECT_EQ(r.paused_after_send, kPause);
  std::vector<PausedNotices::Told> n = notices();
  ASSERT_EQ(n.size(), 1u);
  EXPECT_EQ(n[0].notice.key, "l0");
  EXPECT_EQ(n[0].notice.pause, kPause);
  EXPECT_TRUE(n[0].before_return) << "the paused notice must be told before its acquire returns";
  // The next acquire carries no pause, and says so.
  LockResult next = client_->acquire("l1", milliseconds(1000));
  ASSERT_EQ(next.outcome, Outcome::kOk) << next.error;
  EXPECT_EQ(next.paused_after_send, milliseconds(0));
  EXPECT_EQ(notices().size(), 1u);
}

TEST_F(PauseEventTest, AnArmedAcquireThatNeverPausedSaysSo) {
  client("no-pause");
  LockResult r = armed_acquire("l0");
  ASSERT_EQ(r.outcome, Outcome::kOk) << r.error;
  EXPECT_EQ(r.paused_after_send, milliseconds(0)) << "no paused event came: no pause happened";
  EXPECT_TRUE(notices().empty());
}

TEST_F(PauseEventTest, TwoPausedEventsInOneAcquireAreABrokenAdapterThatStillSaysItPaused) {
  client("pause-twice");
  milliseconds paused(0);
  std::string m;
  try {
    armed_acquire("l0");
  } catch (const AdapterBroken& e) {
    m = e.what();
    paused = e.paused_after_send;
  }
  EXPECT_NE(m.find("sent a second paused event in one acquire"), std::string::npos) << m;
  EXPECT_NE(m.find("broken adapter: mode=pause-twice"), std::string::npos) << m;
  EXPECT_EQ(paused, kPause) << "the first event was told: the broken acquire must agree";
  EXPECT_EQ(notices().size(), 1u);
}

TEST_F(PauseEventTest, APausedEventInAnAcquireWithoutPauseIsABrokenAdapter) {
  AdapterLockClient& c = client("pause-stray");
  std::string m = broken_message([&] { c.acquire("l0", milliseconds(1000)); });
  EXPECT_NE(m.find("sent a paused event while no acquire with pause_after_send_ms was in flight"), std::string::npos)
      << m;
  EXPECT_TRUE(notices().empty());
}

TEST_F(PauseEventTest, APausedEventAfterItsReplyIsABrokenAdapter) {
  client("pause-late");
  std::string m = broken_message([&] {
    armed_acquire("l0");  // its reply may be read before the event
    client_->acquire("l1", milliseconds(1000));
  });
  EXPECT_NE(m.find("sent a paused event while no acquire with pause_after_send_ms was in flight"), std::string::npos)
      << m;
  EXPECT_TRUE(notices().empty());
}

TEST_F(PauseEventTest, APausedEventWithoutTheCapabilityIsABrokenAdapter) {
  AdapterLockClient& c = client("pause-no-cap");
  std::string m = broken_message([&] { c.acquire("l0", milliseconds(1000)); });
  EXPECT_NE(m.find("sent a paused event without the pause_after_send capability"), std::string::npos) << m;
  EXPECT_TRUE(notices().empty());
}

// PROTOCOL.md, acquire_ok's valid_ms and bound: an integer is a validity, null a lock bound to
// what `bound` names, no member no promise at all. The promise mode's key picks the reply.
TEST_F(BrokenAdapterTest, AnAcquireOkCarriesThePromiseItsValidMsAndBoundSay) {
  AdapterLockClient c(settings("promise"));
  auto promise_of = [&](const std::string& key) -> std::optional<Promise> {
    LockResult r = c.acquire(key, milliseconds(1000));
    EXPECT_EQ(r.outcome, Outcome::kOk) << key << ": " << r.error;
    return r.grant ? r.grant->promise : std::nullopt;
  };
  std::optional<Promise> ms = promise_of("ms");
  ASSERT_TRUE(ms.has_value());
  EXPECT_EQ(ms->valid_ms, 1234);
  EXPECT_EQ(ms->bound, "");
  std::optional<Promise> session = promise_of("session");
  ASSERT_TRUE(session.has_value());
  EXPECT_EQ(session->valid_ms, std::nullopt);
  EXPECT_EQ(session->bound, "session");
  EXPECT_EQ(session->to_json(), (nlohmann::json{{"valid_ms", nullptr}, {"bound", "session"}}));
  std::optional<Promise> unsaid = promise_of("null");
  ASSERT_TRUE(unsaid.has_value()) << "valid_ms null without bound is still a promise of no time";
  EXPECT_EQ(unsaid->valid_ms, std::nullopt);
  EXPECT_EQ(unsaid->bound, "");
  EXPECT_EQ(promise_of("none"), std::nullopt) << "no valid_ms: the library cannot say";
}

TEST_F(BrokenAdapterTest, AValidMsNeitherIntegerNorNullIsABrokenAdapter) {
  AdapterLockClient c(settings("promise"));
  std::string m = broken_message([&] { c.acquire("bad-ms", milliseconds(1000)); });
  EXPECT_NE(m.find("answered acquire_ok with a valid_ms that is neither an integer nor null: "), std::string::npos)
      << m;
  EXPECT_NE(m.find("\"valid_ms\":\"soon\""), std::string::npos) << "the reply is quoted: " << m;
  EXPECT_NE(m.find("broken adapter: mode=promise"), std::string::npos) << m;
}

TEST_F(BrokenAdapterTest, ABoundThatIsNoStringIsABrokenAdapter) {
  AdapterLockClient c(settings("promise"));
  std::string m = broken_message([&] { c.acquire("bad-bound", milliseconds(1000)); });
  EXPECT_NE(m.find("answered acquire_ok with a bound that is no string: "), std::string::npos) << m;
  EXPECT_NE(m.find("\"bound\":5"), std::string::npos) << "the reply is quoted: " << m;
}

// `renewed` (PROTOCOL.md, "Events"): from an adapter with auto_renew it is a kRenewed notice
// for the grant its lease names; without the capability, or without an integer valid_ms, the
// adapter is broken.
TEST_F(BrokenAdapterTest, ARenewedEventIsToldAsARenewalOfItsGrant) {
  AdapterLockClient c(settings("renew"));
  std::mutex mu;
  std::vector<LibraryNotice> renewed;
  c.set_notice_listener([&](const LibraryNotice& n) {
    std::lock_guard lock(mu);
    if (n.kind == LibraryNotice::Kind::kRenewed) renewed.push_back(n);
  });
  LockResult r = c.acquire("l0", milliseconds(1000));
  ASSERT_EQ(r.outcome, Outcome::kOk) << r.error;
  ASSERT_TRUE(r.grant.has_value());
  EXPECT_TRUE(testing::eventually([&] {
    std::lock_guard lock(mu);
    return !renewed.empty();
  })) << "no renewed notice";
  c.set_notice_listener(nullptr);
  std::lock_guard lock(mu);
  ASSERT_EQ(renewed.size(), 1u);
  EXPECT_EQ(renewed[0].key, "l0");
  EXPECT_EQ(renewed[0].owner, r.grant->owner) << "the owner is the instance's prefix and the lease, as for lost";
  EXPECT_EQ(renewed[0].valid, milliseconds(700));
}

TEST_F(BrokenAdapterTest, ARenewedEventWithoutAutoRenewIsABrokenAdapter) {
  AdapterLockClient c(settings("renew-no-cap"));
  std::string m = broken_message([&] {
    c.acquire("l0", milliseconds(1000));  // its reply comes before the event
    c.acquire("l1", milliseconds(1000));
  });
  EXPECT_NE(m.find("sent a renewed event without the auto_renew capability: "), std::string::npos) << m;
  EXPECT_NE(m.find("broken adapter: mode=renew-no-cap"), std::string::npos) << m;
}

TEST_F(BrokenAdapterTest, ARenewedEventWithoutAnIntegerValidMsIsABrokenAdapter) {
  AdapterLockClient c(settings("renew-malformed"));
  std::string m = broken_message([&] {
    c.acquire("l0", milliseconds(1000));
    c.acquire("l1", milliseconds(1000));
  });
  EXPECT_NE(m.find("sent a renewed event without a key, a lease and an integer valid_ms: "), std::string::npos) << m;
}

TEST(AdapterRegistry, EveryAdapterHasItsFolderItsRunAndItsPackagesInstalledBySetup) {
  std::set<std::string> adapters = testing::setup_sh_packages(FENCECHECK_SOURCE_DIR, "adapters");
  ASSERT_FALSE(adapters.empty()) << "setup.sh's adapters=( … ) was not read";
  adapters.merge(testing::setup_sh_packages(FENCECHECK_SOURCE_DIR, "servers"));  // java comes with ZooKeeper
  std::set<std::string> names;
  for (const AdapterInfo& a : adapter_registry()) {
    EXPECT_TRUE(names.insert(a.name).second) << a.name;
    EXPECT_NE(a.name, kNativeClient);
    const fs::path folder = kSource / "adapters" / a.name;
    EXPECT_EQ(::access((folder / "run").c_str(), X_OK), 0) << folder << "/run must be executable";
    EXPECT_TRUE(fs::exists(folder / "README.md")) << a.name;
    EXPECT_TRUE(adapters.contains(a.interpreter.debian_package)) << a.name << ": " << a.interpreter.debian_package;
    EXPECT_FALSE(a.backends.empty()) << a.name;
    for (const auto& b : a.backends) EXPECT_NE(find_backend(b), nullptr) << a.name << ": " << b;
  }
  EXPECT_EQ(client_names().front(), kNativeClient);
  EXPECT_EQ(client_names().size(), adapter_registry().size() + 1);
}

TEST(AdapterRegistry, AnAdapterOnABackendItDoesNotFitIsOneSentenceNamingTheRightOne) {
  EXPECT_EQ(adapter_backend_problem("native", "postgres"), std::nullopt);
  EXPECT_EQ(adapter_backend_problem("curator", "zookeeper"), std::nullopt);
  auto p = adapter_backend_problem("node-redlock", "redis");
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(*p, "--client node-redlock (redlock 4.2.0) locks on backend redlock, not redis: use --backend redlock");
}

}  // namespace
}  // namespace fencecheck
