#include "backends/mariadb/mariadb_connection.h"

#include <errmsg.h>
#include <mysql.h>
#include <mysqld_error.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace fencecheck {
// The helpers have a namespace of their own: in a unity build this file shares a batch with
// other backends' files, whose anonymous-namespace helpers would meet these.
namespace mariadb_conn {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// Waits for what a suspended Connector/C operation asked for (status: MYSQL_WAIT_* bits)
// until deadline. Returns the events to hand to its _cont(), MYSQL_WAIT_TIMEOUT when the
// library's own timeout passed first, or 0 when the deadline passed first (or poll failed).
int wait_for(MYSQL* m, int status, Clock::time_point deadline) {
  const short events =
      static_cast<short>((status & MYSQL_WAIT_READ ? POLLIN : 0) | (status & MYSQL_WAIT_WRITE ? POLLOUT : 0) |
                         (status & MYSQL_WAIT_EXCEPT ? POLLPRI : 0));
  std::optional<Clock::time_point> library_deadline;
  if (status & MYSQL_WAIT_TIMEOUT) library_deadline = Clock::now() + milliseconds(mysql_get_timeout_value_ms(m));
  const Clock::time_point until = library_deadline ? std::min(*library_deadline, deadline) : deadline;
  for (;;) {
    auto left = std::chrono::ceil<milliseconds>(until - Clock::now());
    if (left.count() <= 0) return library_deadline && *library_deadline < deadline ? MYSQL_WAIT_TIMEOUT : 0;
    pollfd p{static_cast<int>(mysql_get_socket(m)), events, 0};
    int n = ::poll(&p, 1, static_cast<int>(left.count()));
    if (n < 0 && errno != EINTR) return 0;
    if (n <= 0) continue;
    int happened = (p.revents & POLLIN ? MYSQL_WAIT_READ : 0) | (p.revents & POLLOUT ? MYSQL_WAIT_WRITE : 0) |
                   (p.revents & POLLPRI ? MYSQL_WAIT_EXCEPT : 0);
    // A hung-up or failed socket: whatever the library waits for, its next attempt says why.
    if (p.revents & (POLLHUP | POLLERR | POLLNVAL)) happened |= status & (MYSQL_WAIT_READ | MYSQL_WAIT_WRITE);
    if (happened != 0) return happened;
  }
}

// Runs one non-blocking operation: start() once, then cont(events) until it completes.
// False when the deadline passed first. The operation must not stay suspended inside the
// library (its state lives on a stack of the library's own): the socket is shut down and the
// operation is told its wait timed out until it gives up, with an error.
template <class Start, class Cont>
bool drive(MYSQL* m, Clock::time_point deadline, Start start, Cont cont) {
  int status = start();
  while (status != 0) {
    int happened = wait_for(m, status, deadline);
    if (happened == 0) {
      mariadb_cancel(m);
      for (int i = 0; status != 0 && i < 100; ++i) status = cont(MYSQL_WAIT_TIMEOUT);
      return false;
    }
    status = cont(happened);
  }
  return true;
}

bool client_error(unsigned code) {
  return (code >= CR_MIN_ERROR && code <= CR_MAX_ERROR) || (code >= CER_MIN_ERROR && code <= CER_MAX_ERROR);
}

// Server errors after which the server ends the session: whatever the statement did, its
// end is not known.
bool session_ending_error(unsigned code) {
  return code == ER_CONNECTION_KILLED || code == ER_SERVER_SHUTDOWN || code == ER_ABORTING_CONNECTION ||
         code == ER_NEW_ABORTING_CONNECTION;
}

std::string ms_text(milliseconds ms) { return std::to_string(ms.count()) + " ms"; }

}  // namespace
}  // namespace mariadb_conn

std::optional<std::string> MariadbResult::value() const {
  if (rows.empty() || rows.front().empty()) return std::nullopt;
  return rows.front().front();
}

MariadbConnection::MariadbConnection(MariadbConnectParams params) : params_(std::move(params)) {
  // mysql_init() initializes the library on first use, which is not thread-safe; workers make
  // clients on several threads.
  static const bool initialized = mysql_library_init(0, nullptr, nullptr) == 0;
  (void)initialized;
}

