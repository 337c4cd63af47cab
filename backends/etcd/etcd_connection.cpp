#include "backends/etcd/etcd_connection.h"

#include <grpc/support/time.h>

#include <random>
#include <stdexcept>

namespace fencecheck {
namespace {

// A deadline on the monotonic clock (see the header), `timeout` from now.
void set_timeout(grpc::ClientContext& ctx, std::chrono::milliseconds timeout) {
  ctx.set_deadline(gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC),
                                gpr_time_from_millis(timeout.count(), GPR_TIMESPAN)));
}

}  // namespace

EtcdEnd classify_etcd_status(const grpc::Status& status, bool channel_was_ready) {
  switch (status.error_code()) {
    case grpc::StatusCode::OK: return EtcdEnd::kOk;
    case grpc::StatusCode::UNAVAILABLE:
      // gRPC's own words for a connection that never came up; etcd's UNAVAILABLE answers
      // ("etcdserver: request timed out, possibly due to connection lost", "leader
      // changed") may have been applied.
      if (!channel_was_ready && status.error_message().rfind("etcdserver:", 0) != 0 &&
          (status.error_message().find("failed to connect to all addresses") != std::string::npos ||
           status.error_message().find("connections to all backends failing") != std::string::npos)) {
        return EtcdEnd::kNotSent;
      }
      return EtcdEnd::kUnknown;
    case grpc::StatusCode::DEADLINE_EXCEEDED:
    case grpc::StatusCode::CANCELLED:
    case grpc::StatusCode::UNKNOWN:
    case grpc::StatusCode::INTERNAL:
    case grpc::StatusCode::ABORTED:
    case grpc::StatusCode::DATA_LOSS:
      return EtcdEnd::kUnknown;
    default:
      // NOT_FOUND (lease not found), INVALID_ARGUMENT, FAILED_PRECONDITION,
      // RESOURCE_EXHAUSTED, PERMISSION_DENIED, OUT_OF_RANGE…: refused before acting.
      return EtcdEnd::kRefused;
  }
}

std::string EtcdStatus::describe() const {
  static const char* const kNames[] = {"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED",
                                       "NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED",
                                       "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED",
                                       "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED"};
  const int code = static_cast<int>(status.error_code());
  std::string name = code >= 0 && code <= 16 ? kNames[code] : "code " + std::to_string(code);
  return endpoint + ": " + name + (status.error_message().empty() ? "" : ": " + status.error_message());
}

EtcdConnection::EtcdConnection(std::vector<std::string> endpoints) : endpoints_(std::move(endpoints)) {
  if (endpoints_.empty()) throw std::invalid_argument("etcd: no endpoints to connect to");
  grpc::ChannelArguments args;
  // A member that restarts is found again within a second, not after gRPC's default
  // backoff of up to two minutes.
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  for (const std::string& e : endpoints_) {
    Member m;
    m.endpoint = e;
    m.channel = grpc::CreateCustomChannel("ipv4:" + e, grpc::InsecureChannelCredentials(), args);
    m.kv = etcdserverpb::KV::NewStub(m.channel);
    m.lease = etcdserverpb::Lease::NewStub(m.channel);
    m.watch = etcdserverpb::Watch::NewStub(m.channel);
    m.lock = v3lockpb::Lock::NewStub(m.channel);
    members_.push_back(std::move(m));
  }
  // Clients spread over the members, as Jepsen's each talk to their own node.
  current_ = std::random_device{}() % members_.size();
}

template <class Call>
EtcdStatus EtcdConnection::on_member(Ms timeout, Call&& call) {
  const std::size_t index = current_.load() % members_.size();
  Member& m = members_[index];
  const bool was_ready = m.channel->GetState(true) == GRPC_CHANNEL_READY;
  grpc::ClientContext ctx;
  set_timeout(ctx, timeout);
  EtcdStatus s;
  s.status = call(m, ctx);
  s.end = classify_etcd_status(s.status, was_ready);
  s.endpoint = m.endpoint;
  if (s.end == EtcdEnd::kNotSent || s.end == EtcdEnd::kUnknown) {
    std::size_t expected = index;
    current_.compare_exchange_strong(expected, (index + 1) % members_.size());
  }
  return s;
}

EtcdStatus EtcdConnection::range(const etcdserverpb::RangeRequest& req, etcdserverpb::RangeResponse* resp,
                                 Ms timeout) {
  return on_member(timeout, [&](Member& m, grpc::ClientContext& ctx) { return m.kv->Range(&ctx, req, resp); });
}

