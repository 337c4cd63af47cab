// The lock clients of the `mariadb` backend, one session (one MariadbConnection) each, on the
// server that server_for() gives the client's node.
//
// kNamed — MariaDB's named locks, GET_LOCK(key, 0). No token (the grant's token is null) and
// no lease: the lock lives as long as the session, so the server frees it only when the
// session ends (KILL, wait_timeout, a crash), and the client learns of it only when it next
// talks to the server. A grant promises no time: it is bound to the "connection". GET_LOCK
// is re-entrant in MariaDB, fencecheck's locks are not, so an acquire of a key this session
// holds is refused by the client itself. A grant whose session has ended cannot be released
// by another session: release says "not held" without asking.
//
// kLease — a row per lock in fencecheck.leases (mariadb_schema_statements()) with its holder
// (owner), its expiry on the server's clock and a token the grant hands to the fenced
// resource. The lease length is the acquire's ttl, which is the grant's promise (valid_ms;
// the server starts it later, at its own NOW(6)). Three ways to take the row
// (MariadbLeaseMode):
//   read-update  the hand-written pattern, at the server's default isolation: a transaction
//                reads the row, and if it is absent or expired writes it with the token it
//                read plus one, computed by the client. At REPEATABLE READ with
//                innodb_snapshot_isolation=OFF two such transactions can both win, with the
//                same token: the lost update this mode exists to show.
//   for-update   the same, reading with SELECT … FOR UPDATE.
//   conditional  one atomic UPDATE that takes the row only if it has expired and sets the
//                token to token + 1 through LAST_INSERT_ID(expr), after an INSERT IGNORE
//                made sure the row exists (once per key while the row is known to).
// release clears the row only if it still carries this grant's owner and token.
//
// Outcomes follow LockClient's rule: a failed connect is kFail with not_sent; an error the
// server answered with is kFail; no reply in time or a session lost after sending is
// kUnknown — except inside a transaction before its COMMIT was sent, which cannot commit any
// more (kFail; see mariadb_lock_client.cpp). Galera's certification failure (1213) and "WSREP
// has not yet prepared node" (1047) are error replies: kFail. Not thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "backends/lock_client.h"
#include "backends/mariadb/mariadb_connection.h"

namespace fencecheck {

enum class MariadbLockKind { kNamed, kLease };
enum class MariadbLeaseMode { kReadUpdate, kForUpdate, kConditional };

std::string to_string(MariadbLockKind kind);   // "named", "lease"
std::string to_string(MariadbLeaseMode mode);  // "read-update", "for-update", "conditional"
// Throw std::invalid_argument for any other name.
MariadbLockKind parse_mariadb_lock_kind(const std::string& name);
MariadbLeaseMode parse_mariadb_lease_mode(const std::string& name);

struct MariadbClientConfig {
  struct Server {
    std::string host;
    int port = 3306;
  };
  std::vector<Server> servers;  // node order (n1, n2, n3); one for a standalone server
  MariadbLockKind lock = MariadbLockKind::kNamed;
  MariadbLeaseMode lease = MariadbLeaseMode::kConditional;  // lock=lease only
  std::chrono::milliseconds connect_timeout{1000};
  std::chrono::milliseconds command_timeout{1000};  // also the session's max_statement_time

  // {"servers": [{"host", "port"}, …], "lock": "named"|"lease", "lease": "read-update"|
  // "for-update"|"conditional", and optionally "connect_timeout_ms", "command_timeout_ms"}.
  // Throws std::invalid_argument naming the field for anything malformed.
  static MariadbClientConfig from_json(const nlohmann::json& j);
  nlohmann::json to_json() const;
  // The server a client node uses: c<k> (any name ending in a number k ≥ 1) →
  // servers[(k-1) % n]; a name without one → servers[0]. Throws std::invalid_argument when
  // there are no servers.
  const Server& server_for(const std::string& client_name) const;
  // The session this config describes for a client called client_name: its server, the
  // timeouts, the registration under client_name.
  MariadbConnectParams connect_params(const std::string& client_name) const;
};

class MariadbLockClient : public LockClient {
 public:
  // client_name makes owners unique across workers and registers the session; it is the
  // worker's node name.
  MariadbLockClient(const MariadbClientConfig& config, std::string client_name);

 protected:
  MariadbConnection conn_;
  std::chrono::milliseconds command_timeout_;
  GrantOwners owners_;  // every grant's owner value
};

class MariadbNamedLockClient final : public MariadbLockClient {
 public:
  using MariadbLockClient::MariadbLockClient;
  // ttl is ignored: a named lock has no lease.
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

class MariadbLeaseLockClient final : public MariadbLockClient {
 public:
  MariadbLeaseLockClient(const MariadbClientConfig& config, std::string client_name);
  LockResult acquire(const std::string& key, std::chrono::milliseconds ttl) override;
  LockResult release(const Grant& g) override;

 private:
  using Clock = MariadbConnection::Clock;
  LockResult acquire_in_transaction(const std::string& key, std::chrono::milliseconds ttl, std::string owner,
                                    Clock::time_point deadline);
  LockResult acquire_conditional(const std::string& key, std::chrono::milliseconds ttl, std::string owner,
                                 Clock::time_point deadline);
  // Ends an open transaction uncommitted: ROLLBACK, or closing the session if that fails.
  void roll_back(Clock::time_point deadline);

  MariadbLeaseMode mode_;
  std::set<std::string> rows_;  // conditional: keys whose row is known to exist
};

// The client of config.lock (and config.lease).
std::unique_ptr<LockClient> make_mariadb_lock_client(const MariadbClientConfig& config, std::string client_name);

}  // namespace fencecheck