MariadbConnection::~MariadbConnection() { drop(); }

std::string MariadbConnection::endpoint() const { return params_.host + ":" + std::to_string(params_.port); }

std::uint64_t MariadbConnection::connection_id() const { return mysql_ ? mysql_thread_id(mysql_) : 0; }

void MariadbConnection::drop() {
  // After a lost reply the socket is already shut down; otherwise the session is idle, and
  // mysql_close's goodbye (COM_QUIT, no reply awaited) fits in the empty socket buffer.
  if (mysql_ != nullptr) mysql_close(mysql_);
  mysql_ = nullptr;
}

void MariadbConnection::close() { drop(); }

// The protocol has no message a server sends unasked, so an idle socket that is readable or
// hung up means the session is over: KILL and a restart close it (EOF), wait_timeout resets
// it. What is there to read says which, when it is an error packet.
bool MariadbConnection::session_ended(std::string& why) {
  const int fd = static_cast<int>(mysql_get_socket(mysql_));
  pollfd p{fd, POLLIN, 0};
  int n = ::poll(&p, 1, 0);
  if (n == 0) return false;
  if (n < 0) {
    why = std::string("cannot poll its socket: ") + std::strerror(errno);
    return true;
  }
  unsigned char buf[512];
  ssize_t got = ::recv(fd, buf, sizeof buf, MSG_PEEK | MSG_DONTWAIT);
  if (got == 0) {
    why = "the server closed it";
  } else if (got < 0) {
    why = std::string("its socket failed: ") + std::strerror(errno);
  } else if (got >= 7 && buf[4] == 0xff) {  // an error packet: 4 bytes header, 0xff, code, '#'sqlstate, text
    unsigned code = buf[5] | (buf[6] << 8);
    std::size_t text = got >= 13 && buf[7] == '#' ? 13 : 7;
    why = "the server ended it: " +
          std::string(reinterpret_cast<const char*>(buf) + text, static_cast<std::size_t>(got) - text) +
          " (error " + std::to_string(code) + ")";
  } else {
    why = "the server sent " + std::to_string(got) + " bytes unasked";
  }
  return true;
}

bool MariadbConnection::ensure_connected(std::string& error) {
  std::string why;
  if (mysql_ != nullptr && !session_ended(why)) return true;
  drop();
  const auto deadline = Clock::now() + params_.connect_timeout;
  const std::string within =
      "no session with " + endpoint() + " within " + mariadb_conn::ms_text(params_.connect_timeout);

  mysql_ = mysql_init(nullptr);
  if (mysql_ == nullptr) {
    error = "cannot connect to " + endpoint() + ": Connector/C is out of memory";
    return false;
  }
  mysql_options(mysql_, MYSQL_OPT_NONBLOCK, nullptr);  // the library's default stack size
  unsigned protocol = MYSQL_PROTOCOL_TCP;
  mysql_options(mysql_, MYSQL_OPT_PROTOCOL, &protocol);
  my_bool reconnect = 0;  // a session lost must be seen, not replaced behind our back
  mysql_options(mysql_, MYSQL_OPT_RECONNECT, &reconnect);
  mysql_options(mysql_, MYSQL_SET_CHARSET_NAME, "utf8mb4");
  if (params_.statement_timeout.count() > 0) {
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%.3f",
                  static_cast<double>(params_.statement_timeout.count()) / 1000.0);
    mysql_options(mysql_, MYSQL_INIT_COMMAND,
                  (std::string("SET SESSION max_statement_time = ") + seconds).c_str());
  }

  MYSQL* connected = nullptr;
  const unsigned long flags = CLIENT_FOUND_ROWS;  // an UPDATE counts the rows it matched
  bool in_time = mariadb_conn::drive(
      mysql_, deadline,
      [&] {
        return mysql_real_connect_start(&connected, mysql_, params_.host.c_str(), params_.user.c_str(), nullptr,
                                        nullptr, static_cast<unsigned>(params_.port), nullptr, flags);
      },
      [&](int happened) { return mysql_real_connect_cont(&connected, mysql_, happened); });
  if (!in_time || connected == nullptr) {
    error = in_time ? "cannot connect to " + endpoint() + ": " + mysql_error(mysql_) : within;
    drop();
    return false;
  }
  no_backslash_escapes_ = (mysql_->server_status & SERVER_STATUS_NO_BACKSLASH_ESCAPES) != 0;
  if (!params_.client.empty()) {
    std::string failed = register_session(deadline);
    if (!failed.empty()) {
      error = "cannot register the session with " + endpoint() + ": " + failed;
      drop();
      return false;
    }
  }
  ++session_;
  return true;
}

