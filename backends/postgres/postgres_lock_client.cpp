#include "backends/postgres/postgres_lock_client.h"

#include <cstdio>
#include <limits>
#include <stdexcept>

namespace fencecheck {
namespace {

// $1 holder, $2 name, $3 lease in ms. One statement, so creating the row, the free-or-
// expired test and the token increment are atomic: a concurrent acquire of the same row
// waits for this one and re-checks the WHERE on the row it left (READ COMMITTED).
constexpr const char* kLeaseAcquire = R"sql(
INSERT INTO locks AS l (name, holder, token, expires)
VALUES ($2, $1, 1, now() + $3::bigint * interval '1 millisecond')
ON CONFLICT (name) DO UPDATE
   SET holder = excluded.holder, token = l.token + 1, expires = excluded.expires
 WHERE l.holder IS NULL OR l.expires < now()
RETURNING token)sql";

// $1 holder, $2 name, $3 token: a stale grant's release matches no row.
constexpr const char* kLeaseRelease = R"sql(
UPDATE locks SET holder = NULL, expires = NULL
 WHERE name = $2 AND holder = $1 AND token = $3
RETURNING token)sql";

constexpr const char* kAdvisoryAcquire = "SELECT pg_try_advisory_lock(hashtext($1))";
constexpr const char* kAdvisoryRelease = "SELECT pg_advisory_unlock(hashtext($1))";

using lock_result::fail;
using lock_result::unknown;
using lock_result::ok;

// The outcome of a statement that produced no rows to read; nullopt when it has rows.
std::optional<LockResult> transport_outcome(const PgExecResult& r) {
  using S = PgExecResult::Status;
  switch (r.status) {
    case S::kRows: return std::nullopt;
    case S::kNotSent: return LockResult{Outcome::kFail, std::nullopt, r.error, /*not_sent=*/true};
    case S::kError:
    case S::kEndedIdle: return fail(r.error);
    case S::kLost: return unknown(r.error);
  }
  return unknown(r.error);
}

std::int64_t int_field(const nlohmann::json& j, const char* field, std::int64_t min, std::int64_t max,
                       std::int64_t fallback) {
  if (!j.contains(field)) return fallback;
  const nlohmann::json& v = j.at(field);
  if (!v.is_number_integer() || v.get<std::int64_t>() < min || v.get<std::int64_t>() > max) {
    throw std::invalid_argument(std::string("postgres client config: \"") + field +
                                "\" must be an integer in " + std::to_string(min) + ".." +
                                std::to_string(max) + ", got " + v.dump());
  }
  return v.get<std::int64_t>();
}

constexpr std::int64_t kIntMax = std::numeric_limits<int>::max();

}  // namespace

std::string lock_kind_name(PostgresLockKind kind) {
  return kind == PostgresLockKind::kLease ? "lease" : "advisory";
}

PostgresLockKind parse_lock_kind(const std::string& name) {
  if (name == "lease") return PostgresLockKind::kLease;
  if (name == "advisory") return PostgresLockKind::kAdvisory;
  throw std::invalid_argument("postgres lock kind must be lease or advisory, got \"" + name + "\"");
}

const std::string& lease_table_ddl() {
  static const std::string ddl =
      "CREATE TABLE IF NOT EXISTS locks (name text PRIMARY KEY, holder text, "
      "token bigint NOT NULL DEFAULT 0, expires timestamptz)";
  return ddl;
}

PostgresClientConfig PostgresClientConfig::from_json(const nlohmann::json& j) {
  if (!j.is_object()) {
    throw std::invalid_argument("postgres client config must be a JSON object, got " + j.dump());
  }
  PostgresClientConfig c;
  if (!j.contains("host") || !j.at("host").is_string() || j.at("host").get<std::string>().empty()) {
    throw std::invalid_argument("postgres client config: \"host\" must be a non-empty string");
  }
  c.host = j.at("host").get<std::string>();
  if (!j.contains("port")) throw std::invalid_argument("postgres client config: \"port\" is missing");
  c.port = static_cast<int>(int_field(j, "port", 1, 65535, 0));
  if (!j.contains("lock") || !j.at("lock").is_string()) {
    throw std::invalid_argument("postgres client config: \"lock\" must be \"lease\" or \"advisory\"");
  }
  c.lock = parse_lock_kind(j.at("lock").get<std::string>());
  using std::chrono::milliseconds;
  c.connect_timeout = milliseconds(int_field(j, "connect_timeout_ms", 1, kIntMax, c.connect_timeout.count()));
  c.command_timeout = milliseconds(int_field(j, "command_timeout_ms", 1, kIntMax, c.command_timeout.count()));
  c.idle_session_timeout_ms = int_field(j, "idle_session_timeout_ms", 0, kIntMax, 0);
  c.keepalives_idle_s = static_cast<int>(int_field(j, "keepalives_idle_s", 0, kIntMax, 0));
  c.keepalives_interval_s = static_cast<int>(int_field(j, "keepalives_interval_s", 0, kIntMax, 0));
  c.keepalives_count = static_cast<int>(int_field(j, "keepalives_count", 0, kIntMax, 0));
  return c;
}

