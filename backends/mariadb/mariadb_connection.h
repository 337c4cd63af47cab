// One MariaDB Connector/C session with hard deadlines, shared by the mariadb lock clients and
// the server's readiness probe and kill-session fault.
//
// Connector/C's blocking calls can wait forever on a paused or partitioned server, and its
// own timeouts are whole seconds, so the connection runs in the library's non-blocking mode
// (MYSQL_OPT_NONBLOCK) and every wait is a poll() on the socket with a millisecond deadline:
// connect (with the session's registration, below) takes at most connect_timeout, a statement
// at most command_timeout after that, or whatever deadline its caller gives.
//
// exec() tells apart what the LockClient outcome rule needs: nothing was sent (the connect
// failed), the server answered with an error (the session lives on), or the reply never came
// or the session broke after the statement was sent (it may have run). After a broken
// session or a timeout the connection is dropped and the next call reconnects; the library
// never reconnects by itself. Before sending, a session the server has already ended (KILL,
// wait_timeout, a restart: the idle socket is readable or hung up, for the protocol has no
// message a server sends unasked) is noticed and replaced, so a statement is never sent into
// a dead session. session() counts sessions, because session-scoped state (GET_LOCK's locks,
// an open transaction) dies with one.
//
// Right after every connect the session registers itself in fencecheck.sessions under the
// client's node name (MariadbConnectParams::client), so that kill_client_sessions() can find
// it on its server: the kill-session fault. A failed registration fails the connect.
//
// Not thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

struct st_mysql;  // Connector/C's MYSQL, kept out of this header: <mysql.h> defines macros

namespace fencecheck {

struct MariadbConnectParams {
  std::string host;  // an IPv4 address: the library's name lookup would block
  int port = 3306;
  std::string user = "root";
  std::chrono::milliseconds connect_timeout{1000};
  std::chrono::milliseconds command_timeout{1000};
  // The client node the session registers under in fencecheck.sessions; empty: none (the
  // readiness probe, the server's own setup, before the schema exists).
  std::string client;
  // The session's max_statement_time, so that the server stops a statement its client has
  // given up on rather than let it take effect long after; 0 keeps the server's.
  std::chrono::milliseconds statement_timeout{0};
};

struct MariadbResult {
  enum class Status {
    kOk,       // the statement ran: rows (if it made a result set), affected, insert_id
    kError,    // the server refused it with an error reply; the session lives on
    kNotSent,  // no session could be made (or, for exec(…, may_reconnect=false), it had
               // ended): nothing reached the server
    kLost,     // sent, but no reply in time or the session broke: it may have run
  };
  Status status = Status::kNotSent;
  std::vector<std::vector<std::optional<std::string>>> rows;  // kOk with a result set; NULL → nullopt
  std::uint64_t affected = 0;   // kOk: rows matched (CLIENT_FOUND_ROWS), not only changed
  std::uint64_t insert_id = 0;  // kOk: mysql_insert_id, e.g. the LAST_INSERT_ID(expr) a statement set
  unsigned error_code = 0;      // the server's or the library's error number, when there is one
  std::string error;            // every status but kOk: what went wrong
  // The first column of the first row; nullopt when there is no row or it is NULL.
  std::optional<std::string> value() const;
  bool ok() const { return status == Status::kOk; }
};

class MariadbConnection {
 public:
  using Clock = std::chrono::steady_clock;

  explicit MariadbConnection(MariadbConnectParams params);
  ~MariadbConnection();
  MariadbConnection(const MariadbConnection&) = delete;
  MariadbConnection& operator=(const MariadbConnection&) = delete;

  // Makes sure a live, registered session exists, connecting if needed. False with error set
  // when it cannot (nothing but the connect and the registration was sent).
  bool ensure_connected(std::string& error);
  // Runs one statement (autocommit unless a transaction is open) within command_timeout.
  MariadbResult exec(const std::string& sql);
  // The same within deadline. may_reconnect=false: only on the session that is open now, for
  // the statements of a transaction after its first; when it has ended (or there is none),
  // kNotSent without connecting.
  MariadbResult exec(const std::string& sql, Clock::time_point deadline, bool may_reconnect = true);
  // text as a SQL string literal, quotes included: '' for a quote, and backslash escapes
  // unless the session said it runs with NO_BACKSLASH_ESCAPES. Byte-wise, which is safe for
  // utf8mb4, the session's character set (no multi-byte sequence holds ' or \).
  std::string quote(const std::string& text) const;
  // Ends the session now, if there is one (the next statement reconnects).
  void close();
  // Whether a session is open (it may have ended on the server's side unnoticed yet).
  bool connected() const { return mysql_ != nullptr; }
  // 1 for the first session, +1 for every reconnect; 0 before any.
  std::uint64_t session() const { return session_; }
  // The server's id of the session (CONNECTION_ID()); 0 without one.
  std::uint64_t connection_id() const;
  std::string endpoint() const;  // "host:port" for messages

 private:
  bool session_ended(std::string& why);
  void drop();
  void abandon();  // drop() while the library is suspended inside an operation
  std::string register_session(Clock::time_point deadline);

  MariadbConnectParams params_;
  st_mysql* mysql_ = nullptr;
  std::uint64_t session_ = 0;
  bool no_backslash_escapes_ = false;
};

// True if a server at host:port accepts a session and answers SELECT 1 within timeout.
bool mariadb_ping(const std::string& host, int port, std::chrono::milliseconds timeout);

// The schema the server's setup runs once on a fresh server, in order; idempotent (CREATE …
// IF NOT EXISTS). InnoDB tables with primary keys, as Galera needs to replicate them.
const std::vector<std::string>& mariadb_schema_statements();

// Ends, on the server conn is connected to, every live session the client node `client`
// registered there: those of its rows for this server (server_id = @@server_id; on Galera
// the table replicates to every node, and connection ids are per server) whose processlist
// entry still has the same id and HOST (a restarted server reuses ids), by KILL CONNECTION.
// conn's own session is spared. Returns how many it ended, or -1 with *error set (error may
// be null).
int kill_client_sessions(MariadbConnection& conn, const std::string& client, std::string* error);

}  // namespace fencecheck
