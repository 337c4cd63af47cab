// The fixture of the ZooKeeper integration tests: a real 3-node ensemble started through
// the registry's LockServer under one runtime (local, or netns when root), and lock
// clients that live on client nodes.
//
// Without java or the ZooKeeper jars a test is skipped, except under CI=1, where it fails:
// CI installs the servers, and a suite that skips itself there would pass vacuously.
#pragma once

#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <string>

#include "backends/registry.h"
#include "backends/zookeeper/zookeeper_lock_client.h"
#include "backends/zookeeper/zookeeper_server.h"
#include "platform/run_state.h"
#include "platform/runtime_registry.h"
#include "tests/support/deadline.h"

namespace fencecheck::testing {

class ZooKeeperEnsembleTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (auto problem = zookeeper_install_problem()) {
      if (std::getenv("CI") != nullptr) FAIL() << *problem << " (CI must run scripts/setup.sh)";
      GTEST_SKIP() << *problem;
    }
    if (GetParam() == "netns" && ::geteuid() != 0) GTEST_SKIP() << "netns needs root";
    dir_ = std::filesystem::temp_directory_path() / ("fc-zk-test-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    runtime_->create({"n1", "n2", "n3", "c1", "c2"});
    backend_ = find_backend("zookeeper");
    ASSERT_NE(backend_, nullptr);
  }
  void TearDown() override {
    // Clients close their sessions before the servers go (a close waits for an answer).
    clients_.clear();
    if (server_) server_->teardown(test_deadline());
    runtime_->destroy();
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  // Sets up the ensemble with these backend options; returns how long setup() took.
  std::chrono::milliseconds start_ensemble(const std::vector<std::string>& options = {}) {
    server_ = backend_->make_server(resolve_backend_options(*backend_, options));
    auto t0 = std::chrono::steady_clock::now();
    server_->setup(*runtime_, dir_ / "nodes");
    auto took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0);
    std::cout << "[ zookeeper ] " << GetParam() << ": ensemble ready after " << took.count() << " ms\n";
    return took;
  }

  // A client living on `node` (its library threads are born in the node's network, so
  // under netns they reach the servers the way a worker would), with the server's config
  // and the overrides given.
  ZooKeeperLockClient& client(const std::string& node, const nlohmann::json& overrides = nlohmann::json::object()) {
    nlohmann::json cfg = server_->client_config();
    cfg.update(overrides);
    std::unique_ptr<ZooKeeperLockClient> c;
    runtime_->run_in(node, [&] {
      c = std::make_unique<ZooKeeperLockClient>(ZooKeeperClientConfig::from_json(cfg), node);
    });
    clients_.push_back(std::move(c));
    return *clients_.back();
  }
  void drop_client(ZooKeeperLockClient& c) {
    for (auto& p : clients_) {
      if (p.get() == &c) p.reset();
    }
  }

  // Runs a client call inside `node`'s network: a session the call renews is born there.
  LockResult on(const std::string& node, const std::function<LockResult()>& call) {
    LockResult r;
    runtime_->run_in(node, [&] { r = call(); });
    return r;
  }

  std::filesystem::path dir_;
  RunState state_{RunState::new_run_id()};
  std::unique_ptr<Runtime> runtime_ = make_runtime(
      GetParam() == "netns" && ::geteuid() != 0 ? "local" : GetParam(), state_.run_id(), state_);
  const BackendInfo* backend_ = nullptr;
  std::unique_ptr<LockServer> server_;
  std::vector<std::unique_ptr<ZooKeeperLockClient>> clients_;
};

inline std::int64_t epoch_of(std::int64_t zxid) { return zxid >> 32; }

}  // namespace fencecheck::testing