nlohmann::json PostgresClientConfig::to_json() const {
  return {{"host", host},
          {"port", port},
          {"lock", lock_kind_name(lock)},
          {"connect_timeout_ms", connect_timeout.count()},
          {"command_timeout_ms", command_timeout.count()},
          {"idle_session_timeout_ms", idle_session_timeout_ms},
          {"keepalives_idle_s", keepalives_idle_s},
          {"keepalives_interval_s", keepalives_interval_s},
          {"keepalives_count", keepalives_count}};
}

PgConnectParams PostgresClientConfig::connect_params(const std::string& client_name) const {
  PgConnectParams p;
  p.host = host;
  p.port = port;
  p.application_name = client_name;
  p.connect_timeout = connect_timeout;
  p.command_timeout = command_timeout;
  // The server stops a statement the client has given up on, rather than let it take
  // effect long after the client reported it unknown.
  p.server_settings.emplace_back("statement_timeout", std::to_string(command_timeout.count()));
  p.server_settings.emplace_back("idle_session_timeout", std::to_string(idle_session_timeout_ms));
  auto server_keepalive = [&](const char* name, int value) {
    if (value > 0) p.server_settings.emplace_back(name, std::to_string(value));
  };
  server_keepalive("tcp_keepalives_idle", keepalives_idle_s);
  server_keepalive("tcp_keepalives_interval", keepalives_interval_s);
  server_keepalive("tcp_keepalives_count", keepalives_count);
  p.keepalives_idle_s = keepalives_idle_s;
  p.keepalives_interval_s = keepalives_interval_s;
  p.keepalives_count = keepalives_count;
  return p;
}

PostgresLockClient::PostgresLockClient(const PostgresClientConfig& config, std::string client_name)
    : conn_(config.connect_params(client_name)),
      owners_(std::move(client_name)) {}

LockResult LeaseLockClient::acquire(const std::string& key, std::chrono::milliseconds ttl) {
  if (ttl.count() <= 0) return fail("ttl must be positive, got " + std::to_string(ttl.count()));
  std::string owner = owners_.next();
  PgExecResult r = conn_.exec(kLeaseAcquire, {owner, key, std::to_string(ttl.count())});
  if (auto outcome = transport_outcome(r)) return *outcome;
  if (r.rows() == 0) return fail("lock held by another client");
  std::int64_t token = 0;
  try {
    token = std::stoll(r.value());
  } catch (const std::exception&) {
    return unknown("acquire returned a token that is not a number: \"" + r.value() + "\"");
  }
  // expires = the server's now() + ttl, taken after the client sent the statement.
  Grant g{key, token, std::move(owner)};
  g.promise = Promise::lasting(ttl);
  return ok(std::move(g));
}

LockResult LeaseLockClient::release(const Grant& g) {
  if (!g.token) return fail("a lease grant needs its token to be released");
  PgExecResult r = conn_.exec(kLeaseRelease, {g.owner, g.key, std::to_string(*g.token)});
  if (auto outcome = transport_outcome(r)) return *outcome;
  return r.rows() == 0 ? fail("not held") : ok();
}

// A session that ended took its advisory locks with it (or will, once the server notices).
void AdvisoryLockClient::forget_ended_sessions() {
  std::erase_if(held_, [&](const auto& entry) { return entry.second.session != conn_.session(); });
}

LockResult AdvisoryLockClient::acquire(const std::string& key, std::chrono::milliseconds) {
  std::string error;
  if (!conn_.ensure_connected(error)) return {Outcome::kFail, std::nullopt, error, /*not_sent=*/true};
  forget_ended_sessions();
  if (held_.count(key)) {
    return fail("already held by this client: advisory locks are re-entrant, fencecheck's are not");
  }
  std::string owner = owners_.next();
  PgExecResult r = conn_.exec(kAdvisoryAcquire, {key});
  if (auto outcome = transport_outcome(r)) return *outcome;
  if (r.value() != "t") return fail("lock held by another session");
  held_[key] = Held{owner, conn_.session()};
  Grant g{key, std::nullopt, std::move(owner)};
  g.promise = Promise::bound_to("connection");  // no time: it lasts as long as the session
  return ok(std::move(g));
}

LockResult AdvisoryLockClient::release(const Grant& g) {
  std::string error;
  if (!conn_.ensure_connected(error)) return {Outcome::kFail, std::nullopt, error, /*not_sent=*/true};
  forget_ended_sessions();
  const std::string ended = "not held: the session that took it has ended";
  auto it = held_.find(g.key);
  if (it == held_.end() || it->second.owner != g.owner) return fail(ended);
  const std::uint64_t session = it->second.session;
  PgExecResult r = conn_.exec(kAdvisoryRelease, {g.key});
  if (r.status == PgExecResult::Status::kEndedIdle) {
    held_.erase(g.key);
    return fail(ended + " (" + r.error + ")");
  }
  if (auto outcome = transport_outcome(r)) {
    if (r.status != PgExecResult::Status::kError) held_.erase(g.key);  // its session is gone
    return *outcome;
  }
  held_.erase(g.key);
  if (r.value() == "t") return ok();
  return fail(session == conn_.session() ? "not held" : ended);  // exec may have reconnected
}

std::unique_ptr<LockClient> make_postgres_lock_client(const PostgresClientConfig& config,
                                                      std::string client_name) {
  if (config.lock == PostgresLockKind::kAdvisory) {
    return std::make_unique<AdvisoryLockClient>(config, std::move(client_name));
  }
  return std::make_unique<LeaseLockClient>(config, std::move(client_name));
}

}  // namespace fencecheck
