#include "backends/postgres/pg_connection.h"

#include <poll.h>

#include <cerrno>
#include <cstring>

namespace fencecheck {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// SQLSTATE idle_session_timeout: the server ended a session that was waiting for a command.
constexpr const char* kIdleSessionTimeout = "57P05";

// 1 when fd is ready, 0 when the deadline passed first, -1 on a poll error.
int wait_socket(int fd, bool for_read, bool for_write, Clock::time_point deadline) {
  if (fd < 0) return -1;
  for (;;) {
    auto left = std::chrono::ceil<milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return 0;
    pollfd p{fd, static_cast<short>((for_read ? POLLIN : 0) | (for_write ? POLLOUT : 0)), 0};
    int n = ::poll(&p, 1, static_cast<int>(left.count()));
    if (n > 0) return 1;
    if (n < 0 && errno != EINTR) return -1;
  }
}

// libpq's messages end in a newline and may span lines; one line reads better in a history.
std::string one_line(const char* message) {
  std::string s = message ? message : "";
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  for (char& c : s) c = c == '\n' ? ' ' : c;
  return s.empty() ? "(no message)" : s;
}

}  // namespace

std::string PgExecResult::value() const {
  if (!result || PQntuples(result.get()) < 1 || PQnfields(result.get()) < 1) return "";
  return PQgetvalue(result.get(), 0, 0);
}

int PgExecResult::rows() const { return result ? PQntuples(result.get()) : 0; }

PgConnection::PgConnection(PgConnectParams params) : params_(std::move(params)) {}

PgConnection::~PgConnection() { drop(); }

std::string PgConnection::endpoint() const { return params_.host + ":" + std::to_string(params_.port); }

void PgConnection::drop() {
  if (conn_ != nullptr) PQfinish(conn_);
  conn_ = nullptr;
}

// An idle session can only learn of its end by reading: the server's goodbye (a FATAL
// error, then EOF) sits unread in the socket until someone looks.
bool PgConnection::session_ended(std::string& why) {
  if (PQstatus(conn_) != CONNECTION_OK) {
    why = one_line(PQerrorMessage(conn_));
    return true;
  }
  pollfd p{PQsocket(conn_), POLLIN, 0};
  if (::poll(&p, 1, 0) <= 0) return false;
  if (PQconsumeInput(conn_) == 0 || PQstatus(conn_) != CONNECTION_OK) {
    why = one_line(PQerrorMessage(conn_));
    return true;
  }
  // The EOF may not have been read yet; the FATAL before it has. Parsing input while idle
  // hands an error to the notice receiver.
  PQisBusy(conn_);
  if (!fatal_notice_.empty()) {
    why = fatal_notice_;
    return true;
  }
  return false;
}

bool PgConnection::ensure_connected(std::string& error) {
  std::string why;
  if (conn_ != nullptr && !session_ended(why)) return true;
  drop();
  const auto deadline = Clock::now() + params_.connect_timeout;

  std::string options;
  for (const auto& [name, value] : params_.server_settings) {
    options += (options.empty() ? "-c " : " -c ") + name + "=" + value;
  }
  std::vector<std::pair<std::string, std::string>> kv = {
      {"host", params_.host},
      {"port", std::to_string(params_.port)},
      {"user", params_.user},
      {"dbname", params_.dbname},
      {"application_name", params_.application_name},
      {"options", options},
      // No TLS or GSS negotiation: a private test network, and fewer round trips.
      {"sslmode", "disable"},
      {"gssencmode", "disable"},
  };
  auto keepalive = [&](const char* key, int value) {
    if (value > 0) kv.emplace_back(key, std::to_string(value));
  };
  keepalive("keepalives_idle", params_.keepalives_idle_s);
  keepalive("keepalives_interval", params_.keepalives_interval_s);
  keepalive("keepalives_count", params_.keepalives_count);
  std::vector<const char*> keys, values;
  for (const auto& [k, v] : kv) {
    keys.push_back(k.c_str());
    values.push_back(v.c_str());
  }
  keys.push_back(nullptr);
  values.push_back(nullptr);

  conn_ = PQconnectStartParams(keys.data(), values.data(), 0);
  if (conn_ == nullptr) {
    error = "cannot connect to " + endpoint() + ": libpq is out of memory";
    return false;
  }
  // PQconnectPoll's protocol: start as if it had asked to wait for writing.
  PostgresPollingStatusType st =
      PQstatus(conn_) == CONNECTION_BAD ? PGRES_POLLING_FAILED : PGRES_POLLING_WRITING;
  while (st != PGRES_POLLING_OK) {
    if (st == PGRES_POLLING_FAILED) {
      error = "cannot connect to " + endpoint() + ": " + one_line(PQerrorMessage(conn_));
      drop();
      return false;
    }
    int ready = wait_socket(PQsocket(conn_), st == PGRES_POLLING_READING,
                            st == PGRES_POLLING_WRITING, deadline);
    if (ready <= 0) {
      error = "no session with " + endpoint() + " within " +
              std::to_string(params_.connect_timeout.count()) + " ms" +
              (ready < 0 ? std::string(": ") + std::strerror(errno) : "");
      drop();
      return false;
    }
    st = PQconnectPoll(conn_);
  }
  // Nonblocking, so that sending never waits on a full socket buffer past the deadline.
  PQsetnonblocking(conn_, 1);
  // Warnings (pg_advisory_unlock of a lock not held) are answers we read from the result;
  // libpq would print them on the worker's stderr. An error that arrives while no statement
  // runs comes here too: the server saying why it ends the session.
  fatal_notice_.clear();
  PQsetNoticeReceiver(
      conn_,
      [](void* self, const PGresult* notice) {
        const char* severity = PQresultErrorField(notice, PG_DIAG_SEVERITY_NONLOCALIZED);
        std::string level = severity ? severity : "";
        if (level == "FATAL" || level == "PANIC") {
          static_cast<PgConnection*>(self)->fatal_notice_ = one_line(PQresultErrorMessage(notice));
        }
      },
      this);
  ++session_;
  return true;
}

