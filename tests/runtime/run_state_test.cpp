#include "platform/run_state.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sstream>

#include <gtest/gtest.h>

#include "harness/clean_command.h"
#include "platform/cleanup.h"
#include "platform/os_util.h"
#include "platform/runtime.h"
#include "tests/runtime/test_util.h"

namespace fencecheck {
namespace {

using testing::TempDir;

nlohmann::json read_state(const std::filesystem::path& file) {
  return nlohmann::json::parse(testing::read_text(file));
}

bool contains_line(const std::vector<std::string>& lines, const std::string& part) {
  for (const auto& l : lines) {
    if (l.find(part) != std::string::npos) return true;
  }
  return false;
}

// A `sleep 60` leading its own process group, as a crashed run's server would be.
int spawn_sleeper_group() {
  pid_t pid = ::fork();
  if (pid == 0) {
    ::setpgid(0, 0);
    ::execlp("sleep", "sleep", "60", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::setpgid(pid, pid);
  return pid;
}

TEST(RunStateTest, NewRunIdsAreSixHexDigitsAndDistinct) {
  std::string a = RunState::new_run_id(), b = RunState::new_run_id();
  EXPECT_TRUE(RunState::valid_run_id(a)) << a;
  EXPECT_NE(a, b);
  EXPECT_FALSE(RunState::valid_run_id("ABCDEF"));
  EXPECT_FALSE(RunState::valid_run_id("abc"));
  EXPECT_THROW(RunState("../etc"), HarnessError);
}

TEST(RunStateTest, FileFollowsEveryChangeAndIsRemovedAtTheEnd) {
  TempDir tmp;
  std::filesystem::path file;
  {
    RunState state(RunState::new_run_id());
    file = state.file();
    auto doc = read_state(file);
    EXPECT_EQ(doc["run_id"], state.run_id());
    EXPECT_EQ(doc["controller"]["pid"], ::getpid());
    EXPECT_EQ(doc["controller"]["start_time"], *os::process_start_time(::getpid()));

    state.add_netns("fc-" + state.run_id() + "-n1");
    state.add_path(tmp.path() / "scratch");
    int sleeper = spawn_sleeper_group();
    state.add_process_group(sleeper);
    doc = read_state(file);
    EXPECT_EQ(doc, state.snapshot());
    EXPECT_EQ(doc["netns"], nlohmann::json({"fc-" + state.run_id() + "-n1"}));
    EXPECT_EQ(doc["paths"][0], (tmp.path() / "scratch").string());
    EXPECT_EQ(doc["process_groups"][0]["pgid"], sleeper);
    EXPECT_EQ(doc["process_groups"][0]["start_time"], *os::process_start_time(sleeper));

    state.remove_netns("fc-" + state.run_id() + "-n1");
    state.remove_path(tmp.path() / "scratch");
    state.remove_process_group(sleeper);
    doc = read_state(file);
    EXPECT_TRUE(doc["netns"].empty());
    EXPECT_TRUE(doc["paths"].empty());
    EXPECT_TRUE(doc["process_groups"].empty());
    ::kill(sleeper, SIGKILL);
    ::waitpid(sleeper, nullptr, 0);
    // No temp file of the atomic writes is left beside the state file.
    for (const auto& e : std::filesystem::directory_iterator(RunState::state_dir())) {
      EXPECT_EQ(e.path().string().find(file.string() + ".tmp"), std::string::npos);
    }
  }
  EXPECT_FALSE(std::filesystem::exists(file));
}

TEST(RunStateTest, SecondStateWithTheSameIdIsRefused) {
  RunState first(RunState::new_run_id());
  EXPECT_THROW(RunState second(first.run_id()), HarnessError);
}

TEST(RunStateTest, DestructorRemovesWhatIsStillRecorded) {
  TempDir tmp;
  auto leftover = tmp.path() / "leftover";
  std::filesystem::create_directories(leftover / "sub");
  int sleeper = spawn_sleeper_group();
  {
    RunState state(RunState::new_run_id());
    state.add_path(leftover);
    state.add_process_group(sleeper);
  }
  EXPECT_FALSE(std::filesystem::exists(leftover));
  int status = 0;
  ASSERT_EQ(::waitpid(sleeper, &status, 0), sleeper);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
}

TEST(CleanRunsTest, RemovesWhatADeadControllerLeft) {
  TempDir tmp;
  auto leftover = tmp.path() / "run-dir";
  std::filesystem::create_directories(leftover);
  int sleeper = spawn_sleeper_group();
  std::string id = RunState::new_run_id();

  pid_t controller = testing::fork_child([&] {
    // The controller records its resources, then dies without cleaning up.
    auto* state = new RunState(id);
    state->add_path(leftover);
    state->add_process_group(sleeper);
  });
  ASSERT_EQ(::waitpid(controller, nullptr, 0), controller);
  auto file = RunState::state_dir() / (id + ".json");
  ASSERT_TRUE(std::filesystem::exists(file));
  // Just forked, under load it may not have reached its sleep yet.
  for (int i = 0; i < 500 && os::process_state(sleeper) != 'S'; ++i) ::usleep(2000);
  ASSERT_EQ(os::process_state(sleeper), 'S');

  CleanReport report = clean_runs(id, false);
  EXPECT_TRUE(report.errors.empty()) << report.errors.front();
  EXPECT_TRUE(contains_line(report.removed, "killed process group " + std::to_string(sleeper)));
  EXPECT_TRUE(contains_line(report.removed, "removed " + leftover.string()));
  EXPECT_FALSE(std::filesystem::exists(leftover));
  EXPECT_FALSE(std::filesystem::exists(file));
  int status = 0;
  ASSERT_EQ(::waitpid(sleeper, &status, 0), sleeper);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

  EXPECT_TRUE(clean_runs(id, false).removed.empty());  // nothing left the second time
}

TEST(CleanRunsTest, SkipsALiveControllerUnlessForced) {
  TempDir tmp;
  auto dir = tmp.path() / "live";
  std::filesystem::create_directories(dir);
  RunState state(RunState::new_run_id());
  state.add_path(dir);

  CleanReport report = clean_runs(state.run_id(), false);
  ASSERT_EQ(report.skipped.size(), 1u);
  EXPECT_NE(report.skipped[0].find(state.run_id()), std::string::npos);
  EXPECT_TRUE(std::filesystem::exists(dir));
  EXPECT_TRUE(std::filesystem::exists(state.file()));

  report = clean_runs(state.run_id(), true);
  EXPECT_TRUE(report.skipped.empty());
  EXPECT_FALSE(std::filesystem::exists(dir));
  EXPECT_FALSE(std::filesystem::exists(state.file()));
}

TEST(CleanRunsTest, RemovesTempFilesOfDeadWritersOnly) {
  std::string id = RunState::new_run_id();
  pid_t dead = testing::fork_child([] {});
  ::waitpid(dead, nullptr, 0);
  std::filesystem::create_directories(RunState::state_dir());
  auto abandoned = RunState::state_dir() / (id + ".json.tmp." + std::to_string(dead));
  auto in_progress = RunState::state_dir() / (id + ".json.tmp." + std::to_string(::getpid()));
  { std::ofstream(abandoned) << "{"; }
  { std::ofstream(in_progress) << "{"; }
  clean_runs(id, false);
  EXPECT_FALSE(std::filesystem::exists(abandoned));
  EXPECT_TRUE(std::filesystem::exists(in_progress));
  std::filesystem::remove(in_progress);
}

TEST(CleanRunsTest, RejectsABadRunId) {
  CleanReport report = clean_runs("not-an-id", false);
  ASSERT_EQ(report.errors.size(), 1u);
  EXPECT_NE(report.errors[0].find("not-an-id"), std::string::npos);
}

TEST(CleanRunsTest, ReportsAnUnreadableStateFile) {
  std::string id = RunState::new_run_id();
  auto file = RunState::state_dir() / (id + ".json");
  std::filesystem::create_directories(RunState::state_dir());
  { std::ofstream(file) << "{not json"; }
  CleanReport report = clean_runs(id, false);
  ASSERT_EQ(report.errors.size(), 1u);
  EXPECT_NE(report.errors[0].find(file.string()), std::string::npos);
  std::filesystem::remove(file);
}

// A stand-in `ip` first on PATH, running `script`, and a namespace file for it to act on
// (an empty file is all netns_exists looks at); both go at the end of the scope. Root only.
class FakeIp {
 public:
  explicit FakeIp(const std::string& script)
      : name_("fc-" + RunState::new_run_id() + "-n1"), old_path_(std::getenv("PATH") ? std::getenv("PATH") : "") {
    std::filesystem::create_directories("/run/netns");
    std::ofstream("/run/netns/" + name_) << "";
    std::ofstream(tmp_.path() / "ip") << "#!/bin/sh\n" << script;
    std::filesystem::permissions(tmp_.path() / "ip", std::filesystem::perms::owner_all);
    ::setenv("PATH", (tmp_.path().string() + ":" + old_path_).c_str(), 1);
  }
  ~FakeIp() {
    ::setenv("PATH", old_path_.c_str(), 1);
    std::error_code ec;
    std::filesystem::remove("/run/netns/" + name_, ec);
  }
  const std::string& name() const { return name_; }

 private:
  TempDir tmp_;
  std::string name_, old_path_;
};

// `clean --force` on a live run races the run's own teardown: the namespace may go
// between clean's look and its `ip netns del`. The stand-in plays the run: it removes the
// namespace's file and fails as the real `ip` then does. Gone is not an error.
TEST(CleanRunsTest, ANamespaceGoneMeanwhileIsNotAnError) {
  if (::geteuid() != 0) GTEST_SKIP() << "/run/netns is root's";
  FakeIp ip("rm -f \"/run/netns/$3\"\necho \"Cannot remove namespace file: No such file or directory\" >&2\nexit 1\n");
  bool deleted = true;
  EXPECT_NO_THROW(deleted = cleanup::delete_netns(ip.name()));
  EXPECT_FALSE(deleted) << "reported as deleted by clean although the run deleted it";
}

// A namespace that stays is an error, quoting `ip`.
TEST(CleanRunsTest, ANamespaceThatStaysIsAnError) {
  if (::geteuid() != 0) GTEST_SKIP() << "/run/netns is root's";
  FakeIp ip("echo 'Device or resource busy' >&2\nexit 1\n");
  try {
    cleanup::delete_netns(ip.name());
    FAIL() << "a namespace that is still there was taken for deleted";
  } catch (const HarnessError& e) {
    EXPECT_NE(std::string(e.what()).find(ip.name()), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("Device or resource busy"), std::string::npos) << e.what();
  }
}

TEST(CleanCommandTest, PrintsRemovalsAndExitsThreeOnErrors) {
  std::ostringstream out, err;
  EXPECT_EQ(run_clean("zzzzzz", false, "", out, err), 3);
  EXPECT_NE(err.str().find("bad run id 'zzzzzz'"), std::string::npos) << err.str();

  TempDir tmp;
  std::string id = RunState::new_run_id();
  pid_t controller = testing::fork_child([&] { (new RunState(id))->add_path(tmp.path()); });
  ::waitpid(controller, nullptr, 0);
  std::ostringstream out2, err2;
  EXPECT_EQ(run_clean(id, false, "", out2, err2), 0);
  EXPECT_NE(out2.str().find("removed " + tmp.path().string()), std::string::npos) << out2.str();
  EXPECT_EQ(err2.str(), "");
}

TEST(CleanCommandTest, SubcommandParsesItsOptions) {
  CLI::App app;
  add_clean_command(app);
  std::vector<std::string> bad = {"clean", "--run", "zzzzzz"};  // CLI11 wants them reversed
  std::reverse(bad.begin(), bad.end());
  try {
    app.parse(bad);
    FAIL() << "a bad run id did not fail the command";
  } catch (const CLI::RuntimeError& e) {
    EXPECT_EQ(e.get_exit_code(), 3);
  }
  CLI::App app2;
  add_clean_command(app2);
  std::vector<std::string> good = {"clean", "--force", "--run", RunState::new_run_id()};
  std::reverse(good.begin(), good.end());
  EXPECT_NO_THROW(app2.parse(good));
}

}  // namespace
}  // namespace fencecheck
