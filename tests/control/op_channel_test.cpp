// The op channel's frames over a real socket pair: a round trip, and every way a receive
// can end without a frame (deadline, close, wake, an oversized or unparsable frame).
#include "harness/control/op_channel.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "harness/worker/op_listener.h"
#include "proto/worker.pb.h"

namespace fencecheck {
namespace {

using namespace std::chrono_literals;

OpDeadline in(std::chrono::milliseconds d) { return std::chrono::steady_clock::now() + d; }

// Non-blocking unless asked: a blocking socket without a receive timeout waits for ever.
struct Pair {
  UniqueFd a, b;
  explicit Pair(bool blocking = false) {
    int fds[2];
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | (blocking ? 0 : SOCK_NONBLOCK), 0, fds), 0);
    a.reset(fds[0]);
    b.reset(fds[1]);
  }
};

void write_raw(int fd, const std::string& bytes) {
  ASSERT_EQ(::write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
}

std::string length_prefix(std::uint32_t n) {
  std::string s(4, '\0');
  for (int i = 0; i < 4; ++i) s[static_cast<std::size_t>(i)] = static_cast<char>((n >> (8 * i)) & 0xff);
  return s;
}

TEST(OpChannel, AFrameRoundTripsAndAnEmptyMessageIsAFrameToo) {
  Pair p;
  std::string error;
  proto::InvokeRequest req;
  req.set_f("acquire");
  req.set_key("l0");
  req.set_ttl_ms(1000);
  ASSERT_EQ(send_frame(p.a.get(), req, in(1s), &error), FrameStatus::kOk) << error;
  proto::InvokeRequest got;
  ASSERT_EQ(receive_frame(p.b.get(), got, in(1s), &error), FrameStatus::kOk) << error;
  EXPECT_EQ(got.f(), "acquire");
  EXPECT_EQ(got.key(), "l0");
  EXPECT_EQ(got.ttl_ms(), 1000);
  proto::InvokeReply ok;  // type OK, nothing else: serializes to zero bytes
  ASSERT_EQ(send_frame(p.b.get(), ok, in(1s), &error), FrameStatus::kOk) << error;
  proto::InvokeReply reply;
  reply.set_type(proto::InvokeReply::FAIL);
  ASSERT_EQ(receive_frame(p.a.get(), reply, in(1s), &error), FrameStatus::kOk) << error;
  EXPECT_EQ(reply.type(), proto::InvokeReply::OK);
}

TEST(OpChannel, AFrameLargerThanOneReadArrivesWhole) {
  Pair p;
  std::string error;
  proto::InvokeRequest req;
  req.set_value_json(std::string(200'000, 'x'));
  std::thread writer([&] { EXPECT_EQ(send_frame(p.a.get(), req, in(5s), &error), FrameStatus::kOk); });
  proto::InvokeRequest got;
  std::string rerror;
  EXPECT_EQ(receive_frame(p.b.get(), got, in(5s), &rerror), FrameStatus::kOk) << rerror;
  writer.join();
  EXPECT_EQ(got.value_json().size(), 200'000u);
}

TEST(OpChannel, NoReplyByTheDeadlineIsATimeout) {
  Pair p;
  std::string error;
  proto::InvokeReply reply;
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(receive_frame(p.a.get(), reply, in(100ms), &error), FrameStatus::kTimeout);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 100ms);
  // Half a frame, then nothing: still a timeout, never a frame.
  write_raw(p.b.get(), length_prefix(10) + "abc");
  EXPECT_EQ(receive_frame(p.a.get(), reply, in(100ms), &error), FrameStatus::kTimeout);
}

TEST(OpChannel, ABlockingSocketWaitsInItsReadButNeverPastTheDeadline) {
  Pair p(/*blocking=*/true);
  std::string error;
  proto::InvokeReply reply;
  set_receive_timeout(p.a.get(), 100ms);
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(receive_frame(p.a.get(), reply, in(100ms), &error), FrameStatus::kTimeout);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 100ms);
  // A receive timeout longer than the deadline: a partial frame is finished by poll, which
  // keeps to the deadline.
  set_receive_timeout(p.a.get(), 10s);
  write_raw(p.b.get(), length_prefix(10) + "abc");
  start = std::chrono::steady_clock::now();
  EXPECT_EQ(receive_frame(p.a.get(), reply, in(200ms), &error), FrameStatus::kTimeout);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  // And a frame that comes is read.
  Pair q(/*blocking=*/true);
  set_receive_timeout(q.a.get(), 1s);
  proto::InvokeReply sent;
  sent.set_error("late but in time");
  std::thread writer([&] {
    std::this_thread::sleep_for(50ms);
    std::string werror;
    EXPECT_EQ(send_frame(q.b.get(), sent, in(1s), &werror), FrameStatus::kOk);
  });
  EXPECT_EQ(receive_frame(q.a.get(), reply, in(1s), &error), FrameStatus::kOk) << error;
  writer.join();
  EXPECT_EQ(reply.error(), "late but in time");
}

TEST(OpChannel, APeerThatClosesIsClosedEvenMidFrame) {
  Pair p;
  std::string error;
  proto::InvokeReply reply;
  write_raw(p.b.get(), length_prefix(10) + "abc");
  p.b.reset();
  EXPECT_EQ(receive_frame(p.a.get(), reply, in(1s), &error), FrameStatus::kClosed);
  EXPECT_EQ(send_frame(p.a.get(), reply, in(1s), &error), FrameStatus::kClosed);  // and no SIGPIPE
}

TEST(OpChannel, AnOversizedLengthOrGarbageOrASecondFrameIsMalformed) {
  std::string error;
  proto::InvokeReply reply;
  {
    Pair p;
    write_raw(p.b.get(), length_prefix(kMaxOpFrameBytes + 1));
    EXPECT_EQ(receive_frame(p.a.get(), reply, in(1s), &error), FrameStatus::kMalformed);
    EXPECT_NE(error.find("over the limit"), std::string::npos) << error;
  }
  {
    Pair p;
    write_raw(p.b.get(), length_prefix(3) + "\xff\xff\xff");
    EXPECT_EQ(receive_frame(p.a.get(), reply, in(1s), &error), FrameStatus::kMalformed);
  }
  {
    Pair p;  // one op in flight per connection: bytes past the frame break the protocol
    write_raw(p.b.get(), length_prefix(0) + length_prefix(0));
    EXPECT_EQ(receive_frame(p.a.get(), reply, in(1s), &error), FrameStatus::kMalformed);
  }
}

TEST(OpChannel, AWakeFdEndsTheWait) {
  Pair p, wake;
  std::string error;
  proto::InvokeReply reply;
  write_raw(wake.b.get(), "x");
  EXPECT_EQ(receive_frame(p.a.get(), reply, in(10s), &error, wake.a.get()), FrameStatus::kClosed);
}

TEST(OpChannel, TheListenerServesEachConnectionAndNobodyListeningIsAnError) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("fc-op-" + std::to_string(::getpid()) + ".op")).string();
  std::string error;
  UniqueFd fd;
  EXPECT_EQ(connect_op_socket(path, in(100ms), &fd, &error), FrameStatus::kError);
  EXPECT_NE(error.find(path), std::string::npos) << error;
  {
    OpListener listener(path, [](const proto::InvokeRequest& req) {
      proto::InvokeReply r;
      r.set_error("saw " + req.key());
      return r;
    });
    for (const char* key : {"a", "b"}) {  // two connections, two ops on the second
      UniqueFd conn;
      ASSERT_EQ(connect_op_socket(path, in(1s), &conn, &error), FrameStatus::kOk) << error;
      for (int i = 0; i < (key[0] == 'a' ? 1 : 2); ++i) {
        proto::InvokeRequest req;
        req.set_key(key);
        ASSERT_EQ(send_frame(conn.get(), req, in(1s), &error), FrameStatus::kOk) << error;
        proto::InvokeReply reply;
        ASSERT_EQ(receive_frame(conn.get(), reply, in(1s), &error), FrameStatus::kOk) << error;
        EXPECT_EQ(reply.error(), std::string("saw ") + key);
      }
    }
  }
  EXPECT_FALSE(std::filesystem::exists(path));  // the listener removed its socket
}

TEST(OpChannel, StoppingTheListenerEndsAConnectionWaitingForItsNextOp) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("fc-op-stop-" + std::to_string(::getpid()) + ".op")).string();
  std::string error;
  UniqueFd conn;
  auto listener = std::make_unique<OpListener>(path, [](const proto::InvokeRequest&) { return proto::InvokeReply{}; });
  ASSERT_EQ(connect_op_socket(path, in(1s), &conn, &error), FrameStatus::kOk) << error;
  std::this_thread::sleep_for(50ms);  // its thread now waits in recv
  auto start = std::chrono::steady_clock::now();
  listener.reset();  // stops and joins: bounded only if the waiting read is ended
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
  proto::InvokeReply reply;
  set_receive_timeout(conn.get(), 1s);
  EXPECT_EQ(receive_frame(conn.get(), reply, in(1s), &error), FrameStatus::kClosed);
}

}  // namespace
}  // namespace fencecheck
