// One TCP connection to a memcached server speaking its text protocol (the meta commands of
// memcached 1.6: protocol.txt), with millisecond deadlines: what the memcached lock client,
// the readiness probe and the memory-pressure filler share.
//
// Not thread-safe: one owner. It connects lazily (platform/tcp.h) and drops the connection
// after any I/O error or timeout, since a reply still on its way would answer the next
// request; the next request reconnects, as does one on a connection the server closed
// while it was idle (a restarted server), which is found before anything is sent on it.
// request() tells apart "nothing was sent" (no connection) from "sent, but no whole reply"
// (a timeout, a lost connection), which is the kFail / kUnknown rule of LockClient. Every
// call returns by its deadline: a connect takes at most the connect timeout, a request at
// most the command timeout.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "platform/unique_fd.h"

namespace fencecheck {

struct MemcachedReply {
  enum class Status { kReply, kNotSent, kLost };
  Status status = Status::kNotSent;
  std::string line;   // kReply: the reply's first line, without "\r\n" ("HD c42", "NS", "SERVER_ERROR …")
  std::string error;  // kNotSent / kLost: what went wrong
};

class MemcachedConnection {
 public:
  MemcachedConnection(std::string host, std::uint16_t port, std::chrono::milliseconds connect_timeout,
                      std::chrono::milliseconds command_timeout);
  MemcachedConnection(const MemcachedConnection&) = delete;
  MemcachedConnection& operator=(const MemcachedConnection&) = delete;

  // Sends request (whole lines, each ending "\r\n") and reads one reply line, within the
  // command timeout. With `value`, a reply "VA <len> …" is followed by its data block,
  // read into *value (a block of another length than it said: kLost).
  MemcachedReply request(const std::string& request, std::string* value = nullptr);
  // Sends request and reads reply lines until one equals `last` (pipelined commands ended
  // by "mn", answered "MN"), calling on_line for each line before it. Same outcomes.
  template <class OnLine>
  MemcachedReply request_until(const std::string& request, const std::string& last, OnLine on_line);

  std::string endpoint() const;  // "host:port" for messages

 private:
  bool ensure_connected(std::string& error);
  bool closed_by_server() const;
  bool send_all(const std::string& data, std::chrono::steady_clock::time_point deadline);
  // One line into `line`, without "\r\n"; false on timeout, EOF or error (error says which).
  bool read_line(std::string& line, std::chrono::steady_clock::time_point deadline, std::string& error);
  MemcachedReply lost(const std::string& why);

  std::string host_;
  std::uint16_t port_;
  std::chrono::milliseconds connect_timeout_;
  std::chrono::milliseconds command_timeout_;
  UniqueFd fd_;
  std::string buffer_;  // bytes read past the last line returned
};

template <class OnLine>
MemcachedReply MemcachedConnection::request_until(const std::string& request, const std::string& last,
                                                  OnLine on_line) {
  MemcachedReply r;
  if (!ensure_connected(r.error)) return r;
  const auto deadline = std::chrono::steady_clock::now() + command_timeout_;
  if (!send_all(request, deadline)) return lost("timeout or error sending to memcached at " + endpoint());
  std::string line, error;
  while (read_line(line, deadline, error)) {
    if (line == last) {
      r.status = MemcachedReply::Status::kReply;
      r.line = line;
      return r;
    }
    on_line(line);
  }
  return lost(error);
}

// True if a memcached server at host:port answers "version" within timeout.
bool memcached_answers_version(const std::string& host, std::uint16_t port, std::chrono::milliseconds timeout);

}  // namespace fencecheck
