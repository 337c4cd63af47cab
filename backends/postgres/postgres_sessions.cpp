// PostgresServer's statements on its own servers: exec_on, the one way the server side
// talks SQL (the lease table at setup, kill_sessions), and kill_sessions itself.
#include <algorithm>

#include "backends/postgres/postgres_server.h"

namespace fencecheck {
namespace {

using std::chrono::milliseconds;

// $1 the client node. count(*) FILTER, not count(…), which counts a false too:
// pg_terminate_backend says false for a session that went by itself meanwhile. Without its
// timeout argument: that waits in steps of 100 ms (PostgreSQL 15), which would hold the
// client whose grant fired the kill that long; a signalled backend exits, its locks with
// it, within milliseconds.
constexpr const char* kKillSessions =
    "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM pg_stat_activity "
    "WHERE application_name = $1 AND pid <> pg_backend_pid()";

}  // namespace

int PostgresServer::kill_sessions(const std::string& client, const Deadline& deadline) {
  int ended = 0;
  for (const std::string& node : nodes()) {
    const milliseconds left = deadline.left();
    const milliseconds command = left - left / 2;  // half to connect, half for the statement
    PgExecResult r = exec_on(node, "end the sessions of " + client, left / 2, command, kKillSessions, {client});
    ended += std::stoi(r.value());
  }
  return ended;
}

PgExecResult PostgresServer::exec_on(const std::string& node, const std::string& what, milliseconds connect,
                                     milliseconds command, const std::string& sql,
                                     const std::vector<std::string>& params) {
  const Endpoint& e = endpoint(node);
  const HostPort t = runtime().probe_target(node, e.address, e.port);
  PgConnectParams p;
  p.host = t.address;
  p.port = t.port;
  p.application_name = "fencecheck";  // no client node's name: kill_sessions leaves it alone
  p.connect_timeout = connect;        // 0 ms (a deadline already past): a definite failure
  p.command_timeout = command;
  // The server, too, stops a statement the caller has given up on (0 would mean never).
  p.server_settings.emplace_back("statement_timeout", std::to_string(std::max<std::int64_t>(1, command.count())));
  PgExecResult r;
  runtime().run_in(node, [&] { r = PgConnection(std::move(p)).exec(sql, params); });
  if (r.status != PgExecResult::Status::kRows) {
    throw HarnessError("postgres on node " + node + ": cannot " + what + ": " + r.error);
  }
  return r;
}

}  // namespace fencecheck
