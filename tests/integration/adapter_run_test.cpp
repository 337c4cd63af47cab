// `fencecheck run --client NAME` end to end with real servers (label `integration`): a broken
// adapter is never a safe library (adapters/PROTOCOL.md, "A broken adapter…"), a library's
// `lost` and `renewed` events reach the history, every grant records the promise its adapter
// said (acquire_ok's valid_ms), the client is recorded for a rerun, and an adapter on a
// backend it does not fit is refused before anything starts.
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <iterator>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "adapters/registry.h"
#include "backends/lock_client.h"
#include "tests/integration/run_fixture.h"

namespace fencecheck::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string read_all(const fs::path& p) {
  std::ifstream in(p);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// What `fencecheck run --client name` would refuse to start over (a missing interpreter or
// dependencies), for the adapters in dir; nullopt when it can start.
std::optional<std::string> install_problem(const std::string& name, const fs::path& dir) {
  const AdapterInfo* a = find_adapter(name);
  if (a == nullptr) return "no adapter " + name + " in the registry";
  ::setenv("FENCECHECK_ADAPTERS_DIR", dir.c_str(), 1);
  std::optional<std::string> problem = adapter_install_problem(*a);
  ::unsetenv("FENCECHECK_ADAPTERS_DIR");
  return problem;
}

// The acquire ok values of a run's history: how many there are, and the first whose promise
// is not `ttl_ms` from the attempt that took: a library that retries its SET NX counts its
// PX from the last attempt, so valid_ms (counted from the request) is ttl_ms plus at most
// the acquire's own duration, and no bound — less the 1 ms Redis rounds an expiry to
// (kRedisExpiryResolution). "" when none.
struct Promises {
  std::size_t granted = 0;
  std::string first_other;
};
Promises promises_in(const fs::path& run_dir, std::int64_t ttl_ms) {
  Promises p;
  std::map<std::int64_t, std::int64_t> invoked;  // process -> its acquire's invoke, ns
  std::ifstream history(run_dir / "history.jsonl");
  for (std::string line; std::getline(history, line);) {
    json e = json::parse(line);
    if (e.value("f", "") != "acquire") continue;
    if (e.value("type", "") == "invoke") invoked[e["process"].get<std::int64_t>()] = e["time"].get<std::int64_t>();
    if (e.value("type", "") != "ok") continue;
    ++p.granted;
    const json& valid = e["value"].value("valid_ms", json());
    const std::int64_t took_ms = (e["time"].get<std::int64_t>() - invoked[e["process"].get<std::int64_t>()]) / 1'000'000;
    const bool as_promised = valid.is_number_integer() && valid.get<std::int64_t>() >= ttl_ms - 1 &&
                             valid.get<std::int64_t>() <= ttl_ms - 1 + took_ms + 1 && !e["value"].contains("bound");
    if (!as_promised && p.first_other.empty()) p.first_other = line;
  }
  return p;
}

// Runs with FENCECHECK_ADAPTERS_DIR pointing at a folder of its own, where redis-py is
// tests/adapters/broken/run in one FENCECHECK_BROKEN_MODE.
class BrokenAdapterRunTest : public RunTest, public ::testing::WithParamInterface<std::string> {
 protected:
  void SetUp() override {
    RunTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    char tmpl[] = "/tmp/fc-adapters-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    adapters_ = tmpl;
    fs::create_directories(adapters_ / "redis-py");
    const fs::path run = adapters_ / "redis-py" / "run";
    std::ofstream(run) << "#!/bin/sh\nFENCECHECK_BROKEN_MODE=" << GetParam() << " exec "
                       << (fs::path(FENCECHECK_SOURCE_DIR) / "tests/adapters/broken/run").string() << "\n";
    fs::permissions(run, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                             fs::perms::others_read | fs::perms::others_exec);
    ::chmod(adapters_.c_str(), 0755);
    if (auto problem = install_problem("redis-py", adapters_)) {
      if (std::getenv("CI") != nullptr) FAIL() << *problem << " (CI must run scripts/setup.sh)";
      GTEST_SKIP() << *problem;
    }
  }
  void TearDown() override {
    if (!adapters_.empty()) fs::remove_all(adapters_);
    RunTest::TearDown();
  }
  CommandResult run_broken(const std::string& args) {
    ::setenv("FENCECHECK_ADAPTERS_DIR", adapters_.c_str(), 1);
    CommandResult r = run(args);
    ::unsetenv("FENCECHECK_ADAPTERS_DIR");
    return r;
  }
  fs::path adapters_;
};

TEST_P(BrokenAdapterRunTest, IsNeverASafeLibrary) {
  const std::string& mode = GetParam();
  const std::string args = mode == "hang"
                               ? "--backend redis --client redis-py --nemesis none --op-timeout-ms 1500 "
                                 "--stall-ms 4000 --time-limit 8"
                               : "--backend redis --client redis-py --nemesis none --time-limit 5";
  CommandResult r = run_broken(args);
  // No init_ok: the workers cannot even start (a harness failure); otherwise undecided.
  EXPECT_EQ(r.code, mode == "no-init" ? 3 : 2) << r.out;
  EXPECT_NE(r.code, 0) << r.out;
  EXPECT_EQ(r.out.find("verdict: valid"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("adapter redis-py"), std::string::npos) << "the adapter is not named:\n" << r.out;
  if (mode == "hang") {
    EXPECT_NE(r.out.find("did not answer"), std::string::npos) << r.out;
  } else {
    EXPECT_NE(r.out.find("broken adapter: mode=" + mode), std::string::npos)
        << "its stderr is not quoted:\n" << r.out;
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, BrokenAdapterRunTest,
                         ::testing::Values("no-init", "garbage", "exit", "hang", "bad-reply"),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& c : name) c = c == '-' ? '_' : c;
                           return name;
                         });

using AdapterRunTest = RunTest;

// redis-semaphore's onLockLost, a paused holder's refresh finding its lock gone, is a
// `notice` line in the history, and so is each refresh of a hold longer than 0.8 ttl (`renewed`,
// with the validity it promised); every grant promised the lockTimeout (the run's 1000 ms
// ttl). The run remembers its client in config.json and repro.sh.
TEST_F(AdapterRunTest, RedisSemaphoreLostAndRenewedEventsReachTheHistory) {
  if (auto problem = install_problem("redis-semaphore", fs::path(FENCECHECK_BIN).parent_path() / "adapters")) {
    if (std::getenv("CI") != nullptr) FAIL() << *problem << " (CI must run scripts/setup.sh)";
    GTEST_SKIP() << *problem;
  }
  CommandResult r = run(
      "--client redis-semaphore --backend redis --nemesis pause-holder --pause-ms 2500 --hold-ms 1500 --time-limit 15");
  ASSERT_NE(r.code, 3) << r.out;
  ASSERT_FALSE(run_dir().empty()) << r.out;
  std::size_t lost = 0, renewed = 0;
  std::string bad_renewal;
  std::ifstream history(run_dir() / "history.jsonl");
  for (std::string line; std::getline(history, line);) {
    json e = json::parse(line);
    if (e.value("type", "") != "notice") continue;
    lost += e.value("f", "") == "lost";
    if (e.value("f", "") != "renewed") continue;
    ++renewed;
    const json& valid = e["value"]["valid_ms"];
    // <= 0 is possible: a refresh whose reply waited out a pause of the client.
    if (!valid.is_number_integer() || valid.get<std::int64_t>() > 1000) bad_renewal = line;
  }
  EXPECT_GE(lost, 1u) << "no lost notice in the history\n" << r.out;
  EXPECT_GE(renewed, 1u) << "no renewed notice in the history\n" << r.out;
  EXPECT_EQ(bad_renewal, "") << "a renewal promises an integer valid_ms, at most the lockTimeout";
  Promises p = promises_in(run_dir(), 1000);
  EXPECT_GE(p.granted, 1u) << r.out;
  EXPECT_EQ(p.first_other, "") << "every grant promises the lockTimeout, 1000 ms from its last attempt";
  json config = json::parse(std::ifstream(run_dir() / "config.json"));
  EXPECT_EQ(config["client"], "redis-semaphore") << config.dump(2);
  EXPECT_NE(read_all(run_dir() / "repro.sh").find("'--client' 'redis-semaphore'"), std::string::npos)
      << read_all(run_dir() / "repro.sh");
}

// A pause of a client is a pause of its library: the adapter, the worker's child in the
// worker's process group, is stopped while the nemesis holds the worker stopped. Its grants
// record redis-py's promise.
TEST_F(AdapterRunTest, APausedClientFreezesItsAdapterToo) {
  if (auto problem = install_problem("redis-py", fs::path(FENCECHECK_BIN).parent_path() / "adapters")) {
    if (std::getenv("CI") != nullptr) FAIL() << *problem << " (CI must run scripts/setup.sh)";
    GTEST_SKIP() << *problem;
  }
  pid_t controller = spawn_run({"--client", "redis-py", "--backend", "redis", "--nemesis", "pause-client",
                                "--pause-ms", "3000", "--nemesis-interval", "300", "--time-limit", "8"});
  ASSERT_TRUE(wait_for_history("\"f\":\"pause\"")) << controller_log();
  std::string node;
  {
    std::ifstream history(run_dir() / "history.jsonl");
    for (std::string line; std::getline(history, line) && node.empty();) {
      if (line.find("\"f\":\"pause\"") == std::string::npos) continue;
      node = json::parse(line)["value"]["targets"][0].get<std::string>();
    }
  }
  ASSERT_FALSE(node.empty());
  // The worker of that node (among this run's processes: a concurrent test's run has a
  // worker of that name too), and the adapter among its children: both stopped.
  pid_t worker = 0;
  for (const os::ProcStat& p : os::descendants_of(controller)) {
    std::string cmd = read_all("/proc/" + std::to_string(p.pid) + "/cmdline");
    for (char& c : cmd) c = c == '\0' ? ' ' : c;
    if (cmd.find(" worker ") != std::string::npos && cmd.find("--node " + node + " ") != std::string::npos) worker = p.pid;
  }
  ASSERT_NE(worker, 0) << "no worker for " << node;
  std::vector<os::ProcStat> children = os::descendants_of(worker);
  ASSERT_FALSE(children.empty()) << "the worker of " << node << " has no adapter child";
  for (const os::ProcStat& child : children) {
    EXPECT_TRUE(child.state == 'T' || child.state == 't')
        << "adapter process " << child.pid << " of " << node << " runs (state " << child.state
        << ") while its client is paused";
    EXPECT_EQ(::getpgid(child.pid), worker) << "the adapter is not in its worker's process group";
  }
  EXPECT_NE(exit_code(controller), 3) << controller_log();
  // redis-py promises the PX of its SET, the run's 1000 ms ttl, from the attempt that took.
  Promises p = promises_in(run_dir(), 1000);
  EXPECT_GE(p.granted, 1u) << controller_log();
  EXPECT_EQ(p.first_other, "") << "every redis-py grant promises 1000 ms from its last attempt";
}

// node-redlock locks on redlock's masters: with --backend redis it is bad input, refused
// before any server or run directory exists.
TEST_F(AdapterRunTest, AdapterOnABackendItDoesNotFitIsRefused) {
  CommandResult r = run("--client node-redlock --backend redis --nemesis none --time-limit 5");
  EXPECT_EQ(r.code, 3) << r.out;
  EXPECT_NE(r.out.find("--backend redlock"), std::string::npos) << r.out;
  EXPECT_TRUE(run_dir().empty()) << "a refused run left a run directory";
}

}  // namespace
}  // namespace fencecheck::testing
