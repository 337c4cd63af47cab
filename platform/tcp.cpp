#include "platform/tcp.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>

#include "platform/errors.h"
#include "platform/os_util.h"

namespace fencecheck {

using Clock = std::chrono::steady_clock;

bool wait_for_fd(int fd, short events, Clock::time_point deadline) {
  for (;;) {
    auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
    pollfd p{fd, events, 0};
    int n = ::poll(&p, 1, static_cast<int>(std::max<std::int64_t>(0, left.count())));
    if (n > 0) return true;
    if (n == 0 || errno != EINTR) return false;
  }
}

UniqueFd tcp_connect(const std::string& address, std::uint16_t port, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  if (::inet_pton(AF_INET, address.c_str(), &addr.sin_addr) != 1) {
    throw HarnessError("tcp_connect: '" + address + "' is not an IPv4 address");
  }
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd.valid()) throw HarnessError("socket: " + os::strerror_string(errno));
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) return fd;
  if (errno != EINPROGRESS || !wait_for_fd(fd.get(), POLLOUT, deadline)) return UniqueFd();
  int err = 0;
  socklen_t len = sizeof err;
  if (::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) return UniqueFd();
  return fd;
}

bool tcp_connect_within(const std::string& address, std::uint16_t port, std::chrono::milliseconds timeout) {
  return tcp_connect(address, port, timeout).valid();
}

std::uint16_t free_loopback_port() {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) throw HarnessError("socket: " + os::strerror_string(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    throw HarnessError("cannot find a free port on 127.0.0.1: " + os::strerror_string(errno));
  }
  return ntohs(addr.sin_port);
}

std::optional<std::string> tcp_exchange(const std::string& address, std::uint16_t port,
                                        const std::string& request, std::chrono::milliseconds timeout) {
  const Clock::time_point deadline = Clock::now() + timeout;
  // Non-blocking throughout, so that a paused server costs at most the timeout.
  UniqueFd fd;
  try {
    fd = tcp_connect(address, port, timeout);
  } catch (const HarnessError&) {
    return std::nullopt;  // not an IPv4 address, or no socket to be had
  }
  if (!fd.valid()) return std::nullopt;
  std::size_t sent = 0;
  while (sent < request.size()) {
    ssize_t n = ::send(fd.get(), request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<std::size_t>(n);
    } else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
      if (!wait_for_fd(fd.get(), POLLOUT, deadline)) return std::nullopt;
    } else {
      return std::nullopt;
    }
  }
  std::string answer;
  char buf[4096];
  while (true) {
    ssize_t n = ::recv(fd.get(), buf, sizeof buf, 0);
    if (n > 0) {
      answer.append(buf, static_cast<std::size_t>(n));
    } else if (n == 0) {
      return answer;
    } else if (errno == EAGAIN || errno == EINTR) {
      if (!wait_for_fd(fd.get(), POLLIN, deadline)) return std::nullopt;
    } else {
      return std::nullopt;
    }
  }
}

std::optional<std::string> http_ok_body(const std::string& answer) {
  // "HTTP/1.x 200 …\r\n…\r\n\r\nbody"
  if (answer.rfind("HTTP/1.", 0) != 0) return std::nullopt;
  const std::size_t space = answer.find(' ');
  if (space == std::string::npos || answer.compare(space + 1, 3, "200") != 0) return std::nullopt;
  const std::size_t blank = answer.find("\r\n\r\n");
  if (blank == std::string::npos) return std::nullopt;
  return answer.substr(blank + 4);
}

std::optional<std::string> http_get_ok_body(const std::string& address, std::uint16_t port, const std::string& path,
                                            std::chrono::milliseconds timeout) {
  std::optional<std::string> answer = tcp_exchange(address, port, "GET " + path + " HTTP/1.0\r\n\r\n", timeout);
  return answer ? http_ok_body(*answer) : std::nullopt;
}

}  // namespace fencecheck
