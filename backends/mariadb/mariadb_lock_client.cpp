#include "backends/mariadb/mariadb_lock_client.h"

#include <charconv>
#include <cstdio>
#include <stdexcept>
#include <utility>

#include "backends/registry.h"

namespace fencecheck {
// The helpers have a namespace of their own: in a unity build this file shares a batch with
// other backends' files, whose anonymous-namespace helpers would meet these.
namespace mariadb_lc {
namespace {

using MariadbStatus = MariadbResult::Status;
constexpr const char* kWhat = "mariadb client config";

using lock_result::fail;
using lock_result::unknown;
using lock_result::ok;

// The outcome of a single autocommit statement that did not run to an answer; nullopt when
// it did (kOk).
std::optional<LockResult> transport_outcome(const MariadbResult& r) {
  switch (r.status) {
    case MariadbStatus::kOk: return std::nullopt;
    case MariadbStatus::kNotSent: return fail(r.error, /*not_sent=*/true);
    case MariadbStatus::kError: return fail(r.error);  // the statement rolled back
    case MariadbStatus::kLost: return unknown(r.error);
  }
  return unknown(r.error);
}

// NOW(6) + ttl on the server's clock.
std::string expiry_after(std::chrono::milliseconds ttl) {
  return "NOW(6) + INTERVAL " + std::to_string(ttl.count() * 1000) + " MICROSECOND";
}

// The free row of a key that was never taken, or was released.
constexpr const char* kFreeExpiry = "'1000-01-01'";

std::optional<std::int64_t> parse_int(const std::optional<std::string>& text) {
  if (!text) return std::nullopt;
  std::int64_t v = 0;
  auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), v);
  if (ec != std::errc() || end != text->data() + text->size()) return std::nullopt;
  return v;
}

std::string text_of(const std::optional<std::string>& v) { return v ? "\"" + *v + "\"" : "NULL"; }

}  // namespace
}  // namespace mariadb_lc

std::string to_string(MariadbLockKind kind) { return kind == MariadbLockKind::kNamed ? "named" : "lease"; }

std::string to_string(MariadbLeaseMode mode) {
  switch (mode) {
    case MariadbLeaseMode::kReadUpdate: return "read-update";
    case MariadbLeaseMode::kForUpdate: return "for-update";
    case MariadbLeaseMode::kConditional: return "conditional";
  }
  return "conditional";
}

MariadbLockKind parse_mariadb_lock_kind(const std::string& name) {
  if (name == "named") return MariadbLockKind::kNamed;
  if (name == "lease") return MariadbLockKind::kLease;
  throw std::invalid_argument("mariadb lock must be named or lease, got \"" + name + "\"");
}

MariadbLeaseMode parse_mariadb_lease_mode(const std::string& name) {
  if (name == "read-update") return MariadbLeaseMode::kReadUpdate;
  if (name == "for-update") return MariadbLeaseMode::kForUpdate;
  if (name == "conditional") return MariadbLeaseMode::kConditional;
  throw std::invalid_argument("mariadb lease must be read-update, for-update or conditional, got \"" + name +
                              "\"");
}

MariadbClientConfig MariadbClientConfig::from_json(const nlohmann::json& j) {
  using mariadb_lc::kWhat;
  if (!j.is_object()) throw std::invalid_argument(std::string(kWhat) + " must be a JSON object, got " + j.dump());
  MariadbClientConfig c;
  if (!j.contains("servers") || !j.at("servers").is_array() || j.at("servers").empty()) {
    throw std::invalid_argument(std::string(kWhat) +
                                ": \"servers\" must be a non-empty array of {\"host\", \"port\"}");
  }
  const nlohmann::json& servers = j.at("servers");
  for (std::size_t i = 0; i < servers.size(); ++i) {
    const std::string field = "servers[" + std::to_string(i) + "]";
    const nlohmann::json& s = servers[i];
    if (!s.is_object()) {
      throw std::invalid_argument(std::string(kWhat) + ": \"" + field + "\" must be an object, got " + s.dump());
    }
    if (!s.contains("host") || !s.at("host").is_string() || s.at("host").get<std::string>().empty()) {
      throw std::invalid_argument(std::string(kWhat) + ": \"" + field + ".host\" must be a non-empty string");
    }
    Server server;
    server.host = s.at("host").get<std::string>();
    server.port = static_cast<int>(config_number(s, std::string(kWhat) + " " + field, "port", 1, 65535, 3306));
    c.servers.push_back(std::move(server));
  }
  auto name_field = [&](const char* field, auto parse) {
    if (!j.contains(field) || !j.at(field).is_string()) {
      throw std::invalid_argument(std::string(kWhat) + ": \"" + field + "\" must be a string");
    }
    try {
      return parse(j.at(field).get<std::string>());
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(std::string(kWhat) + ": \"" + field + "\": " + e.what());
    }
  };
  c.lock = name_field("lock", parse_mariadb_lock_kind);
  c.lease = name_field("lease", parse_mariadb_lease_mode);
  using std::chrono::milliseconds;
  c.connect_timeout =
      milliseconds(config_number(j, kWhat, "connect_timeout_ms", 1, 3600000, c.connect_timeout.count()));
  c.command_timeout =
      milliseconds(config_number(j, kWhat, "command_timeout_ms", 1, 3600000, c.command_timeout.count()));
  return c;
}