// Returns why it failed; "" when registered. ON DUPLICATE KEY: a restarted server hands out
// connection ids from 1 again, so a row of an earlier session may hold this one's key.
std::string MariadbConnection::register_session(Clock::time_point deadline) {
  MariadbResult r = exec(
      "INSERT INTO fencecheck.sessions (client, server_id, connection_id, host) VALUES (" + quote(params_.client) +
          ", @@server_id, CONNECTION_ID(), (SELECT HOST FROM information_schema.PROCESSLIST WHERE ID = "
          "CONNECTION_ID())) ON DUPLICATE KEY UPDATE host = VALUES(host)",
      deadline, /*may_reconnect=*/false);
  return r.ok() ? "" : r.error;
}

MariadbResult MariadbConnection::exec(const std::string& sql) {
  // The deadline starts once a session exists: the connect has its own.
  MariadbResult r;
  if (!ensure_connected(r.error)) return r;  // kNotSent
  return exec(sql, Clock::now() + params_.command_timeout, /*may_reconnect=*/false);
}

MariadbResult MariadbConnection::exec(const std::string& sql, Clock::time_point deadline, bool may_reconnect) {
  MariadbResult r;
  if (may_reconnect) {
    if (!ensure_connected(r.error)) return r;  // kNotSent
  } else {
    std::string why;
    if (mysql_ == nullptr) {
      r.error = "no session with " + endpoint() + " to send the statement on";
      return r;  // kNotSent
    }
    if (session_ended(why)) {
      r.error = "the session with " + endpoint() + " had ended before the statement was sent: " + why;
      drop();
      return r;  // kNotSent
    }
  }
  auto lost = [&](std::string why) {
    r.status = MariadbResult::Status::kLost;
    r.error = std::move(why);
    r.rows.clear();
    drop();
    return std::move(r);
  };
  const std::string timeout_text =
      "no reply from " + endpoint() + " within " +
      mariadb_conn::ms_text(std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()));
  // The library's error: one of its own (the session broke) or the server's reply.
  auto failed = [&] {
    r.error_code = mysql_errno(mysql_);
    std::string message = mysql_error(mysql_);
    if (mariadb_conn::client_error(r.error_code)) {
      return lost("session with " + endpoint() + " broke: " + message + " (error " + std::to_string(r.error_code) +
                  ")");
    }
    if (mariadb_conn::session_ending_error(r.error_code)) {
      return lost("session with " + endpoint() + " ended during the statement: " + message + " (error " +
                  std::to_string(r.error_code) + ")");
    }
    r.status = MariadbResult::Status::kError;
    r.error = "mariadb error " + std::to_string(r.error_code) + ": " + message;
    return std::move(r);
  };

  int query_failed = 0;
  bool in_time = mariadb_conn::drive(
      mysql_, deadline, [&] { return mysql_real_query_start(&query_failed, mysql_, sql.data(), sql.size()); },
      [&](int happened) { return mysql_real_query_cont(&query_failed, mysql_, happened); });
  if (!in_time) return lost(timeout_text);
  if (query_failed != 0) return failed();

  if (mysql_field_count(mysql_) > 0) {
    MYSQL_RES* res = nullptr;
    in_time = mariadb_conn::drive(
        mysql_, deadline, [&] { return mysql_store_result_start(&res, mysql_); },
        [&](int happened) { return mysql_store_result_cont(&res, mysql_, happened); });
    if (!in_time) {
      if (res != nullptr) mysql_free_result(res);
      return lost(timeout_text);
    }
    if (res == nullptr) return failed();  // an error after the columns, e.g. max_statement_time
    const unsigned columns = mysql_num_fields(res);
    while (MYSQL_ROW row = mysql_fetch_row(res)) {  // the rows are all in: no I/O
      const unsigned long* lengths = mysql_fetch_lengths(res);
      auto& out = r.rows.emplace_back();
      for (unsigned c = 0; c < columns; ++c) {
        if (row[c] == nullptr) {
          out.emplace_back(std::nullopt);
        } else {
          out.emplace_back(std::string(row[c], lengths[c]));
        }
      }
    }
    mysql_free_result(res);
  } else {
    r.affected = mysql_affected_rows(mysql_);
    r.insert_id = mysql_insert_id(mysql_);
  }
  no_backslash_escapes_ = (mysql_->server_status & SERVER_STATUS_NO_BACKSLASH_ESCAPES) != 0;
  r.status = MariadbResult::Status::kOk;
  return r;
}

