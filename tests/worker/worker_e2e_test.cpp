// The client side end to end: WorkerHandle → worker process (Unix socket) → redis-server
// and the fenced resource process (TCP), all real processes on 127.0.0.1.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "backends/redis/redis_lock_client.h"
#include "ops/ops.h"
#include "harness/control/worker_handle.h"
#include "platform/runtime.h"
#include "tests/backends/local_processes.h"
#include "tests/support/deadline.h"

namespace fencecheck {
namespace {

using namespace std::chrono_literals;
using testing::LocalProcesses;

constexpr auto kDeadline = 3000ms;

// A completion as the history records it: the value is the one the session writes
// (completion_value in ops/ops.h), as minified JSON text.
struct Completion {
  OpType type = OpType::kInfo;
  std::string value_json;
  std::string error;
  bool not_sent = false;
};

// Runs op `f` (a name of the op vocabulary, ops/ops.h) through the handle with the
// history's invoke value given as JSON text.
Completion call(WorkerHandle& w, const std::string& f, const std::string& key, const std::string& value_json,
                std::chrono::milliseconds ttl, std::chrono::milliseconds deadline) {
  std::optional<OpFn> op = find_op(f);
  if (!op) throw std::invalid_argument("no op " + f);
  nlohmann::json invoke = nlohmann::json::parse(value_json, nullptr, false);
  WorkerHandle::Completion c = w.invoke(*op, key, invoke, ttl, deadline);
  nlohmann::json recorded = completion_value(*op, c.type, invoke, c.ok_value);
  return {c.type, recorded.is_discarded() ? value_json : recorded.dump(), c.error, c.not_sent};
}

// A temp dir, a redis-server, a resource service and helpers to start workers.
class ClientSide : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("fc-worker-test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    resource_port_ = free_loopback_port();
  }
  void TearDown() override {
    processes_.stop_all();
    std::filesystem::remove_all(dir_);
  }

  void start_resource(const std::string& mode) {
    resource_ = &processes_.spawn(
        std::vector<std::string>{FC_SERVICES_BIN, "resource", "--listen",
                                 "127.0.0.1:" + std::to_string(resource_port_), "--mode", mode,
                                 "--log", (dir_ / "resource.jsonl").string()},
        (dir_ / "resource.log").string());
    ASSERT_TRUE(testing::eventually([&] { return tcp_connect_within("127.0.0.1", resource_port_, 200ms); }, 10s));
  }
  std::string resource_address() const { return "127.0.0.1:" + std::to_string(resource_port_); }

  // Starts worker `node` and returns a set-up handle to it.
  WorkerHandle& start_worker(const std::string& node) {
    std::string socket = (dir_ / (node + ".sock")).string();
    workers_.push_back(&processes_.spawn(
        std::vector<std::string>{FC_SERVICES_BIN, "worker", "--socket", socket, "--node", node},
        (dir_ / (node + ".log")).string()));
    handles_.push_back(std::make_unique<WorkerHandle>(socket));
    WorkerHandle& h = *handles_.back();
    h.wait_connected(10s);
    RedisClientConfig cfg;
    cfg.host = "127.0.0.1";
    cfg.port = redis_.port();
    cfg.command_timeout = 500ms;
    h.setup("redis", cfg.to_json(), resource_address(), node);
    return h;
  }
  Process& worker_process(std::size_t i) { return *workers_.at(i); }

  std::vector<nlohmann::json> resource_log() const {
    std::vector<nlohmann::json> out;
    std::ifstream in(dir_ / "resource.jsonl");
    for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
    return out;
  }