nlohmann::json MariadbClientConfig::to_json() const {
  nlohmann::json list = nlohmann::json::array();
  for (const Server& s : servers) list.push_back({{"host", s.host}, {"port", s.port}});
  return {{"servers", list},
          {"lock", to_string(lock)},
          {"lease", to_string(lease)},
          {"connect_timeout_ms", connect_timeout.count()},
          {"command_timeout_ms", command_timeout.count()}};
}

const MariadbClientConfig::Server& MariadbClientConfig::server_for(const std::string& client_name) const {
  if (servers.empty()) throw std::invalid_argument(std::string(mariadb_lc::kWhat) + " has no servers");
  std::size_t start = client_name.size();
  while (start > 0 && client_name[start - 1] >= '0' && client_name[start - 1] <= '9') --start;
  std::uint64_t k = 0;
  auto [end, ec] = std::from_chars(client_name.data() + start, client_name.data() + client_name.size(), k);
  if (start == client_name.size() || ec != std::errc() || k == 0) return servers.front();
  return servers[(k - 1) % servers.size()];
}

MariadbConnectParams MariadbClientConfig::connect_params(const std::string& client_name) const {
  const Server& server = server_for(client_name);
  MariadbConnectParams p;
  p.host = server.host;
  p.port = server.port;
  p.connect_timeout = connect_timeout;
  p.command_timeout = command_timeout;
  p.client = client_name;
  // The server stops a statement the client has given up on (a lock wait behind FOR UPDATE),
  // rather than let it take effect long after the client reported it.
  p.statement_timeout = command_timeout;
  return p;
}

MariadbLockClient::MariadbLockClient(const MariadbClientConfig& config, std::string client_name)
    : conn_(config.connect_params(client_name)),
      command_timeout_(config.command_timeout),
      owners_(std::move(client_name)) {}

// ---- lock=named ------------------------------------------------------------------------

// A session that ended took its named locks with it (or will, once the server notices).
void MariadbNamedLockClient::forget_ended_sessions() {
  std::erase_if(held_, [&](const auto& entry) {
    return !conn_.connected() || entry.second.session != conn_.session();
  });
}

LockResult MariadbNamedLockClient::acquire(const std::string& key, std::chrono::milliseconds) {
  std::string error;
  if (!conn_.ensure_connected(error)) return mariadb_lc::fail(error, /*not_sent=*/true);
  forget_ended_sessions();
  if (held_.count(key))
    return mariadb_lc::fail("already held by this client: GET_LOCK is re-entrant, fencecheck's locks are not");
  std::string owner = owners_.next();
  MariadbResult r = conn_.exec("SELECT GET_LOCK(" + conn_.quote(key) + ", 0)",
                               MariadbConnection::Clock::now() + command_timeout_, /*may_reconnect=*/false);
  if (auto outcome = mariadb_lc::transport_outcome(r)) return *outcome;
  const std::optional<std::string> got = r.value();
  if (!got) return mariadb_lc::fail("GET_LOCK returned NULL: an error on the server");
  if (*got == "0") return mariadb_lc::fail("lock held by another client");
  if (*got != "1") return mariadb_lc::unknown("GET_LOCK returned " + mariadb_lc::text_of(got));
  held_[key] = Held{owner, conn_.session()};
  Grant g{key, std::nullopt, std::move(owner)};
  g.promise = Promise::bound_to("connection");  // no time: it lasts as long as the session
  return mariadb_lc::ok(std::move(g));
}

