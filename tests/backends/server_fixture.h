// The fixture of a backend's integration tests: its real servers started by the backend's
// own LockServer under each runtime (the test's parameter: "local", and "netns" when root,
// where every server has its node's namespace and clients run inside theirs), and clients
// made from the servers' client_config(). A backend's fixture derives from it, naming the
// backend and the nodes every test creates.
//
// The backend's programs missing: the tests skip, except under CI=1, where they fail (the
// servers are installed there, and a suite that skips itself would pass vacuously).
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

#include "backends/registry.h"
#include "platform/run_state.h"
#include "platform/runtime_registry.h"
#include "tests/support/deadline.h"

namespace fencecheck::testing {

using Millis = std::chrono::milliseconds;

inline Millis since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration_cast<Millis>(std::chrono::steady_clock::now() - t0);
}

class BackendServerTest : public ::testing::TestWithParam<std::string> {
 protected:
  BackendServerTest(std::string backend, std::vector<std::string> nodes)
      : backend_name_(std::move(backend)), node_names_(std::move(nodes)) {}

  void SetUp() override {
    backend_ = find_backend(backend_name_);
    ASSERT_NE(backend_, nullptr) << backend_name_ << " is not registered";
    if (auto missing = missing_binary_message(*backend_)) {
      if (std::getenv("CI") != nullptr) FAIL() << *missing;
      GTEST_SKIP() << *missing;
    }
    if (GetParam() == "netns" && ::geteuid() != 0) GTEST_SKIP() << "netns needs root";
    dir_ = std::filesystem::temp_directory_path() /
           ("fc-" + backend_name_ + "-test-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    runtime_->create(node_names_);
  }
  void TearDown() override {
    if (server_) server_->teardown(test_deadline());
    runtime_->destroy();
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  // Sets the servers up with these --backend-opt pairs; returns how long setup() took.
  Millis start_server(const std::vector<std::string>& opts = {}) {
    server_ = backend_->make_server(resolve_backend_options(*backend_, opts));
    auto t0 = std::chrono::steady_clock::now();
    server_->setup(*runtime_, nodes_dir());
    return since(t0);
  }
  std::filesystem::path nodes_dir() const { return dir_ / "nodes"; }
  // A client of the running servers named name; edit changes its config first.
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

  std::string backend_name_;
  std::vector<std::string> node_names_;
  const BackendInfo* backend_ = nullptr;
  std::filesystem::path dir_;
  RunState state_{RunState::new_run_id()};
  // Without root the netns case is skipped in SetUp; it still needs some runtime here.
  std::unique_ptr<Runtime> runtime_ = make_runtime(
      GetParam() == "netns" && ::geteuid() != 0 ? "local" : GetParam(), state_.run_id(), state_);
  std::unique_ptr<LockServer> server_;
};

}  // namespace fencecheck::testing
