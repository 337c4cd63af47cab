#include "backends/nats/nats_lock_client.h"

#include <stdexcept>

#include "backends/registry.h"

namespace fencecheck {
namespace {

using lock_result::fail;
using lock_result::unknown;
using Status = NatsReply::Status;

constexpr int kWrongLastSequence = 10071;  // JSStreamWrongLastSequenceErr

// A reply that is not kOk, as the lock op's outcome.
LockResult outcome_of(const NatsReply& r, const std::string& refused) {
  switch (r.status) {
    case Status::kNotSent: return fail(r.error, /*not_sent=*/true);
    case Status::kTimedOut:
    case Status::kLost: return unknown(r.error);
    case Status::kRefused: return fail(r.js_error == kWrongLastSequence ? refused : "refused: " + r.error);
    case Status::kOk: break;
  }
  return unknown("unexpected: an ok reply taken for an error");
}

}  // namespace

bool nats_valid_key(const std::string& key) {
  if (key.empty() || key.size() > 200 || key.front() == '.' || key.back() == '.') return false;
  for (char c : key) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                    c == '_' || c == '=' || c == '/' || c == '.';
    if (!ok) return false;
  }
  return key.find("..") == std::string::npos;
}

NatsClientConfig NatsClientConfig::from_json(const nlohmann::json& j) {
  const char* what = "nats client config";
  if (!j.is_object()) throw std::invalid_argument(std::string(what) + " must be a JSON object, got " + j.dump());
  NatsClientConfig c;
  if (!j.contains("servers") || !j.at("servers").is_array() || j.at("servers").empty()) {
    throw std::invalid_argument(std::string(what) + ": \"servers\" must be a non-empty array of \"host:port\"");
  }
  for (const auto& s : j.at("servers")) {
    if (!s.is_string() || s.get<std::string>().find(':') == std::string::npos) {
      throw std::invalid_argument(std::string(what) + ": each of \"servers\" must be \"host:port\", got " + s.dump());
    }
    c.servers.push_back(s.get<std::string>());
  }
  if (j.contains("bucket")) {
    if (!j.at("bucket").is_string() || !nats_valid_key(j.at("bucket").get<std::string>()) ||
        j.at("bucket").get<std::string>().find('.') != std::string::npos) {
      throw std::invalid_argument(std::string(what) + ": \"bucket\" must be a name of letters, digits, - and _");
    }
    c.bucket.name = j.at("bucket").get<std::string>();
  }
  c.bucket.max_age = std::chrono::milliseconds(config_number(j, what, "max_age_ms", 100, 86400000, 2000));
  c.bucket.replicas = static_cast<int>(config_number(j, what, "replicas", 1, 5, 3));
  c.connect_timeout =
      std::chrono::milliseconds(config_number(j, what, "connect_timeout_ms", 1, 3600000, c.connect_timeout.count()));
  c.command_timeout =
      std::chrono::milliseconds(config_number(j, what, "command_timeout_ms", 1, 3600000, c.command_timeout.count()));
  return c;
}

nlohmann::json NatsClientConfig::to_json() const {
  return {{"servers", servers},
          {"bucket", bucket.name},
          {"max_age_ms", bucket.max_age.count()},
          {"replicas", bucket.replicas},
          {"connect_timeout_ms", connect_timeout.count()},
          {"command_timeout_ms", command_timeout.count()}};
}

NatsLockClient::NatsLockClient(const NatsClientConfig& config, std::string client_name)
    : config_(config),
      conn_(config.servers, "fencecheck-" + client_name, config.connect_timeout, config.command_timeout),
      owners_(std::move(client_name)) {}

LockResult NatsLockClient::granted(const std::string& key, std::string owner, std::uint64_t revision) const {
  Grant g{key, static_cast<std::int64_t>(revision), std::move(owner), {{"revision", revision}}};
  g.promise = Promise::lasting(config_.bucket.max_age);
  return lock_result::ok(std::move(g));
}

LockResult NatsLockClient::acquire(const std::string& key, std::chrono::milliseconds) {
  if (!nats_valid_key(key)) {
    return fail("NATS KV keys are 1..200 characters of A-Z a-z 0-9 - _ = / . (no empty token), not \"" + key + "\"",
                true);
  }
  if (!bucket_bound_) {
    // Binding is a JetStream API request the meta leader answers, which a loaded cluster may
    // do after the command timeout (seen once in CI at a load of 6 on 2 cores). It stores
    // nothing new (the bucket exists with this configuration), so a timeout is tried again,
    // 3 times at most, before the acquire fails.
    NatsReply bound;
    for (int attempt = 0; attempt < 3; ++attempt) {
      bound = conn_.make_bucket(config_.bucket);
      if (bound.status != NatsReply::Status::kTimedOut) break;
    }
    if (!bound.ok()) return fail("the lock bucket " + config_.bucket.name + " is not there: " + bound.error, true);
    bucket_bound_ = true;
  }
  const std::string stream = config_.bucket.stream(), subject = config_.bucket.subject(key);
  std::string owner = owners_.next();
  NatsReply created = conn_.publish_expecting(stream, subject, owner, "", 0);
  if (created.ok()) return granted(key, std::move(owner), created.sequence);
  if (created.status != Status::kRefused || created.js_error != kWrongLastSequence) {
    return outcome_of(created, "");
  }
  // The key has a message: a holder's, or the delete marker a release left.
  NatsLastMessage last;
  NatsReply read = conn_.last_message(stream, subject, &last);
  if (!read.ok()) {
    // A read changes nothing: whatever became of it, this acquire took nothing.
    return fail("lock held by another client (its last message could not be read: " + read.error + ")");
  }
  if (last.operation != "DEL" && last.operation != "PURGE") return fail("lock held by another client");
  NatsReply over_marker = conn_.publish_expecting(stream, subject, owner, "", last.sequence);
  if (over_marker.ok()) return granted(key, std::move(owner), over_marker.sequence);
  return outcome_of(over_marker, "lock held by another client (taken after the release marker)");
}

LockResult NatsLockClient::release(const Grant& g) {
  if (!g.token || *g.token <= 0) return fail("the grant carries no revision (not a nats grant)", true);
  NatsReply r = conn_.publish_expecting(config_.bucket.stream(), config_.bucket.subject(g.key), "", "DEL",
                                        static_cast<std::uint64_t>(*g.token));
  if (r.ok()) return lock_result::ok();
  return outcome_of(r, "not held: the key's last revision is not this grant's (it expired, and may be another's)");
}

}  // namespace fencecheck
