// What the harness asks an etcd member over its client port's HTTP gateway, without gRPC
// (the controller probes from inside a node's network with Runtime::run_in, a thread at a
// time, which gRPC's own threads would not follow): GET /health for readiness, POST
// /v3/maintenance/status for the raft leader. One HTTP/1.0 request per connection; the
// server closes after its answer. Thread-safe: no shared state.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "platform/tcp.h"

namespace fencecheck {

// The member's answer to GET /health: true only for 200 with {"health":"true"} (the member
// has a leader and could serve a read). Blocks at most timeout; false on no answer.
bool etcd_healthy(const std::string& address, std::uint16_t port, std::chrono::milliseconds timeout);

struct EtcdMemberStatus {
  std::string member_id;  // as etcd prints it (a decimal uint64 in a JSON string)
  std::string leader;     // the member id it follows; "0" when it knows none
  std::int64_t raft_term = 0;
  bool is_leader() const { return !leader.empty() && leader != "0" && leader == member_id; }
};

// POST /v3/maintenance/status. nullopt when the member does not answer within timeout.
std::optional<EtcdMemberStatus> etcd_member_status(const std::string& address, std::uint16_t port,
                                                   std::chrono::milliseconds timeout);

// The parts of the above, pure, for the unit test: the health and status documents (the
// body of a 200 answer: http_ok_body, platform/tcp.h).
bool etcd_health_body_ok(const std::string& body);
std::optional<EtcdMemberStatus> parse_etcd_status(const std::string& body);

}  // namespace fencecheck