  std::filesystem::path dir_;
  std::uint16_t resource_port_ = 0;
  testing::RedisProcess redis_;
  LocalProcesses processes_;
  Process* resource_ = nullptr;
  std::vector<Process*> workers_;
  std::vector<std::unique_ptr<WorkerHandle>> handles_;
};

void expect_completion(const Completion& c, OpType type, const std::string& value) {
  EXPECT_EQ(c.type, type) << "error: " << c.error;
  EXPECT_EQ(c.value_json, value);
}

TEST_F(ClientSide, AcquireReadWriteRelease) {
  start_resource("fenced");
  WorkerHandle& w = start_worker("c1");
  expect_completion(call(w, "acquire", "k", "null", 5s, kDeadline), OpType::kOk,
                    R"({"token":1,"valid_ms":4999})");  // redis promises its lease, less 1 ms of rounding
  expect_completion(call(w, "read", "k", "null", 0ms, kDeadline), OpType::kOk, "null");
  const std::string write = R"({"token":1,"value":[7]})";
  expect_completion(call(w, "write", "k", write, 0ms, kDeadline), OpType::kOk, write);
  expect_completion(call(w, "read", "k", "null", 0ms, kDeadline), OpType::kOk, "[7]");
  expect_completion(call(w, "release", "k", R"({"token":1})", 0ms, kDeadline), OpType::kOk,
                    R"({"token":1})");
  Completion again = call(w, "release", "k", R"({"token":1})", 0ms, kDeadline);
  expect_completion(again, OpType::kFail, R"({"token":1})");
  EXPECT_EQ(again.error, "not held");

  auto log = resource_log();
  ASSERT_EQ(log.size(), 3u);
  EXPECT_EQ(log[1]["op"], "write");
  EXPECT_EQ(log[1]["token"], 1);
  EXPECT_EQ(log[1]["client"], "c1");
  EXPECT_TRUE(log[1]["accepted"].get<bool>());
}

// A grant left by a process the controller retired (its op ended info while it held the
// lock) is given back before the worker's next acquire of that lock; else a 60 s lease —
// or a ZooKeeper session, which never runs out — would keep the lock taken.
TEST_F(ClientSide, AnAbandonedGrantIsGivenBackBeforeTheNextAcquire) {
  start_resource("fenced");
  WorkerHandle& w = start_worker("c1");
  expect_completion(call(w, "acquire", "k", "null", 60s, kDeadline), OpType::kOk, R"({"token":1,"valid_ms":59999})");
  // No release: the holding process is gone. The worker's next process acquires again.
  expect_completion(call(w, "acquire", "k", "null", 60s, kDeadline), OpType::kOk, R"({"token":2,"valid_ms":59999})");
  WorkerHandle& other = start_worker("c2");
  Completion refused = call(other, "acquire", "k", "null", 60s, kDeadline);
  EXPECT_EQ(refused.type, OpType::kFail) << "the new grant is held: " << refused.error;
  expect_completion(call(w, "release", "k", R"({"token":2})", 0ms, kDeadline), OpType::kOk, R"({"token":2})");
}

TEST_F(ClientSide, StaleHolderWriteIsRefusedByTheFencedResource) {
  start_resource("fenced");
  WorkerHandle& a = start_worker("c1");
  WorkerHandle& b = start_worker("c2");
  expect_completion(call(a, "acquire", "k", "null", 200ms, kDeadline), OpType::kOk,
                    R"({"token":1,"valid_ms":199})");
  std::this_thread::sleep_for(300ms);  // a's lease expires: the article's GC pause
  expect_completion(call(b, "acquire", "k", "null", 5s, kDeadline), OpType::kOk,
                    R"({"token":2,"valid_ms":4999})");
  expect_completion(call(b, "write", "k", R"({"token":2,"value":[2]})", 0ms, kDeadline),
                    OpType::kOk, R"({"token":2,"value":[2]})");
  Completion stale = call(a, "write", "k", R"({"token":1,"value":[1]})", 0ms, kDeadline);
  expect_completion(stale, OpType::kFail, R"({"token":1,"value":[1]})");
  EXPECT_NE(stale.error.find("stale token 1"), std::string::npos) << stale.error;
  expect_completion(call(a, "release", "k", R"({"token":1})", 0ms, kDeadline), OpType::kFail,
                    R"({"token":1})");
  expect_completion(call(b, "read", "k", "null", 0ms, kDeadline), OpType::kOk, "[2]");
  auto log = resource_log();
  ASSERT_EQ(log.size(), 3u);
  EXPECT_FALSE(log[1]["accepted"].get<bool>());
  EXPECT_EQ(log[1]["client"], "c1");
}

TEST_F(ClientSide, UnfencedResourceAcceptsTheStaleWrite) {
  start_resource("unfenced");
  WorkerHandle& a = start_worker("c1");
  WorkerHandle& b = start_worker("c2");
  ASSERT_EQ(call(a, "acquire", "k", "null", 5s, kDeadline).type, OpType::kOk);
  expect_completion(call(b, "write", "k", R"({"token":9,"value":[9]})", 0ms, kDeadline),
                    OpType::kOk, R"({"token":9,"value":[9]})");
  expect_completion(call(a, "write", "k", R"({"token":1,"value":[1]})", 0ms, kDeadline),
                    OpType::kOk, R"({"token":1,"value":[1]})");
}

TEST_F(ClientSide, FrozenWorkerGivesInfoWithinTheDeadlineAndRecovers) {
  start_resource("fenced");
  WorkerHandle& w = start_worker("c1");
  ASSERT_EQ(call(w, "read", "k", "null", 0ms, kDeadline).type, OpType::kOk);
  ASSERT_TRUE(worker_process(0).pause(test_deadline()));
  auto start = std::chrono::steady_clock::now();
  Completion c = call(w, "acquire", "k", "null", 5s, 500ms);
  auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(c.type, OpType::kInfo);
  EXPECT_EQ(c.error, "timeout");
  EXPECT_EQ(c.value_json, "null");
  EXPECT_LT(took, 500ms + 200ms);
  Completion w2 = call(w, "write", "k", R"({"token":null,"value":[1]})", 0ms, 300ms);
  EXPECT_EQ(w2.type, OpType::kInfo);
  EXPECT_EQ(w2.value_json, R"({"token":null,"value":[1]})");
  worker_process(0).resume(test_deadline());
  // The acquire sent during the pause ran on resume; the worker serves new ops.
  EXPECT_EQ(call(w, "read", "k", "null", 0ms, kDeadline).type, OpType::kOk);
}

TEST_F(ClientSide, NewInvokeIsServedWhileAnOlderOneIsStuck) {
  start_resource("fenced");
  WorkerHandle& w = start_worker("c1");  // redis command timeout 500 ms
  ASSERT_EQ(call(w, "read", "k", "null", 0ms, kDeadline).type, OpType::kOk);
  ASSERT_TRUE(redis_.process().pause(test_deadline()));
  Completion stuck = call(w, "acquire", "k", "null", 5s, 100ms);
  EXPECT_EQ(stuck.type, OpType::kInfo);
  // The acquire is still waiting on redis inside the worker; a read must not queue behind it.
  auto start = std::chrono::steady_clock::now();
  Completion read = call(w, "read", "k", "null", 0ms, kDeadline);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 300ms);
  EXPECT_EQ(read.type, OpType::kOk) << read.error;
  // A lock op waits for the stuck one, which ends at redis's command timeout: unknown.
  Completion second = call(w, "acquire", "j", "null", 5s, kDeadline);
  redis_.process().resume(test_deadline());
  EXPECT_EQ(second.type, OpType::kInfo) << second.error;
  EXPECT_EQ(call(w, "acquire", "j2", "null", 5s, kDeadline).type, OpType::kOk);
}

