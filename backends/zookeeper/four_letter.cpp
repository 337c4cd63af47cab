#include "backends/zookeeper/four_letter.h"

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>

#include "platform/errors.h"
#include "platform/tcp.h"

namespace fencecheck {

using Clock = std::chrono::steady_clock;

std::optional<std::string> zk_four_letter(const std::string& address, std::uint16_t port,
                                          const std::string& word,
                                          std::chrono::milliseconds timeout) {
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
  while (sent < word.size()) {
    ssize_t n = ::send(fd.get(), word.data() + sent, word.size() - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<std::size_t>(n);
    } else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
      if (!wait_for_fd(fd.get(), POLLOUT, deadline)) return std::nullopt;
    } else {
      return std::nullopt;
    }
  }
  // The server answers and closes: read until EOF.
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

std::optional<std::string> zk_srvr_mode(const std::string& srvr_answer) {
  static const std::string kMode = "Mode: ";
  std::size_t at = srvr_answer.find(kMode);
  if (at == std::string::npos || (at > 0 && srvr_answer[at - 1] != '\n')) return std::nullopt;
  at += kMode.size();
  std::size_t end = srvr_answer.find_first_of("\r\n", at);
  std::string mode = srvr_answer.substr(at, end == std::string::npos ? std::string::npos : end - at);
  if (mode.empty()) return std::nullopt;
  return mode;
}

}  // namespace fencecheck
