#include "harness/worker/worker_ops.h"

#include <map>
#include <optional>
#include <stdexcept>

#include <grpcpp/grpcpp.h>
#include <nlohmann/json.hpp>

#include "adapters/adapter_client.h"
#include "backends/registry.h"
#include "harness/control/op_codec.h"
#include "platform/json_text.h"
#include "proto/resource.grpc.pb.h"

namespace fencecheck {

struct WorkerOps::Session {
  std::string node;
  std::mutex lock_mu;  // serializes calls on client and access to grants
  std::unique_ptr<LockClient> client;
  std::map<std::string, Grant> grants;  // by key: the grant the last ok acquire gave
  std::unique_ptr<proto::Resource::Stub> resource;
};

namespace {

using Reply = proto::InvokeReply;
using std::chrono::milliseconds;

Reply make_reply(Reply::Type type, std::string error = "", bool not_sent = false) {
  Reply r;
  r.set_type(type);
  // A server's error text may carry any bytes; proto3 strings must be UTF-8, or the
  // controller could not parse the reply and would take the op for a lost worker.
  r.set_error(valid_utf8(error));
  r.set_not_sent(not_sent);
  return r;
}

Reply from_lock_result(const LockResult& res) {
  switch (res.outcome) {
    case Outcome::kOk: return make_reply(Reply::OK);
    case Outcome::kFail: return make_reply(Reply::FAIL, res.error, res.not_sent);
    case Outcome::kUnknown: break;
  }
  return make_reply(Reply::INFO, res.error);
}

// A resource call that returned an error: FAIL only when gRPC could not connect at all,
// because then nothing was sent; any other error may come after the server applied it.
Reply from_resource_error(const grpc::Status& s) {
  const std::string& msg = s.error_message();
  if (s.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
    return make_reply(Reply::INFO, "timeout: the resource did not answer in time");
  }
  if (s.error_code() == grpc::StatusCode::UNAVAILABLE && msg.find("failed to connect") != std::string::npos) {
    return make_reply(Reply::FAIL, "resource unreachable: " + msg, /*not_sent=*/true);
  }
  return make_reply(Reply::INFO, "resource call failed (code " + std::to_string(s.error_code()) + "): " + msg);
}

// A write or cas the resource answered: ok when applied, fail when refused (nothing changed).
Reply write_outcome(const grpc::Status& st, const proto::WriteReply& out) {
  if (!st.ok()) return from_resource_error(st);
  if (out.accepted()) return make_reply(Reply::OK);
  return make_reply(Reply::FAIL, "rejected by the resource: " + out.reason());
}

// The backend's own client, or the adapter of a lock library (which throws AdapterBroken,
// naming it, when it does not start).
std::unique_ptr<LockClient> make_lock_client(const BackendInfo& backend, const nlohmann::json& config,
                                             const std::string& node, const proto::SetupRequest& req) {
  if (req.client().empty() || req.client() == kNativeClient) return backend.make_client(config, node);
  const AdapterInfo* adapter = find_adapter(req.client());
  if (adapter == nullptr) {
    std::string known;
    for (const std::string& name : client_names()) known += (known.empty() ? "" : ", ") + name;
    throw std::invalid_argument("unknown client \"" + req.client() + "\" (known: " + known + ")");
  }
  if (!backend.endpoints) throw std::invalid_argument("backend " + backend.name + " names no endpoints for adapters");
  AdapterSettings s;
  s.adapter = adapter;
  s.node = node;
  s.backend = backend.name;
  s.client_config = config;
  s.endpoints = backend.endpoints(config);
  s.log = req.adapter_log();
  // The worker's answer must reach the controller before the op's deadline there: the
  // adapter's own deadline plus the grace it gets for a late reply, with room to spare (a
  // loaded machine delays the answer by a few hundred ms; then the controller would only
  // know "timeout", not that the adapter did not answer).
  const milliseconds op_timeout(std::max<std::int64_t>(req.op_timeout_ms(), 100));
  s.op_timeout = std::max(op_timeout / 3, op_timeout - milliseconds(1000) - AdapterLockClient::kReplyGrace);
  s.acquire_timeout = milliseconds(req.acquire_timeout_ms());
  if (req.ttl_ms() > 0) s.ttl = milliseconds(req.ttl_ms());
  if (!req.client_options_json().empty()) s.options = nlohmann::json::parse(req.client_options_json());
  return std::make_unique<AdapterLockClient>(std::move(s));
}

}  // namespace

WorkerOps::WorkerOps(std::string default_node, std::chrono::milliseconds resource_deadline)
    : default_node_(std::move(default_node)), resource_deadline_(resource_deadline) {}

WorkerOps::~WorkerOps() = default;

std::shared_ptr<WorkerOps::Session> WorkerOps::session() const {
  std::lock_guard<std::mutex> lock(mu_);
  return session_;
}

void WorkerOps::setup(const proto::SetupRequest& req) {
  const BackendInfo* backend = find_backend(req.backend());
  if (backend == nullptr) {
    throw std::invalid_argument("unknown backend \"" + req.backend() + "\" (known: " +
                                backend_names() + ")");
  }
  nlohmann::json config =
      nlohmann::json::parse(req.client_config_json(), nullptr, /*allow_exceptions=*/false);
  if (config.is_discarded()) {
    throw std::invalid_argument("client config is not valid JSON: " + req.client_config_json());
  }
  if (req.resource_address().empty()) {
    throw std::invalid_argument("resource address is empty");
  }
  auto s = std::make_shared<Session>();
  s->node = req.node().empty() ? default_node_ : req.node();
  s->client = make_lock_client(*backend, config, s->node, req);
  s->client->set_notice_listener([this](const LibraryNotice& notice) {
    proto::Notice n;
    static constexpr const char* kNames[] = {"lost", "paused", "renewed"};
    n.set_f(kNames[static_cast<int>(notice.kind)]);
    n.set_key(valid_utf8(notice.key));
    n.set_lease(valid_utf8(notice.owner));
    n.set_reason(valid_utf8(notice.reason));
    n.set_ms(notice.kind == LibraryNotice::Kind::kRenewed ? notice.valid.count() : notice.pause.count());
    std::lock_guard lock(notice_mu_);
    notices_.push_back(std::move(n));
    notice_cv_.notify_all();
  });
  grpc::ChannelArguments args;
  // gRPC's default reconnect backoff grows to two minutes; after a healed partition or a
  // resumed resource the worker must reach it again within a second.
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  s->resource = proto::Resource::NewStub(grpc::CreateCustomChannel(
      req.resource_address(), grpc::InsecureChannelCredentials(), args));
  std::lock_guard<std::mutex> lock(mu_);
  session_ = std::move(s);
}

proto::InvokeReply WorkerOps::invoke(const proto::InvokeRequest& req) {
  std::shared_ptr<Session> s = session();
  if (!s) return make_reply(Reply::FAIL, "worker not set up: Setup must come first", true);
  DecodedOp op;
  try {
    op = decode_invoke(req);
  } catch (const std::invalid_argument& e) {
    return make_reply(Reply::FAIL, std::string("bad request: ") + e.what(), true);
  }
  switch (op.f) {
    case OpFn::kAcquire:
    case OpFn::kRelease:
      try {
        return op.f == OpFn::kAcquire ? acquire(*s, op, milliseconds(req.pause_after_send_ms())) : release(*s, op);
      } catch (const AdapterBroken& e) {
        Reply r = make_reply(Reply::INFO, e.what());
        r.set_broken(valid_utf8(e.what()));
        r.set_paused_after_send_ms(e.paused_after_send.count());
        return r;
      }
    case OpFn::kRead: return read(*s, op);
    case OpFn::kWrite: return write(*s, op);
    case OpFn::kCas: return cas(*s, op);
    case OpFn::kNemesis: break;
    default: break;  // an op of the vocabulary the worker has no code for (ops/ops.h, declare_op)
  }
  return make_reply(Reply::FAIL, "bad request: the worker cannot run op \"" + std::string(to_string(op.f)) + "\"", true);
}

proto::InvokeReply WorkerOps::acquire(Session& s, const DecodedOp& op, milliseconds pause_after_send) {
  std::lock_guard<std::mutex> lock(s.lock_mu);
  // A grant still here belongs to a process the controller retired (an op of unknown
  // outcome while it held the lock, or a release of unknown outcome): no live process
  // acquires a lock it holds. Give it back first, outside the history — its hold ended
  // at the retirement there, and a lock held longer than recorded can only keep others
  // out — or a session-held lock (ZooKeeper, advisory) would stay taken all run.
  if (auto stale = s.grants.find(op.key); stale != s.grants.end()) {
    s.client->release(stale->second);
    s.grants.erase(stale);
  }
  if (pause_after_send.count() > 0) s.client->pause_next_acquire_after_send(pause_after_send);
  LockResult res = s.client->acquire(op.key, op.ttl);
  Reply r = from_lock_result(res);
  r.set_paused_after_send_ms(res.paused_after_send.count());
  if (res.outcome == Outcome::kOk && res.grant) {
    if (res.grant->token) r.mutable_result()->set_token(*res.grant->token);
    r.mutable_result()->set_lease(valid_utf8(res.grant->owner));
    nlohmann::json detail = res.grant->detail.is_object() ? res.grant->detail : nlohmann::json::object();
    if (res.grant->promise) detail.update(res.grant->promise->to_json());
    if (!detail.empty()) {
      r.mutable_result()->set_grant_json(detail.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    }
    s.grants[op.key] = *res.grant;
  } else if (res.outcome == Outcome::kOk) {
    r = make_reply(Reply::INFO, "the lock client reported ok without a grant");
    r.set_paused_after_send_ms(res.paused_after_send.count());
  }
  return r;
}

proto::InvokeReply WorkerOps::release(Session& s, const DecodedOp& op) {
  std::lock_guard<std::mutex> lock(s.lock_mu);
  auto it = s.grants.find(op.key);
  if (it == s.grants.end()) return make_reply(Reply::FAIL, "not held");
  LockResult res = s.client->release(it->second);
  // A definite answer ends the grant either way; an unknown one keeps it so that a
  // retried release can still try.
  if (res.outcome != Outcome::kUnknown) s.grants.erase(it);
  return from_lock_result(res);
}

bool WorkerOps::next_notice(proto::Notice& out, milliseconds wait) {
  std::unique_lock lock(notice_mu_);
  if (!notice_cv_.wait_for(lock, wait, [this] { return notices_closed_ || !notices_.empty(); })) return false;
  if (notices_closed_) return false;
  out = std::move(notices_.front());
  notices_.pop_front();
  return true;
}

bool WorkerOps::notices_closed() {
  std::lock_guard lock(notice_mu_);
  return notices_closed_;
}

void WorkerOps::close_notices() {
  std::lock_guard lock(notice_mu_);
  notices_closed_ = true;
  notice_cv_.notify_all();
}

template <class Request, class Reply, class Method>
grpc::Status WorkerOps::call_resource(Session& s, Method method, const Request& request, Reply& reply) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + resource_deadline_);
  return (s.resource.get()->*method)(&ctx, request, &reply);
}

