// The fixture of the mariadb integration tests: real MariaDB servers started by the
// backend's own LockServer under each runtime ("local", and "netns" when root, where each
// server has its node's namespace and clients run inside c1's, c2's or c3's), and clients
// made from the server's client_config(). Nodes n1..n3 and c1..c3 exist in every test; a
// standalone server uses n1 alone.
//
// mariadbd missing: the tests skip, except under CI=1, where they fail (the servers are
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

#include "backends/mariadb/mariadb_connection.h"
#include "backends/registry.h"
#include "platform/run_state.h"
#include "platform/runtime_registry.h"
#include "tests/support/deadline.h"

namespace fencecheck::testing {

using Millis = std::chrono::milliseconds;

inline Millis since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration_cast<Millis>(std::chrono::steady_clock::now() - t0);
}

class MariadbTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    backend_ = find_backend("mariadb");
    ASSERT_NE(backend_, nullptr) << "mariadb is not registered";
    if (auto missing = missing_binary_message(*backend_)) {
      if (std::getenv("CI") != nullptr) FAIL() << *missing;
      GTEST_SKIP() << *missing;
    }
    if (GetParam() == "netns" && ::geteuid() != 0) GTEST_SKIP() << "netns needs root";
    dir_ = std::filesystem::temp_directory_path() / ("fc-mariadb-test-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    runtime_->create({"n1", "n2", "n3", "c1", "c2", "c3"});
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
    server_->setup(*runtime_, dir_ / "nodes");
    return since(t0);
  }
  // A client of the running servers named name (c1 uses n1's server, c2 n2's, …); edit
  // changes its config first.
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
  // One statement on a server node's server, from inside that node.
  MariadbResult sql(const std::string& node, const std::string& statement) {
    const nlohmann::json servers = server_->client_config().at("servers");
    std::size_t i = static_cast<std::size_t>(node.back() - '1');
    MariadbConnectParams p;
    p.host = servers.at(i).at("host").get<std::string>();
    p.port = servers.at(i).at("port").get<int>();
    p.connect_timeout = p.command_timeout = Millis(2000);
    MariadbResult r;
    runtime_->run_in(node, [&] { r = MariadbConnection(p).exec(statement); });
    return r;
  }
  // The first column of the first row of statement's result on node ("" when none).
  std::string value(const std::string& node, const std::string& statement) {
    MariadbResult r = sql(node, statement);
    EXPECT_EQ(r.status, MariadbResult::Status::kOk) << statement << ": " << r.error;
    return r.value().value_or("");
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
