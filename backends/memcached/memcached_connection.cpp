#include "backends/memcached/memcached_connection.h"

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "platform/errors.h"
#include "platform/tcp.h"

namespace fencecheck {

MemcachedConnection::MemcachedConnection(std::string host, std::uint16_t port,
                                         std::chrono::milliseconds connect_timeout,
                                         std::chrono::milliseconds command_timeout)
    : host_(std::move(host)), port_(port), connect_timeout_(connect_timeout), command_timeout_(command_timeout) {}

std::string MemcachedConnection::endpoint() const { return host_ + ":" + std::to_string(port_); }

// memcached never writes unasked, so an idle connection that polls readable was closed by
// the server (a restart, an idle timeout): nothing sent on it could be answered. It is
// dropped for a new one before the request, which then counts as sent only once.
bool MemcachedConnection::closed_by_server() const {
  pollfd p{fd_.get(), POLLIN | POLLRDHUP, 0};
  return ::poll(&p, 1, 0) != 0;
}

bool MemcachedConnection::ensure_connected(std::string& error) {
  if (fd_.valid() && buffer_.empty() && closed_by_server()) fd_.reset();
  if (fd_.valid()) return true;
  try {
    fd_ = tcp_connect(host_, port_, connect_timeout_);
  } catch (const HarnessError& e) {  // a malformed address: nothing can be sent
    error = "cannot connect to memcached at " + endpoint() + ": " + e.what();
    return false;
  }
  if (!fd_.valid()) {
    error = "cannot connect to memcached at " + endpoint() + " within " + std::to_string(connect_timeout_.count()) +
            " ms";
    return false;
  }
  buffer_.clear();
  return true;
}

MemcachedReply MemcachedConnection::lost(const std::string& why) {
  fd_.reset();
  buffer_.clear();
  return {MemcachedReply::Status::kLost, "", why};
}

bool MemcachedConnection::send_all(const std::string& data, std::chrono::steady_clock::time_point deadline) {
  std::size_t sent = 0;
  while (sent < data.size()) {
    ssize_t n = ::send(fd_.get(), data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<std::size_t>(n);
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (!wait_for_fd(fd_.get(), POLLOUT, deadline)) return false;
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      return false;
    }
  }
  return true;
}

bool MemcachedConnection::read_line(std::string& line, std::chrono::steady_clock::time_point deadline,
                                    std::string& error) {
  for (;;) {
    if (auto end = buffer_.find("\r\n"); end != std::string::npos) {
      line = buffer_.substr(0, end);
      buffer_.erase(0, end + 2);
      return true;
    }
    char chunk[16384];
    ssize_t n = ::recv(fd_.get(), chunk, sizeof chunk, 0);
    if (n > 0) {
      buffer_.append(chunk, static_cast<std::size_t>(n));
    } else if (n == 0) {
      error = "connection to memcached at " + endpoint() + " lost: closed by the server";
      return false;
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      if (!wait_for_fd(fd_.get(), POLLIN, deadline)) {
        error = "timeout waiting for memcached at " + endpoint() + " (" + std::to_string(command_timeout_.count()) +
                " ms)";
        return false;
      }
    } else if (errno != EINTR) {
      error = "connection to memcached at " + endpoint() + " lost: " + std::strerror(errno);
      return false;
    }
  }
}

MemcachedReply MemcachedConnection::request(const std::string& request, std::string* value) {
  MemcachedReply r;
  if (!ensure_connected(r.error)) return r;
  const auto deadline = std::chrono::steady_clock::now() + command_timeout_;
  if (!send_all(request, deadline)) return lost("timeout or error sending to memcached at " + endpoint());
  std::string error;
  if (!read_line(r.line, deadline, error)) return lost(error);
  if (value != nullptr && r.line.rfind("VA ", 0) == 0) {
    // Our values hold no "\r\n", so the block is one line; its length says if it was.
    if (!read_line(*value, deadline, error)) return lost(error);
    if (std::to_string(value->size()) != r.line.substr(3, r.line.find(' ', 3) - 3)) {
      return lost("a value of another length than \"" + r.line + "\" said, from memcached at " + endpoint());
    }
  }
  r.status = MemcachedReply::Status::kReply;
  return r;
}

bool memcached_answers_version(const std::string& host, std::uint16_t port, std::chrono::milliseconds timeout) {
  MemcachedConnection conn(host, port, timeout, timeout);
  MemcachedReply r = conn.request("version\r\n");
  return r.status == MemcachedReply::Status::kReply && r.line.rfind("VERSION ", 0) == 0;
}

}  // namespace fencecheck