TEST_F(ClientSide, ResourceDownIsFailAndFrozenResourceIsInfo) {
  WorkerHandle& w = start_worker("c1");  // no resource process yet: nothing listens
  Completion down = call(w, "write", "k", R"({"token":1,"value":[1]})", 0ms, kDeadline);
  EXPECT_EQ(down.type, OpType::kFail) << down.error;
  EXPECT_TRUE(down.not_sent) << "nothing reached the resource";
  start_resource("fenced");
  ASSERT_TRUE(testing::eventually(
      [&] { return call(w, "read", "k", "null", 0ms, kDeadline).type == OpType::kOk; }, 5s));
  resource_->pause(test_deadline());
  Completion frozen = call(w, "write", "k", R"({"token":1,"value":[1]})", 0ms, 5s);
  resource_->resume(test_deadline());
  EXPECT_EQ(frozen.type, OpType::kInfo);
  EXPECT_NE(frozen.error.find("timeout"), std::string::npos) << frozen.error;
}

TEST_F(ClientSide, BadRequestsAreClearFailures) {
  start_resource("fenced");
  WorkerHandle& w = start_worker("c1");
  Completion no_value = call(w, "write", "k", R"({"token":1})", 0ms, kDeadline);
  EXPECT_EQ(no_value.type, OpType::kFail);
  EXPECT_TRUE(no_value.not_sent);
  EXPECT_NE(no_value.error.find("write value must have \"value\""), std::string::npos) << no_value.error;
  Completion bad_token = call(w, "write", "k", R"({"token":"x","value":[]})", 0ms, kDeadline);
  EXPECT_EQ(bad_token.type, OpType::kFail);
  EXPECT_NE(bad_token.error.find("\"token\" must be an integer or null"), std::string::npos) << bad_token.error;
  Completion no_expect = call(w, "cas", "k", R"({"value":1})", 0ms, kDeadline);
  EXPECT_EQ(no_expect.type, OpType::kFail);
  EXPECT_TRUE(no_expect.not_sent);
  try {
    w.setup("no-such-backend", nlohmann::json::object(), resource_address(), "c1");
    FAIL() << "setup with an unknown backend must throw";
  } catch (const HarnessError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown backend \"no-such-backend\""),
              std::string::npos) << e.what();
  }
  // The failed setup left the working session in place.
  EXPECT_EQ(call(w, "read", "k", "null", 0ms, kDeadline).type, OpType::kOk);
}

