#include "backends/redlock/redlock_client.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <limits>
#include <random>
#include <stdexcept>
#include <thread>

#include "backends/registry.h"

#include "backends/redis/redis_lock_client.h"

namespace fencecheck {
namespace {

using std::chrono::milliseconds;
using Clock = RedisFanout::Clock;
using Status = RedisCommandResult::Status;

// The automatic per-instance timeout is max(50 ms, ttl/200). It only bounds how long a
// dead or paused master can hold up one attempt (all are asked at once, so one timeout per
// attempt); safety never rests on it, since validity is measured after the replies. RDOC
// wants it small next to the TTL, 5–50 ms for 10 s: ttl/200 is the top of that range. The
// floor is for this kind of test bench: a shared 2-core machine running five masters, the
// resource, the workers and builds stalls every process at once now and then, for over
// 10 ms (measured: a 10 ms timeout made 4 acquires of one 10 s run time out on all five
// masters, i.e. info). A missed healthy reply costs an attempt or retires a client; 50 ms
// is redsync's 5 % of the harness's default 1 s TTL.
constexpr milliseconds kMinInstanceTimeout{50};

// What one instance's reply says about our value being there.
enum class Vote {
  kYes,      // OK / deleted: the instance acted
  kNo,       // nil / 0: it did not (lock held by another value, or ours was not there)
  kUnmoved,  // nothing sent, or an error reply: the instance was not changed
  kMaybe,    // sent, no usable reply: it may or may not have acted
};

Vote vote_of(const RedisCommandResult& r, bool is_set) {
  if (r.status == Status::kNotSent) return Vote::kUnmoved;
  if (r.status == Status::kLost) return Vote::kMaybe;
  const redisReply& reply = *r.reply;
  if (reply.type == REDIS_REPLY_ERROR) return Vote::kUnmoved;
  if (is_set && reply.type == REDIS_REPLY_STATUS && std::string(reply.str, reply.len) == "OK") return Vote::kYes;
  if (is_set && reply.type == REDIS_REPLY_NIL) return Vote::kNo;
  if (!is_set && reply.type == REDIS_REPLY_INTEGER && reply.integer == 1) return Vote::kYes;
  if (!is_set && reply.type == REDIS_REPLY_INTEGER && reply.integer == 0) return Vote::kNo;
  return Vote::kMaybe;
}

struct Tally {
  std::size_t yes = 0, no = 0, unmoved = 0, maybe = 0, not_sent = 0;
  std::string first_error;

