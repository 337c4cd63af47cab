#include "harness/resource/fenced_store.h"

#include <cerrno>
#include <cstring>

#include <nlohmann/json.hpp>

#include "checkers/canonical_json.h"
#include "platform/errors.h"
#include "platform/json_text.h"

namespace fencecheck {
namespace {

std::string json_string(const std::string& s) { return dump_json(nlohmann::json(s)); }

}  // namespace

std::optional<ResourceMode> parse_resource_mode(std::string_view s) {
  if (s == "fenced") return ResourceMode::kFenced;
  if (s == "unfenced") return ResourceMode::kUnfenced;
  return std::nullopt;
}

FencedStore::FencedStore(ResourceMode mode, std::ostream& log,
                         std::function<std::int64_t()> clock, std::string log_name)
    : mode_(mode), log_(log), clock_(std::move(clock)), log_name_(std::move(log_name)) {}

std::string FencedStore::log_error() const {
  std::lock_guard<std::mutex> lock(mu_);
  return log_error_;
}

void FencedStore::check_log_locked() const {
  if (!log_error_.empty()) throw HarnessError(log_error_ + " (the resource stopped serving)");
}

std::string FencedStore::refusal_locked(const KeyState& state, std::optional<std::int64_t> token) const {
  if (mode_ == ResourceMode::kFenced && token && state.highest_token && *token < *state.highest_token) {
    return "stale token " + std::to_string(*token) + " < highest accepted " +
           std::to_string(*state.highest_token);
  }
  return "";
}

std::string FencedStore::admit_locked(KeyState& state, std::optional<std::int64_t> token) const {
  std::string refusal = refusal_locked(state, token);
  if (refusal.empty()) raise_locked(state, token);
  return refusal;
}

void FencedStore::raise_locked(KeyState& state, std::optional<std::int64_t> token) {
  if (token && (!state.highest_token || *token > *state.highest_token)) state.highest_token = token;
}

ReadOutcome FencedStore::read(const std::string& key, std::optional<std::int64_t> token,
                              const std::string& client) {
  std::lock_guard<std::mutex> lock(mu_);
  check_log_locked();
  KeyState& state = keys_[key];
  ReadOutcome out;
  out.reason = admit_locked(state, token);
  out.accepted = out.reason.empty();
  if (out.accepted) out.value = state.value;
  log_locked(key, "read", token, out.accepted ? state.value : "null", nullptr, out.accepted, out.reason, client);
  return out;
}

WriteOutcome FencedStore::write(const std::string& key, std::optional<std::int64_t> token,
                                const std::string& value_json, const std::string& client) {
  // The form the checkers compare values in, so that the log and the history agree.
  std::optional<std::string> parsed = canonical_json_text(value_json);
  std::lock_guard<std::mutex> lock(mu_);
  check_log_locked();
  if (!parsed) {
    WriteOutcome out{false, "value is not valid JSON"};
    log_locked(key, "write", token, "null", nullptr, false, out.reason, client);
    return out;
  }
  std::string canonical = std::move(*parsed);
  KeyState& state = keys_[key];
  WriteOutcome out;
  out.reason = admit_locked(state, token);
  out.accepted = out.reason.empty();
  if (out.accepted) state.value = canonical;
  log_locked(key, "write", token, canonical, nullptr, out.accepted, out.reason, client);
  return out;
}

WriteOutcome FencedStore::cas(const std::string& key, std::optional<std::int64_t> token,
                              const std::string& expect_json, const std::string& value_json,
                              const std::string& client) {
  std::optional<std::string> expect = canonical_json_text(expect_json);
  std::optional<std::string> value = canonical_json_text(value_json);
  std::lock_guard<std::mutex> lock(mu_);
  check_log_locked();
  if (!expect || !value) {
    WriteOutcome out{false, std::string(expect ? "value" : "expect") + " is not valid JSON"};
    log_locked(key, "cas", token, value ? *value : "null", expect ? expect->c_str() : "null", false,
               out.reason, client);
    return out;
  }
  KeyState& state = keys_[key];
  WriteOutcome out;
  out.reason = refusal_locked(state, token);
  if (out.reason.empty() && state.value != *expect) {
    out.reason = "value mismatch: the key holds " + state.value;
  }
  out.accepted = out.reason.empty();
  if (out.accepted) {
    raise_locked(state, token);  // only an applied cas raises the fence
    state.value = *value;
  }
  log_locked(key, "cas", token, *value, expect->c_str(), out.accepted, out.reason, client);
  return out;
}

void FencedStore::log_locked(const std::string& key, const char* op,
                             std::optional<std::int64_t> token, const std::string& value_json,
                             const char* expect_json, bool accepted, const std::string& reason,
                             const std::string& client) {
  // value_json is already canonical JSON, so the line is assembled as text rather than
  // re-parsed; the strings go through the JSON encoder for escaping.
  std::string line = "{\"seq\":" + std::to_string(next_seq_++);
  line += ",\"time\":" + std::to_string(clock_());
  line += ",\"key\":" + json_string(key);
  line += ",\"op\":\"" + std::string(op) + "\"";
  if (expect_json != nullptr) line += ",\"expect\":" + std::string(expect_json);
  line += ",\"token\":" + (token ? std::to_string(*token) : std::string("null"));
  line += ",\"value\":" + value_json;
  line += accepted ? std::string(",\"accepted\":true,\"reason\":null")
                    : ",\"accepted\":false,\"reason\":" + json_string(reason);
  line += ",\"client\":" + json_string(client) + "}\n";
  errno = 0;
  log_ << line << std::flush;
  if (!log_) {
    // The stream keeps no error code; errno still holds the failed write's when there was one.
    int err = errno;
    log_error_ = "cannot write " + log_name_ + ": " +
                 (err != 0 ? std::string(std::strerror(err)) : std::string("the stream failed"));
    throw HarnessError(log_error_);
  }
}

}  // namespace fencecheck
