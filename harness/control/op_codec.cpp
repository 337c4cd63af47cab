#include "harness/control/op_codec.h"

#include <stdexcept>

namespace fencecheck {
namespace {

// The field of an object value, for the error message when it is missing.
const nlohmann::json& field(OpFn f, const nlohmann::json& v, const char* name) {
  if (!v.is_object() || !v.contains(name)) {
    throw std::invalid_argument(std::string(to_string(f)) + " value must have \"" + name + "\", got " + v.dump());
  }
  return v.at(name);
}

std::optional<std::int64_t> token_in(OpFn f, const nlohmann::json& v) {
  const nlohmann::json& t = field(f, v, "token");
  if (t.is_null()) return std::nullopt;
  if (!t.is_number_integer()) throw std::invalid_argument("\"token\" must be an integer or null, got " + t.dump());
  return t.get<std::int64_t>();
}

nlohmann::json parse_json(const std::string& text, const char* what) {
  nlohmann::json v = nlohmann::json::parse(text, nullptr, false);
  if (v.is_discarded()) throw std::invalid_argument(std::string(what) + " is not JSON: " + text);
  return v;
}

}  // namespace

proto::InvokeRequest encode_invoke(OpFn f, const std::string& key, const nlohmann::json& v,
                                   std::chrono::milliseconds ttl, std::optional<std::int64_t> fence) {
  if (f == OpFn::kNemesis) throw std::invalid_argument("the nemesis has no client op");
  const OpSpec& op = op_spec(f);
  proto::InvokeRequest r;
  r.set_f(std::string(op.name));
  r.set_key(key);
  if (op.runs_at == OpPlace::kLockService) r.set_ttl_ms(ttl.count());
  std::optional<std::int64_t> token = fence;
  switch (op.invoke) {
    case ValueShape::kNull: break;
    case ValueShape::kAny: r.set_value_json(v.dump()); break;
    case ValueShape::kToken: token = token_in(f, v); break;
    case ValueShape::kTokenAndValue:
      token = token_in(f, v);
      r.set_value_json(field(f, v, "value").dump());
      break;
    case ValueShape::kExpectAndValue:
      if (v.is_object() && v.contains("token")) token = token_in(f, v);
      r.set_expect_json(field(f, v, "expect").dump());
      r.set_value_json(field(f, v, "value").dump());
      break;
  }
  if (token) r.set_token(*token);
  return r;
}

DecodedOp decode_invoke(const proto::InvokeRequest& r) {
  std::optional<OpFn> f = find_op(r.f());
  if (!f) throw std::invalid_argument(r.f().empty() ? "the request names no op" : "unknown op \"" + r.f() + "\"");
  DecodedOp op;
  op.f = *f;
  op.key = r.key();
  if (r.has_token()) op.token = r.token();
  op.value_json = r.value_json();
  op.expect_json = r.expect_json();
  op.ttl = std::chrono::milliseconds(r.ttl_ms());
  return op;
}

nlohmann::json decode_ok_value(OpFn f, const proto::InvokeReply& reply) {
  const OpSpec& op = op_spec(f);
  if (op.repeats_invoke_value || op.ok == ValueShape::kNull) return nullptr;
  if (!reply.has_result()) throw std::invalid_argument("an ok " + std::string(op.name) + " reply carries no result");
  const proto::OkResult& res = reply.result();
  nlohmann::json token = res.has_token() ? nlohmann::json(res.token()) : nlohmann::json();
  switch (op.ok) {
    case ValueShape::kToken: {
      nlohmann::json value = {{"token", token}};
      if (!res.grant_json().empty()) {
        // Evidence about the grant (docs/history.md): its members beside the token, which
        // they can never replace.
        nlohmann::json detail = parse_json(res.grant_json(), "the grant's detail");
        if (!detail.is_object()) throw std::invalid_argument("the grant's detail is not a JSON object: " + res.grant_json());
        for (auto& [name, member] : detail.items()) {
          if (name != "token") value[name] = member;
        }
      }
      return value;
    }
    case ValueShape::kAny: return parse_json(res.value_json(), "the value returned");
    case ValueShape::kTokenAndValue:
      return {{"token", token}, {"value", parse_json(res.value_json(), "the value returned")}};
    case ValueShape::kExpectAndValue:
    case ValueShape::kNull: break;
  }
  throw std::invalid_argument("an ok " + std::string(op.name) + " value of shape " + std::string(to_string(op.ok)) +
                              " cannot travel in a reply");
}

}  // namespace fencecheck