  Tally(const std::vector<RedisCommandResult>& results, bool is_set) {
    for (const auto& r : results) {
      switch (vote_of(r, is_set)) {
        case Vote::kYes: ++yes; break;
        case Vote::kNo: ++no; break;
        case Vote::kUnmoved: ++unmoved; break;
        case Vote::kMaybe: ++maybe; break;
      }
      not_sent += r.status == Status::kNotSent;
      std::string error = r.status == Status::kReply && r.reply->type == REDIS_REPLY_ERROR
                              ? "redis error: " + std::string(r.reply->str, r.reply->len)
                              : r.error;
      if (first_error.empty()) first_error = error;
    }
  }
  std::string summary(const char* yes_word, const char* no_word) const {
    std::string s = std::to_string(yes) + " " + yes_word + ", " + std::to_string(no) + " " + no_word;
    if (maybe > 0) s += ", " + std::to_string(maybe) + " no reply";
    if (unmoved > 0) s += ", " + std::to_string(unmoved) + " unreachable or error";
    if (!first_error.empty()) s += " (" + first_error + ")";
    return s;
  }
};

LockResult result(Outcome outcome, std::string error, bool not_sent = false) {
  return {outcome, std::nullopt, std::move(error), not_sent};
}

std::string hex_random_value() {
  std::random_device rd;  // getrandom(2) on Linux
  std::string hex;
  for (int i = 0; i < 5; ++i) {  // 5 × 32 bits: RDOC's 20 random bytes
    char word[9];
    std::snprintf(word, sizeof word, "%08x", static_cast<unsigned>(rd()));
    hex += word;
  }
  return hex;
}

constexpr std::int64_t kNoLimit = std::numeric_limits<std::int64_t>::max();

std::int64_t option_int(const BackendOptions& options, const std::string& name, std::int64_t min) {
  return option_number(options, "redlock", name, min, kNoLimit);
}

std::int64_t json_int(const nlohmann::json& j, const char* field, std::int64_t min, std::int64_t fallback) {
  return config_number(j, "redlock client config", field, min, kNoLimit, fallback);
}

}  // namespace

RedlockClientConfig RedlockClientConfig::from_options(const BackendOptions& options) {
  RedlockClientConfig c;
  auto has = [&](const char* name) { return options.count(name) > 0; };
  if (has("validity_check")) c.validity_check = options.at("validity_check") != "off";
  if (has("instance_timeout_ms") && options.at("instance_timeout_ms") != "auto") {
    c.instance_timeout = milliseconds(option_int(options, "instance_timeout_ms", 1));
  }
  if (has("stall_after_send_ms")) c.stall_after_send = milliseconds(option_int(options, "stall_after_send_ms", 0));
  if (has("stall_every")) {
    c.stall_every = static_cast<int>(option_number(options, "redlock", "stall_every", 1, std::numeric_limits<int>::max()));
  }
  return c;
}

RedlockClientConfig RedlockClientConfig::from_json(const nlohmann::json& j) {
  if (!j.is_object() || !j.contains("instances") || !j.at("instances").is_array() || j.at("instances").empty()) {
    throw std::invalid_argument("redlock client config needs a non-empty \"instances\" array, got " + j.dump());
  }
  RedlockClientConfig c;
  for (const nlohmann::json& i : j.at("instances")) {
    // The same fields, checked the same way, as the redis backend's single server.
    RedisClientConfig one = RedisClientConfig::from_json(i);
    c.instances.push_back({one.host, one.port});
  }
  if (j.contains("instance_timeout_ms") && !j.at("instance_timeout_ms").is_null()) {
    c.instance_timeout = milliseconds(json_int(j, "instance_timeout_ms", 1, 0));
  }
  if (j.contains("validity_check")) {
    if (!j.at("validity_check").is_boolean()) {
      throw std::invalid_argument("redlock client config: \"validity_check\" must be true or false");
    }
    c.validity_check = j.at("validity_check").get<bool>();
  }
  c.stall_after_send = milliseconds(json_int(j, "stall_after_send_ms", 0, 0));
  c.stall_every = static_cast<int>(
      config_number(j, "redlock client config", "stall_every", 1, std::numeric_limits<int>::max(), 1));
  return c;
}

nlohmann::json RedlockClientConfig::to_json() const {
  nlohmann::json instances = nlohmann::json::array();
  for (const RedisEndpoint& e : this->instances) instances.push_back({{"host", e.host}, {"port", e.port}});
  return {{"instances", instances},
          {"instance_timeout_ms", instance_timeout ? nlohmann::json(instance_timeout->count()) : nlohmann::json()},
          {"validity_check", validity_check},
          {"stall_after_send_ms", stall_after_send.count()},
          {"stall_every", stall_every}};
}

std::chrono::microseconds RedlockClient::drift(milliseconds ttl) {
  return std::chrono::microseconds(ttl.count() * 10) + milliseconds(2);  // ttl × 0.01 + 2 ms
}

milliseconds RedlockClient::promised_validity(milliseconds ttl) {
  return std::chrono::floor<milliseconds>(std::chrono::microseconds(ttl) - drift(ttl));
}

milliseconds RedlockClient::auto_instance_timeout(milliseconds ttl) {
  return std::max(kMinInstanceTimeout, ttl / 200);
}

RedlockClient::RedlockClient(const RedlockClientConfig& config)
    : config_(config), fanout_(config.instances) {
  if (config.instances.empty()) throw std::invalid_argument("redlock client config: no instances");
}

milliseconds RedlockClient::timeout_for(milliseconds ttl) const {
  return config_.instance_timeout.value_or(auto_instance_timeout(ttl));
}

std::vector<RedisCommandResult> RedlockClient::run_unlock(const std::string& key, const std::string& value,
                                                          milliseconds timeout) {
  auto results = fanout_.send_all({"EVAL", kCompareAndDeleteScript, "1", key, value}, Clock::now() + timeout);
  fanout_.drop_unanswered();
  return results;
}

LockResult RedlockClient::acquire(const std::string& key, milliseconds ttl) {
  if (ttl.count() <= 0) return result(Outcome::kFail, "ttl must be positive, got " + std::to_string(ttl.count()));
  const std::size_t n = fanout_.size(), q = quorum(n);
  const std::string value = hex_random_value();
  const milliseconds timeout = timeout_for(ttl);
  ++acquires_;
  std::function<void()> stall;
  if (config_.stall_after_send.count() > 0 && acquires_ % config_.stall_every == 0) {
    stall = [&] { std::this_thread::sleep_for(config_.stall_after_send); };
  }

  const Clock::time_point t1 = Clock::now();
  std::vector<RedisCommandResult> sets =
      fanout_.send_all({"SET", key, value, "NX", "PX", std::to_string(ttl.count())}, t1 + timeout, stall);
  const Clock::time_point t2 = Clock::now();
  Tally set(sets, /*is_set=*/true);
  if (set.not_sent == n) {
    return result(Outcome::kFail, "no redis instance reachable: " + set.first_error, /*not_sent=*/true);
  }
  auto elapsed = std::chrono::duration_cast<std::chrono::microseconds>(t2 - t1);
  auto validity = std::chrono::microseconds(ttl) - elapsed - drift(ttl);
  const bool valid = validity.count() > 0 || !config_.validity_check;
  if (set.yes >= q && valid) {
    fanout_.drop_unanswered();
    grant_ttls_[value] = ttl;
    // From T1, as the check measures; with validity_check=off possibly over already
    // (shorter than the acquire took): the checker's granted-expired.
    Grant g{key, std::nullopt, value};
    g.promise = Promise::lasting(promised_validity(ttl));
    return {Outcome::kOk, std::move(g), "", false};
  }

  std::string why;
  if (set.yes >= q) {
    why = "validity expired: " + std::to_string(elapsed.count() / 1000) + " ms elapsed of a " +
          std::to_string(ttl.count()) + " ms ttl (drift " + std::to_string(drift(ttl).count() / 1000) + " ms)";
  } else if (set.no >= q) {
    why = "lock held by another client";
  } else {
    why = "no quorum: " + set.summary("locked", "held elsewhere") + ", needed " + std::to_string(q) + " of " +
          std::to_string(n);
  }
  // The spec's unlock-all, then count the instances that may still hold our value: those
  // that said OK or did not answer, unless their unlock answered.
  std::vector<RedisCommandResult> unlocks = run_unlock(key, value, timeout);
  std::size_t undecided = 0;
  for (std::size_t i = 0; i < n; ++i) {
    Vote v = vote_of(sets[i], true);
    bool may_hold = v == Vote::kYes || v == Vote::kMaybe;
    bool cleared = unlocks[i].status == Status::kReply && unlocks[i].reply->type == REDIS_REPLY_INTEGER;
    undecided += may_hold && !cleared;
  }
  if (undecided < q) return result(Outcome::kFail, why);
  return result(Outcome::kUnknown, why + "; after unlocking, " + std::to_string(undecided) + " of " +
                                       std::to_string(n) + " instances may still hold the lock");
}

LockResult RedlockClient::release(const Grant& g) {
  const std::size_t n = fanout_.size(), q = quorum(n);
  auto ttl = grant_ttls_.find(g.owner);
  milliseconds timeout = config_.instance_timeout.value_or(
      ttl == grant_ttls_.end() ? kMinInstanceTimeout : auto_instance_timeout(ttl->second));
  Tally del(run_unlock(g.key, g.owner, timeout), /*is_set=*/false);

  LockResult r;
  if (del.not_sent == n) {
    r = result(Outcome::kFail, "no redis instance reachable: " + del.first_error, /*not_sent=*/true);
  } else if (del.yes >= q) {
    r = result(Outcome::kOk, "");
  } else if (del.yes + del.maybe + del.unmoved < q) {
    r = result(Outcome::kFail, "not held");  // ours was on fewer than a quorum: expired or lost
  } else if (del.yes == 0 && del.maybe == 0) {
    r = result(Outcome::kFail, "no quorum reached, nothing released: " + del.summary("deleted", "not ours"));
  } else {
    r = result(Outcome::kUnknown, "release undecided: " + del.summary("deleted", "not ours"));
  }
  if (r.outcome != Outcome::kUnknown && ttl != grant_ttls_.end()) grant_ttls_.erase(ttl);
  return r;
}

}  // namespace fencecheck