LockResult MariadbNamedLockClient::release(const Grant& g) {
  // No reconnect: a new session holds none of this client's locks.
  forget_ended_sessions();
  const std::string ended = "not held: the session that took it has ended";
  auto it = held_.find(g.key);
  if (it == held_.end() || it->second.owner != g.owner) return mariadb_lc::fail(ended);
  MariadbResult r = conn_.exec("SELECT RELEASE_LOCK(" + conn_.quote(g.key) + ")",
                               MariadbConnection::Clock::now() + command_timeout_, /*may_reconnect=*/false);
  if (r.status == MariadbResult::Status::kNotSent) {  // the session had ended: the server noticed first
    held_.erase(g.key);
    return mariadb_lc::fail(ended + " (" + r.error + ")");
  }
  if (auto outcome = mariadb_lc::transport_outcome(r)) {
    if (r.status == MariadbResult::Status::kLost) held_.erase(g.key);  // the connection dropped its session
    return *outcome;
  }
  held_.erase(g.key);
  // 0: another session holds it now; NULL: nobody does. Either way not this session.
  return r.value() == "1" ? mariadb_lc::ok() : mariadb_lc::fail("not held");
}

// ---- lock=lease ------------------------------------------------------------------------

MariadbLeaseLockClient::MariadbLeaseLockClient(const MariadbClientConfig& config, std::string client_name)
    : MariadbLockClient(config, std::move(client_name)), mode_(config.lease) {}

LockResult MariadbLeaseLockClient::acquire(const std::string& key, std::chrono::milliseconds ttl) {
  if (ttl.count() <= 0) return mariadb_lc::fail("ttl must be positive, got " + std::to_string(ttl.count()));
  std::string error;
  if (!conn_.ensure_connected(error)) return mariadb_lc::fail(error, /*not_sent=*/true);
  // One deadline for all the acquire's statements: it returns within the connect and
  // command timeouts, however many round trips it takes.
  const auto deadline = Clock::now() + command_timeout_;
  if (mode_ == MariadbLeaseMode::kConditional) return acquire_conditional(key, ttl, owners_.next(), deadline);
  return acquire_in_transaction(key, ttl, owners_.next(), deadline);
}

LockResult MariadbLeaseLockClient::acquire_conditional(const std::string& key, std::chrono::milliseconds ttl,
                                                       std::string owner, Clock::time_point deadline) {
  const std::string name = conn_.quote(key);
  if (!rows_.count(key)) {
    MariadbResult made =
        conn_.exec("INSERT IGNORE INTO fencecheck.leases (name, owner, expires_at, token) VALUES (" + name +
                       ", '', " + mariadb_lc::kFreeExpiry + ", 0)",
                   deadline, /*may_reconnect=*/false);
    // The row it makes is free: whether or not it ran, nothing was granted, so any failure
    // here is kFail, even a lost reply.
    if (!made.ok()) {
      return mariadb_lc::fail("cannot make sure the lease row exists: " + made.error,
                              made.status == MariadbResult::Status::kNotSent);
    }
    rows_.insert(key);
  }
  // One statement: the expiry test, the takeover and the token increment are atomic.
  // LAST_INSERT_ID(expr) hands the new token back with the reply.
  MariadbResult r = conn_.exec("UPDATE fencecheck.leases SET owner = " + conn_.quote(owner) + ", expires_at = " +
                                   mariadb_lc::expiry_after(ttl) + ", token = LAST_INSERT_ID(token + 1)" +
                                   " WHERE name = " + name + " AND expires_at < NOW(6)",
                               deadline, /*may_reconnect=*/false);
  if (auto outcome = mariadb_lc::transport_outcome(r)) return *outcome;
  if (r.affected == 0) {
    // Held — or the row is gone (a server that lost its data): the next acquire makes sure
    // it exists again rather than be refused forever.
    rows_.erase(key);
    return mariadb_lc::fail("lock held by another client");
  }
  if (r.affected != 1 || r.insert_id == 0) {
    return mariadb_lc::unknown("the lease update matched " + std::to_string(r.affected) +
                               " rows and returned token " + std::to_string(r.insert_id));
  }
  Grant g{key, static_cast<std::int64_t>(r.insert_id), std::move(owner)};
  g.promise = Promise::lasting(ttl);  // expires_at = the server's NOW(6) + ttl, after the client sent it
  return mariadb_lc::ok(std::move(g));
}

