// The op channel: how the controller sends a worker its ops without gRPC. Setup, notices
// and shutdown still use the worker's gRPC control socket; Invoke, the one call made per
// op, uses a second Unix socket beside it (op_socket_path), where one frame — a 4-byte
// little-endian length, then a serialized proto::InvokeRequest or proto::InvokeReply —
// goes each way per op, written and read by the calling thread itself: no thread of a
// library in between, so an op costs the controller a send, a poll and a receive.
//
// A connection carries one op at a time. A caller that gave up on a reply (its deadline
// passed) must close the connection: the late reply must never be read as the next op's.
//
// Free functions over file descriptors; thread-compatible (one thread per fd at a time).
// Every call that can block takes an absolute deadline and returns by it.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include <google/protobuf/message_lite.h>

#include "platform/unique_fd.h"

namespace fencecheck {

using OpDeadline = std::chrono::steady_clock::time_point;

// The op socket of the worker whose gRPC control socket is control_socket.
std::string op_socket_path(const std::string& control_socket);

// A frame longer than this is malformed (an op and its reply are a few hundred bytes).
constexpr std::uint32_t kMaxOpFrameBytes = 16u << 20;

enum class FrameStatus {
  kOk,
  kTimeout,    // the deadline passed first
  kClosed,     // the peer closed the connection (before a whole frame, for a receive)
  kError,      // a socket error (message in *error)
  kMalformed,  // a length over kMaxOpFrameBytes, or bytes that do not parse
};

// Connects to the Unix socket at path (close-on-exec; a blocking socket once connected,
// so give it a set_receive_timeout). A full backlog (a frozen worker) is retried every
// 5 ms until the deadline (kTimeout). kError: nobody listens there (a dead worker), with
// the reason in *error.
FrameStatus connect_op_socket(const std::string& path, OpDeadline deadline, UniqueFd* out, std::string* error);

// SO_RCVTIMEO: how long one read of a blocking socket may wait (0: no limit).
void set_receive_timeout(int fd, std::chrono::milliseconds timeout);

// Writes message as one frame. Never raises SIGPIPE.
FrameStatus send_frame(int fd, const google::protobuf::MessageLite& message, OpDeadline deadline,
                       std::string* error);

// Reads one frame into message, by the deadline. On a blocking socket the read itself
// waits, up to the socket's receive timeout (set_receive_timeout; with none it waits until
// data or shutdown(2)), and the deadline is checked after it; a non-blocking socket waits
// in poll. wake_fd (optional, -1: none): readable means stop waiting, which returns
// kClosed (heard only while polling).
FrameStatus receive_frame(int fd, google::protobuf::MessageLite& message, OpDeadline deadline,
                          std::string* error, int wake_fd = -1);

}  // namespace fencecheck