PgExecResult PgConnection::exec(const std::string& sql, const std::vector<std::string>& params) {
  PgExecResult r;
  if (!ensure_connected(r.error)) return r;  // kNotSent
  const auto deadline = Clock::now() + params_.command_timeout;
  auto lost = [&](std::string why) {
    r.status = PgExecResult::Status::kLost;
    r.error = std::move(why);
    drop();
    return std::move(r);
  };
  const std::string timeout_text =
      "no reply from " + endpoint() + " within " + std::to_string(params_.command_timeout.count()) + " ms";

  std::vector<const char*> values;
  for (const std::string& p : params) values.push_back(p.c_str());
  if (PQsendQueryParams(conn_, sql.c_str(), static_cast<int>(values.size()), nullptr, values.data(),
                        nullptr, nullptr, 0) == 0) {
    return lost("sending to " + endpoint() + " failed: " + one_line(PQerrorMessage(conn_)));
  }
  for (int flushed; (flushed = PQflush(conn_)) != 0;) {
    if (flushed < 0) return lost("sending to " + endpoint() + " failed: " + one_line(PQerrorMessage(conn_)));
    int ready = wait_socket(PQsocket(conn_), true, true, deadline);
    if (ready == 0) return lost(timeout_text);
    if (ready < 0 || PQconsumeInput(conn_) == 0) {
      return lost("session with " + endpoint() + " broke: " + one_line(PQerrorMessage(conn_)));
    }
  }

  // With the extended protocol the autocommit happens at Sync, after the rows are sent: the
  // statement counts as done only once every result is in and the server is idle again.
  std::vector<PgResultPtr> results;
  bool broken = false, idle_again = false;
  for (;;) {
    while (!broken && PQisBusy(conn_)) {
      int ready = wait_socket(PQsocket(conn_), true, false, deadline);
      if (ready == 0) return lost(timeout_text);
      if (ready < 0 || PQconsumeInput(conn_) == 0) broken = true;
    }
    if (PQisBusy(conn_)) break;
    PGresult* res = PQgetResult(conn_);
    if (res == nullptr) {
      idle_again = PQstatus(conn_) == CONNECTION_OK;
      break;
    }
    results.emplace_back(res);
  }

  const bool session_ok = PQstatus(conn_) == CONNECTION_OK;
  for (PgResultPtr& res : results) {
    if (PQresultStatus(res.get()) != PGRES_FATAL_ERROR) continue;
    const char* state = PQresultErrorField(res.get(), PG_DIAG_SQLSTATE);
    r.sqlstate = state ? state : "";
    std::string message = one_line(PQresultErrorMessage(res.get()));
    if (session_ok) {
      r.status = PgExecResult::Status::kError;  // autocommit: the statement rolled back
      r.error = "postgres error: " + message;
      return r;
    }
    if (r.sqlstate == kIdleSessionTimeout) {
      // The backend ends an idle session only while it waits for a command, so it never
      // started ours.
      r.status = PgExecResult::Status::kEndedIdle;
      r.error = "the server had ended the idle session: " + message;
      drop();
      return r;
    }
    std::string keep_state = r.sqlstate;
    PgExecResult l = lost("session with " + endpoint() + " ended during the statement: " + message);
    l.sqlstate = keep_state;
    return l;
  }
  if (!idle_again || results.empty()) {
    return lost("session with " + endpoint() + " broke before the statement completed: " +
                one_line(PQerrorMessage(conn_)));
  }
  ExecStatusType st = PQresultStatus(results.front().get());
  if (st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK) {
    return lost(std::string("unexpected result ") + PQresStatus(st) + " from " + endpoint());
  }
  r.status = PgExecResult::Status::kRows;
  r.result = std::move(results.front());
  return r;
}

bool pg_ping(const std::string& host, int port, milliseconds timeout) {
  PgConnectParams p;
  p.host = host;
  p.port = port;
  p.application_name = "fencecheck-probe";
  p.connect_timeout = timeout;
  p.command_timeout = timeout;
  PgConnection conn(std::move(p));
  PgExecResult r = conn.exec("SELECT 1");
  return r.status == PgExecResult::Status::kRows && r.value() == "1";
}

}  // namespace fencecheck
