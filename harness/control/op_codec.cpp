#include "harness/control/op_codec.h"

#include <stdexcept>

namespace fencecheck {
namespace {

std::optional<std::int64_t> token_in(const nlohmann::json& v) {
  const nlohmann::json& t = v.at("token");
  if (t.is_null()) return std::nullopt;
  if (!t.is_number_integer()) throw std::invalid_argument("\"token\" must be an integer or null, got " + t.dump());
  return t.get<std::int64_t>();
}

// The field of an object value, for the error message when it is missing.
const nlohmann::json& field(OpFn f, const nlohmann::json& v, const char* name) {
  if (!v.is_object() || !v.contains(name)) {
    throw std::invalid_argument(std::string(to_string(f)) + " value must have \"" + name + "\", got " + v.dump());
  }
  return v.at(name);
}

}  // namespace

proto::InvokeRequest encode_invoke(OpFn f, const std::string& key, const nlohmann::json& v,
                                   std::chrono::milliseconds ttl, std::optional<std::int64_t> fence) {
  proto::InvokeRequest r;
  r.set_key(key);
  switch (f) {
    case OpFn::kAcquire:
      r.mutable_acquire()->set_ttl_ms(ttl.count());
      break;
    case OpFn::kRelease:
      field(f, v, "token");
      if (auto t = token_in(v)) r.mutable_release()->set_token(*t);
      else r.mutable_release();
      break;
    case OpFn::kRead:
      if (fence) r.mutable_read()->set_token(*fence);
      else r.mutable_read();
      break;
    case OpFn::kWrite: {
      field(f, v, "token");
      proto::Write* w = r.mutable_write();
      if (auto t = token_in(v)) w->set_token(*t);
      w->set_value_json(field(f, v, "value").dump());
      break;
    }
    case OpFn::kCas: {
      proto::Cas* c = r.mutable_cas();
      if (v.is_object() && v.contains("token")) {
        if (auto t = token_in(v)) c->set_token(*t);
      }
      c->set_expect_json(field(f, v, "expect").dump());
      c->set_value_json(field(f, v, "value").dump());
      break;
    }
    case OpFn::kNemesis:
      throw std::invalid_argument("the nemesis has no client op");
  }
  return r;
}

DecodedOp decode_invoke(const proto::InvokeRequest& r) {
  DecodedOp op;
  op.key = r.key();
  switch (r.op_case()) {
    case proto::InvokeRequest::kAcquire:
      op.f = OpFn::kAcquire;
      op.ttl = std::chrono::milliseconds(r.acquire().ttl_ms());
      break;
    case proto::InvokeRequest::kRelease:
      op.f = OpFn::kRelease;
      if (r.release().has_token()) op.token = r.release().token();
      break;
    case proto::InvokeRequest::kRead:
      op.f = OpFn::kRead;
      if (r.read().has_token()) op.token = r.read().token();
      break;
    case proto::InvokeRequest::kWrite:
      op.f = OpFn::kWrite;
      if (r.write().has_token()) op.token = r.write().token();
      op.value_json = r.write().value_json();
      break;
    case proto::InvokeRequest::kCas:
      op.f = OpFn::kCas;
      if (r.cas().has_token()) op.token = r.cas().token();
      op.expect_json = r.cas().expect_json();
      op.value_json = r.cas().value_json();
      break;
    case proto::InvokeRequest::OP_NOT_SET:
      throw std::invalid_argument("the request names no op");
  }
  return op;
}

nlohmann::json decode_ok_value(OpFn f, const proto::InvokeReply& reply) {
  switch (f) {
    case OpFn::kAcquire:
      if (!reply.has_granted()) throw std::invalid_argument("an ok acquire reply carries no grant");
      return {{"token", reply.granted().has_token() ? nlohmann::json(reply.granted().token()) : nlohmann::json()}};
    case OpFn::kRead: {
      if (!reply.has_read()) throw std::invalid_argument("an ok read reply carries no value");
      nlohmann::json v = nlohmann::json::parse(reply.read().value_json(), nullptr, false);
      if (v.is_discarded()) throw std::invalid_argument("the value read is not JSON: " + reply.read().value_json());
      return v;
    }
    default:
      return nullptr;
  }
}

}  // namespace fencecheck
