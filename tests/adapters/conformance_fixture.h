// The fixture of the adapter conformance suite (conformance_test.cpp): real servers of an
// adapter's first backend on a local Runtime, AdapterLockClients of that adapter, and the
// helpers that pause servers, stop an adapter and set its environment, each undone when it
// goes out of scope. Included by conformance_test.cpp only.
#pragma once

#include "adapters/adapter_client.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cctype>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "adapters/registry.h"
#include "backends/registry.h"
#include "platform/proc_stat.h"
#include "platform/run_state.h"
#include "platform/runtime_registry.h"
#include "tests/adapters/paused_notices.h"
#include "tests/runtime/test_util.h"
#include "tests/support/deadline.h"

namespace fencecheck {

// Outcomes by name in GoogleTest's messages (found by argument-dependent lookup).
inline void PrintTo(Outcome o, std::ostream* os) {
  *os << (o == Outcome::kOk ? "kOk" : o == Outcome::kFail ? "kFail" : "kUnknown");
}

namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using testing::eventually;

constexpr milliseconds kOpTimeout{3000};
constexpr milliseconds kAcquireTimeout{300};
// AdapterLockClient waits this much beyond the op timeout for a late reply.
constexpr milliseconds kReplyGrace = AdapterLockClient::kReplyGrace;
// A ttl no case outlives by accident.
constexpr milliseconds kLongTtl{10000};
// What a definite answer may take beyond the acquire timeout: round trips, retry jitter.
constexpr milliseconds kSlack{2000};

const char* outcome_name(Outcome o) {
  switch (o) {
    case Outcome::kOk: return "ok";
    case Outcome::kFail: return "fail";
    case Outcome::kUnknown: return "unknown";
  }
  return "?";
}

std::string describe(const LockResult& r) {
  std::string s = outcome_name(r.outcome);
  if (r.grant) s += " lease=" + r.grant->owner + (r.grant->token ? " token=" + std::to_string(*r.grant->token) : "");
  if (!r.error.empty()) s += " error: " + r.error;
  return s;
}

std::int64_t wall_ms() {
  return std::chrono::duration_cast<milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// "adapter:backend" for every backend of every adapter: each pair is a case.
std::vector<std::string> adapter_backend_pairs() {
  std::vector<std::string> pairs;
  for (const AdapterInfo& a : adapter_registry()) {
    for (const std::string& b : a.backends) pairs.push_back(a.name + ":" + b);
  }
  return pairs;
}

// Backend options that keep the cases short: a session-based backend (ZooKeeper) is asked
// for a 3 s session, so a stopped holder loses it within ~4 s rather than the default 6-7.
std::vector<std::string> quick_backend_options(const BackendInfo& backend) {
  std::vector<std::string> options;
  for (const BackendOption& o : backend.options) {
    if (o.name == "session_timeout_ms") options.push_back("session_timeout_ms=3000");
    // A connection-bound lock (PostgreSQL, MariaDB) of a stopped holder ends with its idle
    // connection: the server's idle timeout, short.
    if (o.name == "idle_session_timeout_ms") options.push_back("idle_session_timeout_ms=3000");
    if (o.name == "wait_timeout_s") options.push_back("wait_timeout_s=3");
  }
  return options;
}

// Every server node of a backend paused (SIGSTOP) while it lives; resumed when it goes.
class PausedServers {
 public:
  explicit PausedServers(LockServer& server) : server_(server) {
    for (const std::string& n : server_.nodes()) {
      server_.pause(n, test_deadline());
      paused_.push_back(n);
    }
  }
  ~PausedServers() {
    for (const std::string& n : paused_) {
      try {
        server_.resume(n, test_deadline());
      } catch (const std::exception& e) {
        ADD_FAILURE() << "resuming " << n << ": " << e.what();
      }
    }
  }
  PausedServers(const PausedServers&) = delete;
  PausedServers& operator=(const PausedServers&) = delete;

 private:
  LockServer& server_;
  std::vector<std::string> paused_;
};

// A process stopped (SIGSTOP, and seen stopped) while this lives; SIGCONT when it goes.
class StoppedProcess {
 public:
  explicit StoppedProcess(pid_t pid) : pid_(pid) {
    ::kill(pid_, SIGSTOP);
    stopped_ = eventually([&] {
      auto st = os::read_proc_stat(pid_);
      return st && (st->state == 'T' || st->state == 't');
    }, 2000ms);
  }
  ~StoppedProcess() { ::kill(pid_, SIGCONT); }
  bool stopped() const { return stopped_; }
  StoppedProcess(const StoppedProcess&) = delete;
  StoppedProcess& operator=(const StoppedProcess&) = delete;

 private:
  pid_t pid_;
  bool stopped_ = false;
};

// Sets an environment variable while it lives; restores what was there before.
class ScopedEnv {
 public:
  ScopedEnv(std::string name, const std::string& value) : name_(std::move(name)) {
    if (const char* old = std::getenv(name_.c_str())) old_ = old;
    ::setenv(name_.c_str(), value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_.c_str(), old_->c_str(), 1);
    } else {
      ::unsetenv(name_.c_str());
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

struct LostEvent {
  std::string key, owner, reason;
};

class AdapterConformanceTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    // The adapters the build copied beside fencecheck, unless the caller points elsewhere.
    ::setenv("FENCECHECK_ADAPTERS_DIR", FENCECHECK_ADAPTERS_DIR, 0);
    // "tooz:redis": the adapter and one of its backends (every pair is a case).
    const std::string& pair = GetParam();
    const std::size_t colon = pair.find(':');
    ASSERT_NE(colon, std::string::npos) << pair;
    adapter_ = find_adapter(pair.substr(0, colon));
    ASSERT_NE(adapter_, nullptr) << pair;
    backend_ = find_backend(pair.substr(colon + 1));
    ASSERT_NE(backend_, nullptr) << "unknown backend in " << pair;
    ASSERT_TRUE(backend_->endpoints) << "backend " << backend_->name << " names no endpoints for adapters";
    std::optional<std::string> missing = missing_binary_message(*backend_);
    if (!missing) missing = adapter_install_problem(*adapter_);
    if (missing) {
      if (std::getenv("CI") != nullptr) FAIL() << *missing << " (CI must run scripts/setup.sh and build)";
      GTEST_SKIP() << *missing;
    }
    char tmpl[] = "/tmp/fc-adapter-test-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    ::chmod(dir_.c_str(), 0755);  // a server running as its own user must traverse it

    server_ = backend_->make_server(resolve_backend_options(*backend_, quick_backend_options(*backend_)));
    std::vector<std::string> nodes = server_->nodes();
    nodes.insert(nodes.end(), {"c1", "c2"});
    runtime_->create(nodes);
    auto t0 = Clock::now();
    server_->setup(*runtime_, dir_ / "nodes");
    std::cout << "[ " << adapter_->name << " ] backend " << backend_->name << " ready after "
              << std::chrono::duration_cast<milliseconds>(Clock::now() - t0).count() << " ms\n";
  }

  void TearDown() override {
    if (HasFailure()) {
      for (const fs::path& log : logs_) {
        std::cout << "--- " << log.string() << ":\n" << testing::read_text(log) << "---\n";
      }
    }
    clients_.clear();  // the adapters first: their sessions end while the servers still run
    if (server_) server_->teardown(test_deadline());
    runtime_->destroy();
    if (!dir_.empty()) {
      std::error_code ec;
      fs::remove_all(dir_, ec);
    }
  }

  AdapterSettings settings(const std::string& node) {
    AdapterSettings s;
    s.adapter = adapter_;
    s.node = node;
    s.backend = backend_->name;
    s.client_config = server_->client_config();
    s.endpoints = backend_->endpoints(s.client_config);
    s.log = dir_ / (node + "-" + std::to_string(logs_.size()) + ".adapter.log");
    s.op_timeout = kOpTimeout;
    s.acquire_timeout = kAcquireTimeout;
    s.options = resolve_client_options(adapter_->name, {});  // the defaults the registry declares
    logs_.push_back(s.log);
    return s;
  }
  // A started adapter for the client node (init answered), owned by the fixture.
  AdapterLockClient& client(const std::string& node) {
    clients_.push_back(std::make_unique<AdapterLockClient>(settings(node)));
    return *clients_.back();
  }

  // Acquires key until ok or the deadline passes; the last result.
  static LockResult acquire_until_ok(AdapterLockClient& c, const std::string& key, milliseconds ttl,
                                     milliseconds within) {
    auto deadline = Clock::now() + within;
    LockResult r = c.acquire(key, ttl);
    while (r.outcome != Outcome::kOk && Clock::now() < deadline) {
      std::this_thread::sleep_for(50ms);
      r = c.acquire(key, ttl);
    }
    return r;
  }

  const AdapterInfo* adapter_ = nullptr;
  const BackendInfo* backend_ = nullptr;
  fs::path dir_;
  RunState state_{RunState::new_run_id()};
  std::unique_ptr<Runtime> runtime_ = make_runtime("local", state_.run_id(), state_);
  std::unique_ptr<LockServer> server_;
  std::vector<std::unique_ptr<AdapterLockClient>> clients_;
  std::vector<fs::path> logs_;
};


}  // namespace
}  // namespace fencecheck
