// The fixture of the `fencecheck run` integration tests: a temporary store, the real
// binary run to completion or spawned as a child to be signalled, and lookups of the
// processes a run started. As root the runs use network namespaces; otherwise local.
#pragma once

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "platform/proc_stat.h"
#include "tests/integration/run_processes.h"
#include "tests/support/command.h"

namespace fencecheck::testing {

namespace fs = std::filesystem;
using nlohmann::json;

class RunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::system("command -v redis-server >/dev/null 2>&1 || test -x /usr/bin/redis-server") != 0) {
      // In CI the servers must be there: a suite that skips itself would pass vacuously.
      if (std::getenv("CI") != nullptr) FAIL() << "redis-server is not installed (CI must run scripts/setup.sh)";
      GTEST_SKIP() << "redis-server is not installed (scripts/setup.sh installs it)";
    }
    char tmpl[] = "/tmp/fc-run-test-XXXXXX";
    store_ = ::mkdtemp(tmpl);
    // mkdtemp makes it 0700; a server running as its own user (postgres) must traverse it.
    ::chmod(store_.c_str(), 0755);
  }
  void TearDown() override {
    if (!store_.empty()) fs::remove_all(store_);
  }

  CommandResult run(const std::string& args) {
    return run_command("timeout 300 " + std::string(FENCECHECK_BIN) + " run --store " + store_ + " " + args);
  }
  // Starts `fencecheck run --store <store> ARGS…` as a child (output in the store's
  // controller.log) and returns its pid, for tests that signal the controller.
  pid_t spawn_run(std::vector<std::string> args) const {
    args.insert(args.begin(), {FENCECHECK_BIN, "run", "--store", store_});
    pid_t pid = ::fork();
    if (pid == 0) {
      std::string out = store_ + "/controller.log";
      ::freopen(out.c_str(), "w", stdout);
      ::dup2(STDOUT_FILENO, STDERR_FILENO);
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execv(FENCECHECK_BIN, argv.data());
      ::_exit(127);
    }
    return pid;
  }
  // Runs `fencecheck run --store <store> ARGS…` to its end (killed after 300 s) as
  // spawn_run() does, watching its state file meanwhile: `run_id` names what this run made
  // (namespaces fc-<run_id>-…), so that a test looks for its own run's leftovers and not a
  // concurrent test's. Empty when the run never wrote a state file, as one refused before
  // anything starts (it records before it makes anything).
  struct TrackedRun {
    int code = -1;
    std::string out;  // the controller's output
    std::string run_id;
  };
  TrackedRun run_tracked(const std::vector<std::string>& args) const {
    TrackedRun r;
    const pid_t pid = spawn_run(args);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(300);
    int status = 0;
    while (::waitpid(pid, &status, WNOHANG) == 0) {
      if (r.run_id.empty()) r.run_id = run_id_of_controller(pid).value_or("");
      if (std::chrono::steady_clock::now() > deadline) ::kill(pid, SIGKILL);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (r.run_id.empty()) r.run_id = run_id_of_controller(pid).value_or("");  // a state file left behind
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.out = controller_log();
    return r;
  }
  // The network namespaces of run `run_id` (none for an empty id).
  static std::size_t namespaces_of_run(const std::string& run_id) {
    std::size_t n = 0;
    std::error_code ec;
    if (run_id.empty()) return 0;
    for (const auto& e : fs::directory_iterator("/run/netns", ec)) {
      n += e.path().filename().string().rfind("fc-" + run_id + "-", 0) == 0;
    }
    return n;
  }
  fs::path latest() const { return fs::canonical(fs::path(store_) / "latest"); }
  // The run directory of the (single) run in the store, once it exists.
  fs::path run_dir() const {
    fs::path config = first_file_named(store_, "config.json");
    return config.empty() ? fs::path() : config.parent_path();
  }
  // The first file called `name` under `root`, or an empty path. The run writes the tree
  // while this walks it (a temporary file renamed away under the iterator), so a step that
  // fails ends the walk instead of throwing; the caller polls again.
  static fs::path first_file_named(const fs::path& root, const std::string& name) {
    std::error_code ec;
    fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec);
    for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (it->path().filename() == name) return it->path();
    }
    return {};
  }
  std::size_t history_lines_containing(const std::string& text) const {
    std::ifstream in(run_dir() / "history.jsonl");
    std::size_t n = 0;
    for (std::string line; std::getline(in, line);) n += line.find(text) != std::string::npos;
    return n;
  }
  // Waits (up to `within`) until the run's history has `count` lines containing `text`.
  bool wait_for_history(const std::string& text, std::size_t count = 1,
                        std::chrono::seconds within = std::chrono::seconds(20)) const {
    for (int i = 0; i < within.count() * 20; ++i) {
      if (!run_dir().empty() && history_lines_containing(text) >= count) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }
  // The pid of the controller's child whose command line contains `text` (0 if none).
  static pid_t child_with(pid_t controller, const std::string& text) {
    for (const os::ProcStat& child : os::all_processes()) {
      if (child.ppid != controller) continue;
      std::ifstream cmd("/proc/" + std::to_string(child.pid) + "/cmdline");
      std::string argv((std::istreambuf_iterator<char>(cmd)), std::istreambuf_iterator<char>());
      for (char& c : argv) c = c == '\0' ? ' ' : c;
      if (argv.find(text) != std::string::npos) return child.pid;
    }
    return 0;
  }
  std::string controller_log() const {
    std::ifstream in(store_ + "/controller.log");
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }
  static int exit_code(pid_t pid) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  json results() const { return json::parse(std::ifstream(latest() / "results.json")); }
  // Every process group a run's state file recorded is gone (within 5 s each).
  static void expect_groups_gone(const json& state) {
    for (const auto& g : state["process_groups"]) {
      int pgid = g["pgid"];
      bool gone = false;
      for (int i = 0; i < 50 && !gone; ++i) {
        gone = ::kill(-pgid, 0) != 0;
        if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
      EXPECT_TRUE(gone) << "process group " << pgid << " survived";
    }
  }

  std::string store_;
};

}  // namespace fencecheck::testing
