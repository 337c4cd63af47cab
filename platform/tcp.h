// TCP helpers of the bench: connect with a deadline (readiness probes, a backend's admin
// words), and a free port on 127.0.0.1 (the local runtime, tests). Client libraries and
// event loops that multiplex many sockets keep their own connect logic.
//
// Thread-safe: no shared state. Sockets are made in the calling thread's network
// namespace (call within Runtime::run_in to probe from a node). A connect blocks at most
// its timeout. Errors: a malformed address throws HarnessError; a refused, unreachable or
// slow peer is not an error, only "no connection".
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "platform/unique_fd.h"

namespace fencecheck {

// Connects to address:port (IPv4 dotted quad) within timeout. Returns the connected
// socket, non-blocking and close-on-exec; an invalid UniqueFd if the connection was
// refused or did not complete in time.
UniqueFd tcp_connect(const std::string& address, std::uint16_t port, std::chrono::milliseconds timeout);

// True if tcp_connect succeeds (the socket is closed at once).
bool tcp_connect_within(const std::string& address, std::uint16_t port,
                        std::chrono::milliseconds timeout);

// Sends `request` to address:port and returns everything the peer wrote before it closed
// the connection: a request/answer protocol whose server closes after one answer
// (ZooKeeper's four-letter words, an HTTP/1.0 request). nullopt if it did not connect,
// take the request, answer and close within timeout in all (a paused or partitioned
// server, a port nobody listens on, a malformed address).
std::optional<std::string> tcp_exchange(const std::string& address, std::uint16_t port,
                                        const std::string& request, std::chrono::milliseconds timeout);

// The body of an HTTP answer with status 200 ("HTTP/1.x 200 …\r\n…\r\n\r\nbody"); nullopt for
// another status or a malformed answer. Pure.
std::optional<std::string> http_ok_body(const std::string& answer);
// GET path over HTTP/1.0 (tcp_exchange) and the body of a 200 answer; nullopt otherwise.
std::optional<std::string> http_get_ok_body(const std::string& address, std::uint16_t port, const std::string& path,
                                            std::chrono::milliseconds timeout);

// Waits until fd reports one of `events` (poll(2) flags) or deadline passes, retrying
// EINTR. False on timeout or a poll error.
bool wait_for_fd(int fd, short events, std::chrono::steady_clock::time_point deadline);

// A TCP port the kernel considered free on 127.0.0.1 a moment ago (it may hand it out
// again once this probe's socket is closed). Throws HarnessError if none can be had.
std::uint16_t free_loopback_port();

}  // namespace fencecheck
