// The etcd tests' fixture (etcd_server_test.cpp, etcd_client_test.cpp): a 3-member etcd
// 3.4 cluster started through the registry's LockServer on the runtime the test names,
// with C++ gRPC clients made from its client config. Without etcd a test is skipped,
// except under CI=1, where it fails. Not thread-safe (one test at a time).
#pragma once

#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <thread>

#include "backends/etcd/etcd_backend.h"
#include "backends/etcd/etcd_connection.h"
#include "backends/etcd/etcd_keepalive.h"
#include "backends/etcd/etcd_lock_client.h"
#include "backends/registry.h"
#include "harness/run/fault_capabilities.h"
#include "nemesis/clock/node_clocks.h"
#include "platform/errors.h"
#include "platform/run_state.h"
#include "platform/runtime_registry.h"
#include "tests/runtime/test_util.h"
#include "tests/support/deadline.h"

namespace fencecheck::testing {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

class EtcdCluster : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (auto missing = missing_binary_message(etcd_backend_info())) {
      if (std::getenv("CI") != nullptr) FAIL() << *missing << " (CI must run scripts/setup.sh)";
      GTEST_SKIP() << *missing;
    }
    if (GetParam() == "netns" && ::geteuid() != 0) GTEST_SKIP() << "netns needs root";
    runtime_ = make_runtime(GetParam(), state_.run_id(), state_);
    runtime_->share(tmp_.path(), true);
    runtime_->create({"n1", "n2", "n3", "c1"});
  }
  void TearDown() override {
    clients_.clear();
    if (server_) server_->teardown(test_deadline());
    if (runtime_) runtime_->destroy();
  }

  void start_cluster(const std::vector<std::string>& options = {}) {
    const BackendInfo& etcd = *find_backend("etcd");
    server_ = etcd.make_server(resolve_backend_options(etcd, options));
    auto t0 = Clock::now();
    server_->setup(*runtime_, tmp_.path() / "nodes");
    std::cout << "[ etcd ] " << GetParam() << ": cluster ready after "
              << std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0).count() << " ms\n";
  }
  EtcdLockClient& client(const nlohmann::json& overrides = nlohmann::json::object()) {
    nlohmann::json cfg = server_->client_config();
    cfg.update(overrides);
    clients_.push_back(std::make_unique<EtcdLockClient>(EtcdClientConfig::from_json(cfg)));
    return *clients_.back();
  }
  EtcdConnection connection() { return EtcdConnection(EtcdClientConfig::from_json(server_->client_config()).endpoints); }
  // The lock key's create revision as a Range reads it; 0 when the key does not exist.
  static std::int64_t create_revision(EtcdConnection& conn, const std::string& key) {
    etcdserverpb::RangeRequest req;
    req.set_key(key);
    etcdserverpb::RangeResponse resp;
    for (int attempt = 0; attempt < 6; ++attempt) {
      if (conn.range(req, &resp, 1s).ok()) return resp.kvs().empty() ? 0 : resp.kvs(0).create_revision();
    }
    ADD_FAILURE() << "no member answered a Range";
    return -1;
  }
  static std::int64_t lease_of(const Grant& g) { return std::stoll(g.owner, nullptr, 16); }

  TempDir tmp_;
  RunState state_{RunState::new_run_id()};
  std::unique_ptr<Runtime> runtime_;
  std::unique_ptr<LockServer> server_;
  std::vector<std::unique_ptr<EtcdLockClient>> clients_;
};

using EtcdServerTest = EtcdCluster;
using EtcdClientTest = EtcdCluster;

}  // namespace fencecheck::testing