TEST_F(ClientSide, CasSetsOnlyFromTheExpectedValue) {
  start_resource("unfenced");
  WorkerHandle& w = start_worker("c1");
  expect_completion(call(w, "cas", "k", R"({"expect":null,"value":1})", 0ms, kDeadline), OpType::kOk,
                    R"({"expect":null,"value":1})");
  Completion late = call(w, "cas", "k", R"({"expect":null,"value":2})", 0ms, kDeadline);
  EXPECT_EQ(late.type, OpType::kFail) << "definitely not applied";
  EXPECT_NE(late.error.find("value mismatch"), std::string::npos) << late.error;
  expect_completion(call(w, "read", "k", "null", 0ms, kDeadline), OpType::kOk, "1");
  auto log = resource_log();
  ASSERT_EQ(log.size(), 3u);
  EXPECT_EQ(log[0]["op"], "cas");
  EXPECT_EQ(log[1]["accepted"], false);
}

TEST_F(ClientSide, InvokeBeforeSetupFails) {
  std::string socket = (dir_ / "raw.sock").string();
  processes_.spawn({FC_SERVICES_BIN, "worker", "--socket", socket, "--node", "c9"});
  WorkerHandle h(socket);
  h.wait_connected(10s);
  Completion c = call(h, "read", "k", "null", 0ms, kDeadline);
  EXPECT_EQ(c.type, OpType::kFail);
  EXPECT_NE(c.error.find("not set up"), std::string::npos);
  struct stat st{};
  ASSERT_EQ(::stat(socket.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST_F(ClientSide, ShutdownAndSigtermExitCleanly) {
  start_resource("fenced");
  WorkerHandle& w = start_worker("c1");
  EXPECT_TRUE(w.shutdown(2s));
  EXPECT_EQ(testing::exit_code_within(worker_process(0), 5s), std::optional<int>(0));
  EXPECT_FALSE(std::filesystem::exists(w.socket_path()));
  Completion gone = call(w, "read", "k", "null", 0ms, 500ms);
  EXPECT_EQ(gone.type, OpType::kInfo);
  resource_->signal(SIGTERM, test_deadline());
  EXPECT_EQ(testing::exit_code_within(*resource_, 5s), std::optional<int>(0));
}

TEST_F(ClientSide, WaitConnectedTimesOutWithoutAWorker) {
  WorkerHandle h((dir_ / "nobody.sock").string());
  auto start = std::chrono::steady_clock::now();
  EXPECT_THROW(h.wait_connected(300ms), HarnessError);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 1s);
}

}  // namespace
}  // namespace fencecheck
