#include "harness/worker/worker_ops.h"

#include <map>
#include <optional>
#include <stdexcept>

#include <grpcpp/grpcpp.h>
#include <nlohmann/json.hpp>

#include "backends/registry.h"
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

Reply make_reply(Reply::Type type, std::string value_json, std::string error = "") {
  Reply r;
  r.set_type(type);
  r.set_value_json(std::move(value_json));
  r.set_error(std::move(error));
  return r;
}

// ok_value / other_value: the completion's value when ok / when fail or info (DESIGN.md:
// acquire completes null unless ok; release repeats its invoke value).
Reply from_lock_result(const LockResult& res, std::string ok_value, std::string other_value) {
  switch (res.outcome) {
    case Outcome::kOk:
      return make_reply(Reply::OK, std::move(ok_value));
    case Outcome::kFail:
      return make_reply(Reply::FAIL, std::move(other_value), res.error);
    case Outcome::kUnknown:
      break;
  }
  return make_reply(Reply::INFO, std::move(other_value), res.error);
}

// A resource call that returned an error: FAIL only when gRPC could not connect at all,
// because then nothing was sent; any other error may come after the server applied it.
// value: the completion's value (null for read, the invoke value for write).
Reply from_resource_error(const grpc::Status& s, const std::string& value) {
  const std::string& msg = s.error_message();
  if (s.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
    return make_reply(Reply::INFO, value, "timeout: the resource did not answer in time");
  }
  if (s.error_code() == grpc::StatusCode::UNAVAILABLE &&
      msg.find("failed to connect") != std::string::npos) {
    return make_reply(Reply::FAIL, value, "resource unreachable: " + msg);
  }
  return make_reply(Reply::INFO, value,
                    "resource call failed (code " + std::to_string(s.error_code()) + "): " + msg);
}

std::optional<std::int64_t> token_of(const nlohmann::json& v) {
  if (!v.is_object() || !v.contains("token") || v.at("token").is_null()) return std::nullopt;
  if (!v.at("token").is_number_integer()) {
    throw std::invalid_argument("\"token\" must be an integer or null, got " +
                                v.at("token").dump());
  }
  return v.at("token").get<std::int64_t>();
}

nlohmann::json token_json(const std::optional<std::int64_t>& t) {
  return t ? nlohmann::json(*t) : nlohmann::json(nullptr);
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
  s->client = backend->make_client(config, s->node);
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
  if (!s) return make_reply(Reply::FAIL, "null", "worker not set up: Setup must come first");
  const std::string& f = req.f();
  nlohmann::json value =
      nlohmann::json::parse(req.value_json(), nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) {
    return make_reply(Reply::FAIL, "null", "invoke value is not valid JSON: " + req.value_json());
  }
  try {
    if (f == "acquire") {
      std::lock_guard<std::mutex> lock(s->lock_mu);
      LockResult res = s->client->acquire(req.key(), std::chrono::milliseconds(req.ttl_ms()));
      if (res.outcome != Outcome::kOk || !res.grant) return from_lock_result(res, "null", "null");
      std::string ok_value = nlohmann::json{{"token", token_json(res.grant->token)}}.dump();
      s->grants[req.key()] = *res.grant;
      return from_lock_result(res, ok_value, "null");
    }
    if (f == "release") {
      std::lock_guard<std::mutex> lock(s->lock_mu);
      auto it = s->grants.find(req.key());
      if (it == s->grants.end()) return make_reply(Reply::FAIL, req.value_json(), "not held");
      LockResult res = s->client->release(it->second);
      // A definite answer ends the grant either way; an unknown one keeps it so that a
      // retried release can still try.
      if (res.outcome != Outcome::kUnknown) s->grants.erase(it);
      return from_lock_result(res, req.value_json(), req.value_json());
    }
    if (f == "read") {
      proto::ReadRequest rr;
      rr.set_key(req.key());
      rr.set_client(s->node);
      proto::ReadReply out;
      grpc::ClientContext ctx;
      ctx.set_deadline(std::chrono::system_clock::now() + resource_deadline_);
      grpc::Status st = s->resource->Read(&ctx, rr, &out);
      if (!st.ok()) return from_resource_error(st, "null");
      return make_reply(Reply::OK, out.value_json());
    }
    if (f == "write") {
      if (!value.is_object() || !value.contains("value")) {
        return make_reply(Reply::FAIL, req.value_json(),
                          "write value must be {\"token\": N|null, \"value\": X}, got " +
                              req.value_json());
      }
      proto::WriteRequest wr;
      wr.set_key(req.key());
      if (auto t = token_of(value)) wr.set_token(*t);
      wr.set_value_json(value.at("value").dump());
      wr.set_client(s->node);
      proto::WriteReply out;
      grpc::ClientContext ctx;
      ctx.set_deadline(std::chrono::system_clock::now() + resource_deadline_);
      grpc::Status st = s->resource->Write(&ctx, wr, &out);
      if (!st.ok()) return from_resource_error(st, req.value_json());
      if (out.accepted()) return make_reply(Reply::OK, req.value_json());
      return make_reply(Reply::FAIL, req.value_json(), "rejected by the resource: " + out.reason());
    }
  } catch (const std::invalid_argument& e) {
    const bool repeats_value = f == "release" || f == "write";
    return make_reply(Reply::FAIL, repeats_value ? req.value_json() : "null",
                      std::string("bad ") + f + " request: " + e.what());
  }
  return make_reply(Reply::FAIL, "null",
                    "unknown op \"" + f + "\" (expected acquire, release, read or write)");
}

}  // namespace fencecheck