// read-update and for-update. Until COMMIT is sent, the transaction cannot commit: whatever
// goes wrong before it — a refusal, an error reply, no reply in time, a session lost — ends
// the transaction uncommitted, by a ROLLBACK, or by the server when the session closes (the
// connection closes its side after a lost reply, and a transaction without its COMMIT is
// rolled back with its session). So the acquire definitely did not take the lock: kFail.
// Only a COMMIT without a reply is kUnknown.
LockResult MariadbLeaseLockClient::acquire_in_transaction(const std::string& key, std::chrono::milliseconds ttl,
                                                          std::string owner, Clock::time_point deadline) {
  const std::string name = conn_.quote(key);
  auto step = [&](const std::string& sql) { return conn_.exec(sql, deadline, /*may_reconnect=*/false); };
  auto abort = [&](const MariadbResult& r, const std::string& why) {
    if (r.status == MariadbResult::Status::kOk || r.status == MariadbResult::Status::kError)
      roll_back(deadline);  // the session lives on
    return mariadb_lc::fail(why);
  };

  MariadbResult begin = step("START TRANSACTION");
  if (!begin.ok()) {
    if (begin.status == MariadbResult::Status::kNotSent) return mariadb_lc::fail(begin.error, /*not_sent=*/true);
    return abort(begin, begin.error);
  }
  // No isolation level is set: the server's default is what the hand-written pattern gets.
  MariadbResult read = step("SELECT token, expires_at > NOW(6) FROM fencecheck.leases WHERE name = " + name +
                            (mode_ == MariadbLeaseMode::kForUpdate ? " FOR UPDATE" : ""));
  if (!read.ok()) return abort(read, read.error);

  std::int64_t token = 1;
  std::string write;
  if (read.rows.empty()) {
    write = "INSERT INTO fencecheck.leases (name, owner, expires_at, token) VALUES (" + name + ", " +
            conn_.quote(owner) + ", " + mariadb_lc::expiry_after(ttl) + ", 1)";
  } else {
    const auto& row = read.rows.front();
    std::optional<std::int64_t> read_token = row.size() == 2 ? mariadb_lc::parse_int(row[0]) : std::nullopt;
    std::optional<std::int64_t> live = row.size() == 2 ? mariadb_lc::parse_int(row[1]) : std::nullopt;
    if (!read_token || !live) return abort(read, "the lease row read back malformed");
    if (*live != 0) return abort(read, "lock held by another client");
    token = *read_token + 1;  // computed by the client: the read-modify-write under test
    write = "UPDATE fencecheck.leases SET owner = " + conn_.quote(owner) +
            ", expires_at = " + mariadb_lc::expiry_after(ttl) + ", token = " + std::to_string(token) +
            " WHERE name = " + name;
  }
  MariadbResult wrote = step(write);
  if (!wrote.ok()) return abort(wrote, wrote.error);  // e.g. 1020 under innodb_snapshot_isolation, 1062, 1213
  if (wrote.affected != 1) {
    return abort(wrote, "the lease write matched " + std::to_string(wrote.affected) + " rows");
  }

  MariadbResult commit = step("COMMIT");
  switch (commit.status) {
    case MariadbResult::Status::kOk: break;
    case MariadbResult::Status::kLost:
      return mariadb_lc::unknown("COMMIT: " + commit.error);  // it may have committed
    case MariadbResult::Status::kNotSent:  // the session ended before the COMMIT left: rolled back with it
    case MariadbResult::Status::kError:    // e.g. Galera's certification failure (1213): rolled back
      return mariadb_lc::fail("COMMIT: " + commit.error);
  }
  Grant g{key, token, std::move(owner)};
  g.promise = Promise::lasting(ttl);  // expires_at = the server's NOW(6) + ttl, after the client sent it
  return mariadb_lc::ok(std::move(g));
}

void MariadbLeaseLockClient::roll_back(Clock::time_point deadline) {
  if (Clock::now() >= deadline || !conn_.exec("ROLLBACK", deadline, /*may_reconnect=*/false).ok()) {
    conn_.close();  // the server rolls back the transaction of a closed session
  }
}

LockResult MariadbLeaseLockClient::release(const Grant& g) {
  if (!g.token) return mariadb_lc::fail("a lease grant needs its token to be released");
  MariadbResult r =
      conn_.exec("UPDATE fencecheck.leases SET owner = '', expires_at = " + std::string(mariadb_lc::kFreeExpiry) +
                 " WHERE name = " + conn_.quote(g.key) + " AND owner = " + conn_.quote(g.owner) +
                 " AND token = " + std::to_string(*g.token));
  if (auto outcome = mariadb_lc::transport_outcome(r)) return *outcome;
  return r.affected == 1 ? mariadb_lc::ok() : mariadb_lc::fail("not held");
}

std::unique_ptr<LockClient> make_mariadb_lock_client(const MariadbClientConfig& config, std::string client_name) {
  if (config.lock == MariadbLockKind::kLease) {
    return std::make_unique<MariadbLeaseLockClient>(config, std::move(client_name));
  }
  return std::make_unique<MariadbNamedLockClient>(config, std::move(client_name));
}

}  // namespace fencecheck
