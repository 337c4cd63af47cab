// A resource log that cannot be written stops the resource instead of being ignored: the
// store refuses every later access, the service answers INTERNAL, and `fencecheck
// resource` exits 3 naming the log, which the controller sees as an unprompted death.
// /dev/full stands in for a full disk: every write to it fails with ENOSPC.
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>

#include <grpcpp/grpcpp.h>

#include "harness/resource/fenced_store.h"
#include "harness/resource/resource_server.h"
#include "platform/errors.h"
#include "proto/resource.grpc.pb.h"

namespace fencecheck {
namespace {

using namespace std::chrono_literals;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::unique_ptr<proto::Resource::Stub> stub_for(const std::string& address) {
  return proto::Resource::NewStub(grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
}

grpc::Status write_once(proto::Resource::Stub& stub, const std::string& value, std::chrono::seconds deadline) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + deadline);
  ctx.set_wait_for_ready(true);  // the service may still be starting
  proto::WriteRequest req;
  req.set_key("k0");
  req.set_token(1);
  req.set_value_json(value);
  req.set_client("c1");
  proto::WriteReply reply;
  return stub.Write(&ctx, req, &reply);
}

TEST(ResourceLog, AFailedLineIsFatalToTheStore) {
  std::ofstream log("/dev/full");
  ASSERT_TRUE(log) << "cannot open /dev/full";
  std::int64_t now = 0;
  FencedStore store(ResourceMode::kFenced, log, [&] { return ++now; }, "/dev/full");
  try {
    store.write("k0", 1, "[1]", "c1");
    FAIL() << "a write the log could not hold was reported as done";
  } catch (const HarnessError& e) {
    EXPECT_TRUE(contains(e.what(), "cannot write /dev/full: No space left on device")) << e.what();
  }
  EXPECT_FALSE(store.log_error().empty());
  // Nothing more is applied: an access missing from the log could hide a stale write.
  EXPECT_THROW(store.read("k0", 1, "c1"), HarnessError);
  EXPECT_THROW(store.cas("k0", 1, "null", "[2]", "c1"), HarnessError);
}

TEST(ResourceLog, TheServiceAnswersInternalAndReportsTheFailure) {
  std::ofstream log("/dev/full");
  std::int64_t now = 0;
  FencedStore store(ResourceMode::kUnfenced, log, [&] { return ++now; }, "/dev/full");
  std::string reported;
  ResourceServer server(store, "127.0.0.1:0", [&](const std::string& why) { reported = why; });
  auto stub = stub_for("127.0.0.1:" + std::to_string(server.port()));
  grpc::Status st = write_once(*stub, "[1]", 10s);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INTERNAL) << st.error_message();
  EXPECT_TRUE(contains(st.error_message(), "/dev/full")) << st.error_message();
  EXPECT_TRUE(contains(reported, "cannot write /dev/full")) << reported;
  server.shutdown();
}

std::uint16_t free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

// The exit code of pid if it exits within timeout (a bound on a hang, not a speed check).
std::optional<int> wait_exit(pid_t pid, std::chrono::milliseconds timeout) {
  auto until = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) != pid) {
    if (std::chrono::steady_clock::now() > until) return std::nullopt;
    std::this_thread::sleep_for(10ms);
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST(ResourceLog, TheResourceProcessExitsThreeNamingTheLog) {
  const std::string address = "127.0.0.1:" + std::to_string(free_port());
  const std::string err_file =
      (std::filesystem::temp_directory_path() / ("fc-resource-log-" + std::to_string(::getpid()))).string();
  pid_t parent = ::getpid();
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    std::FILE* err = std::freopen(err_file.c_str(), "w", stderr);
    if (err == nullptr) ::_exit(126);
    ::execl(FENCECHECK_BIN, FENCECHECK_BIN, "resource", "--listen", address.c_str(), "--mode", "fenced",
            "--log", "/dev/full", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  auto stub = stub_for(address);
  grpc::Status st = write_once(*stub, "[1]", 20s);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INTERNAL) << st.error_message();
  std::optional<int> code = wait_exit(pid, 20s);
  if (!code) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  }
  std::ifstream in(err_file);
  std::string err((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::filesystem::remove(err_file);
  ASSERT_TRUE(code.has_value()) << "the resource went on serving after its log failed";
  EXPECT_EQ(*code, 3) << err;
  EXPECT_TRUE(contains(err, "cannot write /dev/full: No space left on device")) << err;
}

}  // namespace
}  // namespace fencecheck
