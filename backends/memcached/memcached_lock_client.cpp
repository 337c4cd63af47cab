#include "backends/memcached/memcached_lock_client.h"

#include <charconv>
#include <stdexcept>

#include "backends/registry.h"

namespace fencecheck {
namespace {

using lock_result::fail;
using lock_result::unknown;

// The outcome of a request that got no reply line, or an error line; nullopt when the
// reply is for the caller to read. An error line means memcached did not act on it.
std::optional<LockResult> memcached_transport_outcome(const MemcachedReply& r) {
  switch (r.status) {
    case MemcachedReply::Status::kNotSent: return fail(r.error, /*not_sent=*/true);
    case MemcachedReply::Status::kLost: return unknown(r.error);
    case MemcachedReply::Status::kReply: break;
  }
  if (r.line == "ERROR" || r.line.rfind("SERVER_ERROR", 0) == 0 || r.line.rfind("CLIENT_ERROR", 0) == 0) {
    return fail("memcached error: " + r.line);
  }
  return std::nullopt;
}

// The CAS of an "HD c<cas>" reply; nullopt when the line has none.
std::optional<std::int64_t> memcached_cas_of(const std::string& line) {
  auto at = line.find(" c");
  if (at == std::string::npos) return std::nullopt;
  const char* begin = line.data() + at + 2;
  const char* end = line.data() + line.size();
  std::int64_t cas = 0;
  auto [stop, ec] = std::from_chars(begin, end, cas);
  if (ec != std::errc() || (stop != end && *stop != ' ')) return std::nullopt;
  return cas;
}

// The return code a meta reply starts with ("HD", "NS", "EX", "NF"), before its flags.
std::string memcached_code_of(const std::string& line) { return line.substr(0, line.find(' ')); }

}  // namespace

std::int64_t memcached_ttl_seconds(std::chrono::milliseconds ttl) {
  return std::max<std::int64_t>(1, (ttl.count() + 999) / 1000);
}

std::chrono::milliseconds memcached_promise(std::chrono::milliseconds ttl) {
  auto valid = std::chrono::seconds(memcached_ttl_seconds(ttl)) - kMemcachedClockTick - kMemcachedTickJitter;
  return std::max(valid, std::chrono::milliseconds(0));
}

MemcachedClientConfig MemcachedClientConfig::from_json(const nlohmann::json& j) {
  const char* what = "memcached client config";
  if (!j.is_object()) throw std::invalid_argument(std::string(what) + " must be a JSON object, got " + j.dump());
  MemcachedClientConfig c;
  if (!j.contains("host") || !j.at("host").is_string() || j.at("host").get<std::string>().empty()) {
    throw std::invalid_argument(std::string(what) + ": \"host\" must be a non-empty string");
  }
  if (!j.contains("port")) throw std::invalid_argument(std::string(what) + ": \"port\" is missing");
  c.host = j.at("host").get<std::string>();
  c.port = static_cast<std::uint16_t>(config_number(j, what, "port", 1, 65535, c.port));
  c.connect_timeout =
      std::chrono::milliseconds(config_number(j, what, "connect_timeout_ms", 1, 3600000, c.connect_timeout.count()));
  c.command_timeout =
      std::chrono::milliseconds(config_number(j, what, "command_timeout_ms", 1, 3600000, c.command_timeout.count()));
  return c;
}

nlohmann::json MemcachedClientConfig::to_json() const {
  return {{"host", host},
          {"port", port},
          {"connect_timeout_ms", connect_timeout.count()},
          {"command_timeout_ms", command_timeout.count()}};
}

MemcachedLockClient::MemcachedLockClient(const MemcachedClientConfig& config, std::string client_name)
    : conn_(config.host, config.port, config.connect_timeout, config.command_timeout),
      owners_(std::move(client_name)) {}

LockResult MemcachedLockClient::acquire(const std::string& key, std::chrono::milliseconds ttl) {
  if (ttl.count() <= 0) return fail("ttl must be positive, got " + std::to_string(ttl.count()));
  if (key.empty() || key.size() > 250 || key.find_first_of(" \r\n\t") != std::string::npos) {
    return fail("memcached keys are 1..250 bytes without spaces or newlines, not \"" + key + "\"", true);
  }
  std::string owner = owners_.next();
  const std::int64_t ttl_s = memcached_ttl_seconds(ttl);
  MemcachedReply r = conn_.request("ms " + key + " " + std::to_string(owner.size()) + " T" + std::to_string(ttl_s) +
                                   " ME c\r\n" + owner + "\r\n");
  if (auto outcome = memcached_transport_outcome(r)) return *outcome;
  const std::string code = memcached_code_of(r.line);
  if (code == "NS") return fail("lock held by another client");
  std::optional<std::int64_t> cas = code == "HD" ? memcached_cas_of(r.line) : std::nullopt;
  // Stored but without its CAS, or an answer it does not know: the item may be there.
  if (!cas) return unknown("unexpected reply to acquire: \"" + r.line + "\"");
  Grant g{key, std::nullopt, std::move(owner), {{"cas", *cas}, {"ttl_s", ttl_s}}};
  g.promise = Promise::lasting(memcached_promise(ttl));
  return lock_result::ok(std::move(g));
}

LockResult MemcachedLockClient::release(const Grant& g) {
  if (!g.detail.is_object() || !g.detail.contains("cas") || !g.detail.at("cas").is_number_integer()) {
    return fail("the grant carries no cas (not a memcached grant)", true);
  }
  const std::string cas = std::to_string(g.detail.at("cas").get<std::int64_t>());
  // First the item's value and CAS: a CAS alone is not this grant's after a restart, which
  // counts CAS values from 1 again. A read changes nothing, so a lost one is a kFail.
  std::string value;
  MemcachedReply read = conn_.request("mg " + g.key + " v c\r\n", &value);
  if (read.status == MemcachedReply::Status::kLost) return fail("release not sent: " + read.error);
  if (auto outcome = memcached_transport_outcome(read)) return *outcome;
  const std::string read_code = memcached_code_of(read.line);
  if (read_code == "EN") return fail("not held: the key is gone (expired or evicted)");
  if (read_code != "VA") return fail("unexpected reply to the release's read: \"" + read.line + "\"");
  if (value != g.owner || memcached_cas_of(read.line) != g.detail.at("cas").get<std::int64_t>()) {
    return fail("not held: the key holds another grant (another owner or cas)");
  }
  MemcachedReply r = conn_.request("md " + g.key + " C" + cas + "\r\n");
  if (auto outcome = memcached_transport_outcome(r)) return *outcome;
  const std::string code = memcached_code_of(r.line);
  if (code == "HD") return lock_result::ok();
  if (code == "NF") return fail("not held: the key is gone (expired or evicted)");
  if (code == "EX") return fail("not held: the key holds another grant (another owner or cas)");
  return unknown("unexpected reply to release: \"" + r.line + "\"");
}

}  // namespace fencecheck
