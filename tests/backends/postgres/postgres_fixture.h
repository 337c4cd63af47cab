// The fixture of the postgres integration tests: a real PostgreSQL server started by the
// backend's own LockServer under each runtime ("local", and "netns" when root, where the
// server has n1's namespace and clients run inside c1's or c2's), and clients made from the
// server's client_config().
//
// postgres missing: the tests skip, except under CI=1, where they fail (the servers are
// installed there, and a suite that skips itself would pass vacuously).
#pragma once

#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backends/postgres/process_tree.h"
#include "backends/registry.h"
#include "platform/os_util.h"
#include "platform/run_state.h"
#include "platform/runtime_registry.h"
#include "tests/support/deadline.h"

namespace fencecheck::testing {

using Millis = std::chrono::milliseconds;

inline Millis since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration_cast<Millis>(std::chrono::steady_clock::now() - t0);
}

class PostgresTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    backend_ = find_backend("postgres");
    ASSERT_NE(backend_, nullptr) << "postgres is not registered";
    if (auto missing = missing_binary_message(*backend_)) {
      if (std::getenv("CI") != nullptr) FAIL() << *missing;
      GTEST_SKIP() << *missing;
    }
    if (GetParam() == "netns" && ::geteuid() != 0) GTEST_SKIP() << "netns needs root";
    dir_ = std::filesystem::temp_directory_path() / ("fc-postgres-test-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    runtime_->create({"n1", "c1", "c2"});
  }
  void TearDown() override {
    if (server_) server_->teardown(test_deadline());
    runtime_->destroy();
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  // Sets the server up with these --backend-opt pairs; returns how long setup() took
  // (initdb, start, readiness, the lease table).
  Millis start_server(const std::vector<std::string>& opts = {}) {
    server_ = backend_->make_server(resolve_backend_options(*backend_, opts));
    auto t0 = std::chrono::steady_clock::now();
    server_->setup(*runtime_, nodes_dir());
    return since(t0);
  }
  std::filesystem::path nodes_dir() const { return dir_ / "nodes"; }
  // A client of the running server named name; edit changes its config first.
  std::unique_ptr<LockClient> client(const std::string& name,
                                     const std::function<void(nlohmann::json&)>& edit = {}) {
    nlohmann::json cfg = server_->client_config();
    cfg["command_timeout_ms"] = 500;
    cfg["connect_timeout_ms"] = 500;
    if (edit) edit(cfg);
    return backend_->make_client(cfg, name);
  }
  // Runs a client call from a client node (inside its namespace under netns).
  LockResult from(const std::string& node, const std::function<LockResult()>& call) {
    LockResult r;
    runtime_->run_in(node, [&] { r = call(); });
    return r;
  }
  // Every process of the server on n1: the spawned leader and everything below it.
  std::vector<pgproc::ProcId> server_processes() {
    std::vector<pgproc::ProcId> all;
    for (Process* p : server_->processes("n1")) {
      all.push_back({p->pid(), os::process_start_time(p->pid()).value_or(0)});
      for (const auto& child : pgproc::descendants(p->pid())) all.push_back(child);
    }
    return all;
  }

  const BackendInfo* backend_ = nullptr;
  std::filesystem::path dir_;
  RunState state_{RunState::new_run_id()};
  // Without root the netns case is skipped in SetUp; it still needs some runtime here.
  std::unique_ptr<Runtime> runtime_ = make_runtime(
      GetParam() == "netns" && ::geteuid() != 0 ? "local" : GetParam(), state_.run_id(), state_);
  std::unique_ptr<LockServer> server_;
};

}  // namespace fencecheck::testing