std::string MariadbConnection::quote(const std::string& text) const {
  std::string out;
  out.reserve(text.size() + 2);
  out += '\'';
  for (char c : text) {
    if (c == '\'') {
      out += "''";
    } else if (c == '\\' && !no_backslash_escapes_) {
      out += "\\\\";
    } else if (c == '\0' && !no_backslash_escapes_) {
      out += "\\0";
    } else {
      out += c;
    }
  }
  out += '\'';
  return out;
}

bool mariadb_ping(const std::string& host, int port, std::chrono::milliseconds timeout) {
  MariadbConnectParams p;
  p.host = host;
  p.port = port;
  p.connect_timeout = timeout;
  p.command_timeout = timeout;
  MariadbConnection conn(std::move(p));
  MariadbResult r = conn.exec("SELECT 1");
  return r.ok() && r.value() == "1";
}

const std::vector<std::string>& mariadb_schema_statements() {
  static const std::vector<std::string> statements = {
      "CREATE DATABASE IF NOT EXISTS fencecheck CHARACTER SET utf8mb4",
      "CREATE TABLE IF NOT EXISTS fencecheck.sessions ("
      "client VARCHAR(191) NOT NULL, server_id BIGINT UNSIGNED NOT NULL, "
      "connection_id BIGINT UNSIGNED NOT NULL, host VARCHAR(255) NOT NULL, "
      "PRIMARY KEY (client, server_id, connection_id)) ENGINE=InnoDB",
      "CREATE TABLE IF NOT EXISTS fencecheck.leases ("
      "name VARCHAR(191) PRIMARY KEY, owner VARCHAR(191) NOT NULL, "
      "expires_at DATETIME(6) NOT NULL, token BIGINT NOT NULL) ENGINE=InnoDB",
  };
  return statements;
}

int kill_client_sessions(MariadbConnection& conn, const std::string& client, std::string* error) {
  auto give_up = [&](const std::string& why) {
    if (error != nullptr) *error = "cannot end the sessions of " + client + " on " + conn.endpoint() + ": " + why;
    return -1;
  };
  MariadbResult live = conn.exec(
      "SELECT s.connection_id FROM fencecheck.sessions AS s JOIN information_schema.PROCESSLIST AS p "
      "ON p.ID = s.connection_id AND p.HOST = s.host WHERE s.client = " +
      conn.quote(client) + " AND s.server_id = @@server_id AND s.connection_id <> CONNECTION_ID()");
  if (!live.ok()) return give_up(live.error);
  int ended = 0;
  for (const auto& row : live.rows) {
    if (row.empty() || !row.front() || row.front()->empty() ||
        !std::all_of(row.front()->begin(), row.front()->end(), [](char c) { return c >= '0' && c <= '9'; })) {
      return give_up("a connection id that is not a number");
    }
    MariadbResult kill = conn.exec("KILL CONNECTION " + *row.front());
    if (kill.ok()) {
      ++ended;
    } else if (!(kill.status == MariadbResult::Status::kError && kill.error_code == ER_NO_SUCH_THREAD)) {
      return give_up(kill.error);  // ER_NO_SUCH_THREAD: it ended by itself meanwhile
    }
  }
  return ended;
}

}  // namespace fencecheck