EtcdStatus EtcdConnection::txn(const etcdserverpb::TxnRequest& req, etcdserverpb::TxnResponse* resp, Ms timeout) {
  return on_member(timeout, [&](Member& m, grpc::ClientContext& ctx) { return m.kv->Txn(&ctx, req, resp); });
}

EtcdStatus EtcdConnection::delete_range(const etcdserverpb::DeleteRangeRequest& req,
                                        etcdserverpb::DeleteRangeResponse* resp, Ms timeout) {
  return on_member(timeout,
                   [&](Member& m, grpc::ClientContext& ctx) { return m.kv->DeleteRange(&ctx, req, resp); });
}

EtcdStatus EtcdConnection::lease_grant(std::int64_t ttl_s, etcdserverpb::LeaseGrantResponse* resp, Ms timeout) {
  etcdserverpb::LeaseGrantRequest req;
  req.set_ttl(ttl_s);
  return on_member(timeout,
                   [&](Member& m, grpc::ClientContext& ctx) { return m.lease->LeaseGrant(&ctx, req, resp); });
}

EtcdStatus EtcdConnection::lease_revoke(std::int64_t lease, Ms timeout) {
  etcdserverpb::LeaseRevokeRequest req;
  req.set_id(lease);
  etcdserverpb::LeaseRevokeResponse resp;
  return on_member(timeout,
                   [&](Member& m, grpc::ClientContext& ctx) { return m.lease->LeaseRevoke(&ctx, req, &resp); });
}

EtcdStatus EtcdConnection::lease_time_to_live(std::int64_t lease, etcdserverpb::LeaseTimeToLiveResponse* resp,
                                              Ms timeout) {
  etcdserverpb::LeaseTimeToLiveRequest req;
  req.set_id(lease);
  return on_member(timeout, [&](Member& m, grpc::ClientContext& ctx) {
    return m.lease->LeaseTimeToLive(&ctx, req, resp);
  });
}

EtcdStatus EtcdConnection::lease_keepalive_once(std::int64_t lease, etcdserverpb::LeaseKeepAliveResponse* resp,
                                                Ms timeout) {
  return on_member(timeout, [&](Member& m, grpc::ClientContext& ctx) {
    auto stream = m.lease->LeaseKeepAlive(&ctx);
    etcdserverpb::LeaseKeepAliveRequest req;
    req.set_id(lease);
    const bool exchanged = stream->Write(req) && stream->Read(resp);
    if (exchanged) {
      stream->WritesDone();
      ctx.TryCancel();  // the server keeps a keepalive stream open; we are done with it
      stream->Finish();
      return grpc::Status::OK;
    }
    grpc::Status s = stream->Finish();
    return s.ok() ? grpc::Status(grpc::StatusCode::UNAVAILABLE, "keepalive stream closed without an answer") : s;
  });
}

EtcdStatus EtcdConnection::lock(const std::string& name, std::int64_t lease, v3lockpb::LockResponse* resp,
                                Ms timeout) {
  v3lockpb::LockRequest req;
  req.set_name(name);
  req.set_lease(lease);
  return on_member(timeout, [&](Member& m, grpc::ClientContext& ctx) { return m.lock->Lock(&ctx, req, resp); });
}

EtcdStatus EtcdConnection::unlock(const std::string& key, Ms timeout) {
  v3lockpb::UnlockRequest req;
  req.set_key(key);
  v3lockpb::UnlockResponse resp;
  return on_member(timeout, [&](Member& m, grpc::ClientContext& ctx) { return m.lock->Unlock(&ctx, req, &resp); });
}

EtcdStatus EtcdConnection::wait_delete(const std::string& key, std::int64_t from, Ms timeout) {
  return on_member(timeout, [&](Member& m, grpc::ClientContext& ctx) {
    auto stream = m.watch->Watch(&ctx);
    etcdserverpb::WatchRequest req;
    req.mutable_create_request()->set_key(key);
    req.mutable_create_request()->set_start_revision(from);
    bool deleted = false, cancelled = false;
    if (stream->Write(req)) {
      etcdserverpb::WatchResponse resp;
      while (!deleted && !cancelled && stream->Read(&resp)) {
        cancelled = resp.canceled();
        for (const mvccpb::Event& ev : resp.events()) deleted = deleted || ev.type() == mvccpb::Event::DELETE;
      }
    }
    if (deleted || cancelled) ctx.TryCancel();
    grpc::Status s = stream->Finish();
    if (deleted) return grpc::Status::OK;
    if (cancelled) return grpc::Status(grpc::StatusCode::ABORTED, "the watch was cancelled (compacted?)");
    return s.ok() ? grpc::Status(grpc::StatusCode::UNAVAILABLE, "the watch ended without the delete") : s;
  });
}

}  // namespace fencecheck
