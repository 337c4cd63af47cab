#include "harness/control/op_channel.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/time.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <cerrno>
#include <cstring>
#include <thread>
#include <vector>

namespace fencecheck {
namespace {

int ms_until(OpDeadline deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
  if (left.count() <= 0) return 0;
  return static_cast<int>(std::min<std::int64_t>(left.count() + 1, 60'000));  // +1: never wake early
}

std::string errno_text(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

// Waits until fd has `events` (kOk), wake_fd is readable (kClosed) or the deadline passes.
FrameStatus wait_for(int fd, short events, OpDeadline deadline, std::string* error, int wake_fd = -1) {
  for (;;) {
    pollfd fds[2] = {{fd, events, 0}, {wake_fd, POLLIN, 0}};
    const int timeout = ms_until(deadline);
    const int n = ::poll(fds, wake_fd >= 0 ? 2 : 1, timeout);
    if (n < 0) {
      if (errno == EINTR) continue;
      *error = errno_text("poll");
      return FrameStatus::kError;
    }
    if (wake_fd >= 0 && fds[1].revents != 0) return FrameStatus::kClosed;
    if (fds[0].revents != 0) return FrameStatus::kOk;  // readable, writable, hung up or in error
    if (std::chrono::steady_clock::now() >= deadline) return FrameStatus::kTimeout;
  }
}

}  // namespace

std::string op_socket_path(const std::string& control_socket) { return control_socket + ".op"; }

void set_receive_timeout(int fd, std::chrono::milliseconds timeout) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(timeout.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((timeout.count() % 1000) * 1000);
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

FrameStatus connect_op_socket(const std::string& path, OpDeadline deadline, UniqueFd* out, std::string* error) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof(addr.sun_path)) {
    *error = "op socket path too long: " + path;
    return FrameStatus::kError;
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  for (;;) {
    UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!fd.valid()) {
      *error = errno_text("socket");
      return FrameStatus::kError;
    }
    if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) == 0) {
      // Blocking from now on: receive_frame then waits in recv (set_receive_timeout).
      ::fcntl(fd.get(), F_SETFL, ::fcntl(fd.get(), F_GETFL) & ~O_NONBLOCK);
      *out = std::move(fd);
      return FrameStatus::kOk;
    }
    if (errno != EAGAIN && errno != EINTR) {
      *error = errno_text(("connect to " + path).c_str());
      return FrameStatus::kError;
    }
    // The listener's backlog is full: its process is frozen or busy accepting.
    if (std::chrono::steady_clock::now() >= deadline) return FrameStatus::kTimeout;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

FrameStatus send_frame(int fd, const google::protobuf::MessageLite& message, OpDeadline deadline,
                       std::string* error) {
  const std::size_t size = message.ByteSizeLong();
  if (size > kMaxOpFrameBytes) {
    *error = "a frame of " + std::to_string(size) + " bytes is over the limit";
    return FrameStatus::kMalformed;
  }
  std::string bytes(4 + size, '\0');
  for (int i = 0; i < 4; ++i) bytes[static_cast<std::size_t>(i)] = static_cast<char>((size >> (8 * i)) & 0xff);
  if (!message.SerializeToArray(bytes.data() + 4, static_cast<int>(size))) {
    *error = "the message does not serialize";
    return FrameStatus::kMalformed;
  }
  std::size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n >= 0) {
      sent += static_cast<std::size_t>(n);
      continue;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      FrameStatus s = wait_for(fd, POLLOUT, deadline, error);
      if (s != FrameStatus::kOk) return s;
      continue;
    }
    if (errno == EPIPE || errno == ECONNRESET) return FrameStatus::kClosed;
    *error = errno_text("send");
    return FrameStatus::kError;
  }
  return FrameStatus::kOk;
}

FrameStatus receive_frame(int fd, google::protobuf::MessageLite& message, OpDeadline deadline,
                          std::string* error, int wake_fd) {
  // One op is in flight per connection, so a frame never shares a read with the next one:
  // bytes past the frame are a protocol error.
  char small[4096];
  std::vector<char> large;
  char* buf = small;
  std::size_t capacity = sizeof(small), have = 0, want = 0;
  bool header_read = false;
  while (!header_read || have < want) {
    // Read first: a blocking socket waits right here (up to its SO_RCVTIMEO), which saves
    // a poll per op; a non-blocking one, or a read that timed out early, polls below.
    // Once part of a frame is in, the rest is waited for by poll, against the deadline.
    const ssize_t n = ::recv(fd, buf + have, capacity - have, have == 0 ? 0 : MSG_DONTWAIT);
    if (n == 0) return FrameStatus::kClosed;
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        if (std::chrono::steady_clock::now() >= deadline) return FrameStatus::kTimeout;
        FrameStatus s = wait_for(fd, POLLIN, deadline, error, wake_fd);
        if (s != FrameStatus::kOk) return s;
        continue;
      }
      if (errno == ECONNRESET) return FrameStatus::kClosed;
      *error = errno_text("recv");
      return FrameStatus::kError;
    }
    have += static_cast<std::size_t>(n);
    if (!header_read && have >= 4) {
      std::uint32_t length = 0;
      for (int i = 0; i < 4; ++i) length |= static_cast<std::uint32_t>(static_cast<unsigned char>(buf[i])) << (8 * i);
      if (length > kMaxOpFrameBytes) {
        *error = "a frame announces " + std::to_string(length) + " bytes, over the limit";
        return FrameStatus::kMalformed;
      }
      header_read = true;
      want = 4 + length;
      if (want > capacity) {
        large.assign(buf, buf + have);
        large.resize(want);
        buf = large.data();
        capacity = want;
      }
    }
    if (header_read && have > want) {
      *error = "more bytes than one frame";
      return FrameStatus::kMalformed;
    }
  }
  if (!message.ParseFromArray(buf + 4, static_cast<int>(want - 4))) {
    *error = "a frame that does not parse";
    return FrameStatus::kMalformed;
  }
  return FrameStatus::kOk;
}

}  // namespace fencecheck