proto::InvokeReply WorkerOps::read(Session& s, const DecodedOp& op) {
  proto::ReadRequest rr;
  rr.set_key(op.key);
  rr.set_client(s.node);
  if (op.token) rr.set_token(*op.token);
  proto::ReadReply out;
  grpc::Status st = call_resource(s, &proto::Resource::Stub::Read, rr, out);
  if (!st.ok()) return from_resource_error(st);
  if (!out.accepted()) return make_reply(Reply::FAIL, "rejected by the resource: " + out.reason());
  Reply r = make_reply(Reply::OK);
  r.mutable_result()->set_value_json(out.value_json());
  return r;
}

proto::InvokeReply WorkerOps::write(Session& s, const DecodedOp& op) {
  proto::WriteRequest wr;
  wr.set_key(op.key);
  if (op.token) wr.set_token(*op.token);
  wr.set_value_json(op.value_json);
  wr.set_client(s.node);
  proto::WriteReply out;
  return write_outcome(call_resource(s, &proto::Resource::Stub::Write, wr, out), out);
}

proto::InvokeReply WorkerOps::cas(Session& s, const DecodedOp& op) {
  proto::CasRequest cr;
  cr.set_key(op.key);
  if (op.token) cr.set_token(*op.token);
  cr.set_expect_json(op.expect_json);
  cr.set_value_json(op.value_json);
  cr.set_client(s.node);
  proto::WriteReply out;
  return write_outcome(call_resource(s, &proto::Resource::Stub::Cas, cr, out), out);
}

}  // namespace fencecheck
