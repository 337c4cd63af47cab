// AdapterLockClient against the deliberately broken adapter (tests/adapters/broken, a
// protocol peer with no lock service behind it), and the adapter registry (label `unit`: no
// servers, a Python process per case). Every way an adapter can break its protocol throws
// AdapterBroken naming the adapter and quoting its stderr; a missing reply is an unknown
// outcome after which a fresh adapter serves; error codes map to fail or unknown.
#include "adapters/adapter_client.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

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
    fs::path run = dir_ / ("run-" + mode);
    std::ofstream(run) << "#!/bin/sh\nFENCECHECK_BROKEN_MODE=" << mode << " exec " << (kSource / "tests/adapters/broken/run").string()
                       << "\n";
    fs::permissions(run, fs::perms::owner_all);
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

TEST_F(BrokenAdapterTest, AWellBehavedPeerAnswersEveryOp) {
  AdapterLockClient c(settings("ok"));
  EXPECT_EQ(c.init_reply().value("type", ""), "init_ok");
  LockResult got = c.acquire("l0", milliseconds(1000));
  ASSERT_EQ(got.outcome, Outcome::kOk) << got.error;
  ASSERT_TRUE(got.grant.has_value());
  EXPECT_FALSE(got.grant->owner.empty());
  EXPECT_FALSE(got.grant->token.has_value()) << "the peer gives no token, and none may be invented";
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
