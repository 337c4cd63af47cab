// The fixture of the redlock integration tests: real redis-server masters started by the
// backend's own LockServer under each runtime ("local", and "netns" when root, where every
// master has its own namespace and clients run inside c1's or c2's), clients made from
// the server's client_config(), and a direct look at each master's copy of a key.
//
// redis-server missing: the tests skip, except under CI=1, where they fail (the servers
// are installed there, and a suite that skips itself would pass vacuously).
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

#include "backends/redis/redis_connection.h"
#include "backends/redlock/redlock_backend.h"
#include "backends/registry.h"
#include "platform/run_state.h"
#include "platform/runtime_registry.h"
#include "tests/support/deadline.h"

namespace fencecheck::testing {

class RedlockTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    backend_ = find_backend("redlock");
    ASSERT_NE(backend_, nullptr) << "redlock is not registered";
    if (auto missing = missing_binary_message(*backend_)) {
      if (std::getenv("CI") != nullptr) FAIL() << *missing;
      GTEST_SKIP() << *missing;
    }
    if (GetParam() == "netns" && ::geteuid() != 0) GTEST_SKIP() << "netns needs root";
    dir_ = std::filesystem::temp_directory_path() / ("fc-redlock-test-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    runtime_->create({"n1", "n2", "n3", "n4", "n5", "c1", "c2"});
  }
  void TearDown() override {
    if (server_) server_->teardown(test_deadline());
    runtime_->destroy();
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  // Sets the server up with these --backend-opt pairs; returns how long setup() took.
  std::chrono::milliseconds start_server(const std::vector<std::string>& opts = {}) {
    server_ = backend_->make_server(resolve_backend_options(*backend_, opts));
    auto t0 = std::chrono::steady_clock::now();
    server_->setup(*runtime_, dir_ / ("nodes-" + std::to_string(++setups_)));
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0);
  }
  // A client of the running server; edit changes its config first (e.g. drop a stall).
  std::unique_ptr<LockClient> client(const std::function<void(nlohmann::json&)>& edit = {}) {
    nlohmann::json cfg = server_->client_config();
    if (edit) edit(cfg);
    return backend_->make_client(cfg, "c1");
  }
  // Runs a client call from a client node (inside its namespace under netns).
  LockResult from(const std::string& node, const std::function<LockResult()>& call) {
    LockResult r;
    runtime_->run_in(node, [&] { r = call(); });
    return r;
  }
  // Each master's value of key, in node order: "" when the key is absent, "?" when the
  // master did not answer.
  std::vector<std::string> copies(const std::string& key) {
    std::vector<std::string> out;
    const nlohmann::json config = server_->client_config();
    for (const auto& i : config["instances"]) {
      std::string v = "?";
      runtime_->run_in("c2", [&] {
        RedisConnection conn(i["host"], i["port"], std::chrono::milliseconds(300), std::chrono::milliseconds(300));
        RedisCommandResult r = conn.command({"GET", key});
        if (r.status != RedisCommandResult::Status::kReply) return;
        v = r.reply->type == REDIS_REPLY_STRING ? std::string(r.reply->str, r.reply->len) : "";
      });
      out.push_back(v);
    }
    return out;
  }
  // Sets key to value on the masters at these indices (0-based), as another client would.
  void plant(const std::string& key, const std::string& value, const std::vector<int>& which) {
    auto instances = server_->client_config()["instances"];
    for (int idx : which) {
      const auto& i = instances.at(idx);
      runtime_->run_in("c2", [&] {
        RedisConnection conn(i["host"], i["port"], std::chrono::milliseconds(300), std::chrono::milliseconds(300));
        ASSERT_EQ(conn.command({"SET", key, value, "PX", "60000"}).status, RedisCommandResult::Status::kReply);
      });
    }
  }

  const BackendInfo* backend_ = nullptr;
  std::unique_ptr<LockServer> server_;
  std::filesystem::path dir_;
  int setups_ = 0;
  RunState state_{RunState::new_run_id()};
  // Without root the netns case is skipped in SetUp; it still needs some runtime here.
  std::unique_ptr<Runtime> runtime_ = make_runtime(
      GetParam() == "netns" && ::geteuid() != 0 ? "local" : GetParam(), state_.run_id(), state_);
};

inline std::vector<std::string> repeated(const std::string& v, std::size_t n) {
  return std::vector<std::string>(n, v);
}

}  // namespace fencecheck::testing
