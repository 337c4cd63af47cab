// EtcdConnection: one etcd v3 client's gRPC channels to the members of a cluster, and the
// few calls fencecheck's lock client makes (KV, Lease, Watch, the v3lock Lock service),
// each with its own deadline. The stubs are generated from the protos Debian ships
// (proto/etcd/CMakeLists.txt).
//
// Endpoints: one channel per member, one of them in use. A call that ends without an
// answer (no connection, deadline exceeded, a member without a leader) moves later calls
// on to the next member, as etcd's own client fails over. Deadlines are on the monotonic
// clock, so a clock fault on the client (libfcclock shifts CLOCK_REALTIME) does not touch
// them; a SIGSTOP does: a call frozen past its deadline ends DEADLINE_EXCEEDED on resume
// unless its answer was read first.
//
// Thread-safe: the keepalive thread and the client's own thread call it concurrently.
// Every call blocks at most its timeout (the connection attempt included).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "etcd/etcdserver/api/v3lock/v3lockpb/v3lock.grpc.pb.h"
#include "etcd/etcdserver/etcdserverpb/rpc.grpc.pb.h"

namespace fencecheck {

// How a call ended, by LockClient's outcome rule.
enum class EtcdEnd {
  kOk,
  kRefused,  // etcd answered with an error before acting (lease not found, bad request)
  kNotSent,  // no connection to the member: nothing reached it
  kUnknown,  // sent, no answer (deadline, connection lost, "request timed out")
};

struct EtcdStatus {
  EtcdEnd end = EtcdEnd::kUnknown;
  grpc::Status status;
  std::string endpoint;  // the member asked
  bool ok() const { return end == EtcdEnd::kOk; }
  bool not_found() const { return status.error_code() == grpc::StatusCode::NOT_FOUND; }
  std::string describe() const;  // "10.0.0.2:2379: DEADLINE_EXCEEDED: Deadline Exceeded"
};

// The rule behind EtcdStatus::end: a status and whether the channel was connected when the
// call began. Pure; exposed for the unit test.
EtcdEnd classify_etcd_status(const grpc::Status& status, bool channel_was_ready);

class EtcdConnection {
 public:
  using Ms = std::chrono::milliseconds;
  // endpoints: "address:port" of every member (IPv4). Throws std::invalid_argument when
  // empty. Connects lazily.
  explicit EtcdConnection(std::vector<std::string> endpoints);

  EtcdStatus range(const etcdserverpb::RangeRequest& req, etcdserverpb::RangeResponse* resp, Ms timeout);
  EtcdStatus txn(const etcdserverpb::TxnRequest& req, etcdserverpb::TxnResponse* resp, Ms timeout);
  EtcdStatus delete_range(const etcdserverpb::DeleteRangeRequest& req,
                          etcdserverpb::DeleteRangeResponse* resp, Ms timeout);
  EtcdStatus lease_grant(std::int64_t ttl_s, etcdserverpb::LeaseGrantResponse* resp, Ms timeout);
  EtcdStatus lease_revoke(std::int64_t lease, Ms timeout);
  // resp->ttl() is the seconds left, -1 once the lease is gone.
  EtcdStatus lease_time_to_live(std::int64_t lease, etcdserverpb::LeaseTimeToLiveResponse* resp, Ms timeout);
  // One round of LeaseKeepAlive (a stream opened, one request, one answer, closed):
  // resp->ttl() is the renewed TTL, 0 when the lease no longer exists.
  EtcdStatus lease_keepalive_once(std::int64_t lease, etcdserverpb::LeaseKeepAliveResponse* resp, Ms timeout);
  // The v3lock service: blocks while another lease holds `name`, up to timeout.
  EtcdStatus lock(const std::string& name, std::int64_t lease, v3lockpb::LockResponse* resp, Ms timeout);
  EtcdStatus unlock(const std::string& key, Ms timeout);
  // Watches `key` from revision `from` until an event deletes it: kOk then. Blocks up to
  // timeout; kUnknown when it ends first (or the watch is cancelled, e.g. compacted).
  EtcdStatus wait_delete(const std::string& key, std::int64_t from, Ms timeout);

 private:
  struct Member {
    std::string endpoint;
    std::shared_ptr<grpc::Channel> channel;
    std::unique_ptr<etcdserverpb::KV::Stub> kv;
    std::unique_ptr<etcdserverpb::Lease::Stub> lease;
    std::unique_ptr<etcdserverpb::Watch::Stub> watch;
    std::unique_ptr<v3lockpb::Lock::Stub> lock;
  };
  // Runs one call against the member in use; moves on to the next member when the call
  // got no answer.
  template <class Call>
  EtcdStatus on_member(Ms timeout, Call&& call);

  std::vector<std::string> endpoints_;
  std::vector<Member> members_;
  std::atomic<std::size_t> current_{0};
};

}  // namespace fencecheck
