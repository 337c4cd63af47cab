// The lock clients of the `postgres` backend, one session (one PgConnection) each.
//
// kLease — a row per lock in the lease table (lease_table_ddl()). acquire is one
// INSERT … ON CONFLICT DO UPDATE that creates the row or takes it over when it is free or
// its lease has expired on the server's clock, and returns the row's token, which grows with
// every grant: a fencing token. 0 rows: the lease is held. release clears the row only if it
// still carries this grant's holder and token. The lease length is the acquire's ttl, which
// is the grant's promise (valid_ms; the server starts it later, at its own now()).
//
// kAdvisory — session advisory locks, pg_try_advisory_lock(hashtext(key)). No token (the
// grant's token is null) and no lease: the lock lives as long as the session, so the server
// frees it only when the session ends (idle_session_timeout, keepalive death, a crash), and
// the client learns of it only when it next talks to the server — Kleppmann's K7. A grant
// promises no time: it is bound to the "connection". Advisory locks are re-entrant in
// PostgreSQL, fencecheck's are not, so an acquire of a key this session holds is refused by
// the client itself. A grant whose session has ended cannot be released by another session:
// release says "not held" without asking.
//
// Outcomes follow LockClient's rule: a failed connect is kFail with not_sent; an error the
// server answered with is kFail (the autocommit statement rolled back); no reply in time or a
// session lost after sending is kUnknown. Not thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <random>
#include <string>

#include <nlohmann/json.hpp>

#include "backends/lock_client.h"
#include "backends/postgres/pg_connection.h"

namespace fencecheck {

enum class PostgresLockKind { kLease, kAdvisory };

struct PostgresClientConfig {
  std::string host;
  int port = 5432;
  PostgresLockKind lock = PostgresLockKind::kLease;
  std::chrono::milliseconds connect_timeout{1000};
  std::chrono::milliseconds command_timeout{1000};  // also the session's statement_timeout
  // Session settings on the server: idle_session_timeout (0: off) and the server's TCP
  // keepalives toward this client (0: the OS default), which decide when an advisory lock
  // of a silent client is freed. The keepalives are set on the client's socket too.
  std::int64_t idle_session_timeout_ms = 0;
  int keepalives_idle_s = 0;
  int keepalives_interval_s = 0;
  int keepalives_count = 0;

  // {"host", "port", "lock": "lease"|"advisory", and optionally "connect_timeout_ms",
  // "command_timeout_ms", "idle_session_timeout_ms", "keepalives_idle_s",
  // "keepalives_interval_s", "keepalives_count"}. Throws std::invalid_argument naming a
  // bad field.
  static PostgresClientConfig from_json(const nlohmann::json& j);
  nlohmann::json to_json() const;
  // The session this config describes, for a client called client_name.
  PgConnectParams connect_params(const std::string& client_name) const;
};

std::string lock_kind_name(PostgresLockKind kind);
// Throws std::invalid_argument for anything but "lease" or "advisory".
PostgresLockKind parse_lock_kind(const std::string& name);

// The lease table; idempotent (the server's setup runs it after every start).
const std::string& lease_table_ddl();

class PostgresLockClient : public LockClient {
 public:
  // client_name makes holders unique across workers; it is the worker's node name.
  PostgresLockClient(const PostgresClientConfig& config, std::string client_name);

 protected:
  PgConnection conn_;
  GrantOwners owners_;  // every grant's owner value
};

class LeaseLockClient final : public PostgresLockClient {
 public:
  using PostgresLockClient::PostgresLockClient;
  LockResult acquire(const std::string& key, std::chrono::milliseconds ttl) override;
  LockResult release(const Grant& g) override;
};

class AdvisoryLockClient final : public PostgresLockClient {
 public:
  using PostgresLockClient::PostgresLockClient;
  // ttl is ignored: an advisory lock has no lease.
  LockResult acquire(const std::string& key, std::chrono::milliseconds ttl) override;
  LockResult release(const Grant& g) override;

 private:
  struct Held {
    std::string owner;
    std::uint64_t session;
  };
  void forget_ended_sessions();
  std::map<std::string, Held> held_;  // key → the grant this client's session holds
};

// The client of config.lock.
std::unique_ptr<LockClient> make_postgres_lock_client(const PostgresClientConfig& config,
                                                      std::string client_name);

}  // namespace fencecheck
