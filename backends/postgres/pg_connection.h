// One libpq session with hard deadlines, shared by the postgres lock clients and the
// server's readiness probe.
//
// libpq's blocking calls can wait forever on a paused or partitioned server, and its own
// connect_timeout is whole seconds (and ignored by PQconnectPoll), so every wait here is a
// poll() on the socket with a millisecond deadline: connect takes at most connect_timeout,
// exec at most command_timeout after that.
//
// exec() tells apart what the LockClient outcome rule needs: nothing was sent (the connect
// failed), the server answered with an error (the autocommit statement rolled back), or the
// reply never came or the session broke after the statement was sent (it may have run).
// After a broken session or a timeout the connection is dropped and the next call
// reconnects. Before sending, a session the server has already ended (idle_session_timeout,
// a restart) is noticed and replaced, so a statement is never sent into a dead session.
// session() counts sessions, because session-scoped state (advisory locks) dies with one.
//
// Not thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <libpq-fe.h>

namespace fencecheck {

struct PgConnectParams {
  std::string host;  // an IPv4 address: no name lookup
  int port = 5432;
  std::string user = "postgres";
  std::string dbname = "postgres";
  std::string application_name;  // shows in the server log: the client's node
  // Server-side settings of the session, each passed as "-c name=value" at connect.
  std::vector<std::pair<std::string, std::string>> server_settings;
  // Client-side TCP keepalives (libpq keepalives_*); 0 keeps the OS default.
  int keepalives_idle_s = 0;
  int keepalives_interval_s = 0;
  int keepalives_count = 0;
  std::chrono::milliseconds connect_timeout{1000};
  std::chrono::milliseconds command_timeout{1000};
};

struct PgResultDeleter {
  void operator()(PGresult* r) const { PQclear(r); }
};
using PgResultPtr = std::unique_ptr<PGresult, PgResultDeleter>;

struct PgExecResult {
  enum class Status {
    kRows,          // the statement ran: result holds its rows
    kError,         // the server refused it with an error; the session lives on
    kEndedIdle,     // the server had ended the idle session before reading it
    kNotSent,       // no session could be made: nothing reached the server
    kLost,          // sent, but no reply in time or the session broke: it may have run
  };
  Status status = Status::kNotSent;
  PgResultPtr result;    // kRows
  std::string error;     // every other status: what went wrong
  std::string sqlstate;  // when the server said (kError, kEndedIdle, sometimes kLost)
  // The first column of the first row as text ("" when there is none), for kRows.
  std::string value() const;
  int rows() const;
};

class PgConnection {
 public:
  explicit PgConnection(PgConnectParams params);
  ~PgConnection();
  PgConnection(const PgConnection&) = delete;
  PgConnection& operator=(const PgConnection&) = delete;

  // Makes sure a live session exists, connecting if needed. False with error set when it
  // cannot (nothing was sent).
  bool ensure_connected(std::string& error);
  // Runs one statement with text parameters ($1, $2, …) in autocommit.
  PgExecResult exec(const std::string& sql, const std::vector<std::string>& params = {});
  // 1 for the first session, +1 for every reconnect; 0 before any.
  std::uint64_t session() const { return session_; }
  std::string endpoint() const;  // "host:port" for messages

 private:
  void drop();
  bool session_ended(std::string& why);

  PgConnectParams params_;
  PGconn* conn_ = nullptr;
  std::uint64_t session_ = 0;
  std::string fatal_notice_;  // a FATAL the server sent the idle session: its end
};

// True if a server at host:port accepts a session and answers SELECT 1 within timeout.
bool pg_ping(const std::string& host, int port, std::chrono::milliseconds timeout);

}  // namespace fencecheck
