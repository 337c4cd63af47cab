// One host of the ssh runtime, driven through OpenSSH (Jepsen's "shelling out is faster"):
// a ControlMaster connection opened once, and every command, upload and forward carried
// over it. BatchMode: nothing ever prompts. Internal to platform/.
//
// Errors: exec() retries a transport failure (ssh's own exit 255: no connection, the
// master gone) up to 4 more times, 100 ms, 200 ms, 400 ms, 800 ms apart; a command's own
// exit code is never retried. Thread-safe: OpenSSH multiplexes concurrent sessions over the
// master (sshd's MaxSessions, 10 by default, bounds them; the runtime keeps well below).
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

#include "platform/nodes_file.h"

namespace fencecheck {

class RunState;

// 'text' single-quoted for sh, safe whatever it holds.
std::string shell_quote(const std::string& text);

struct SshResult {
  int exit = -1;    // the remote command's exit code
  std::string out;  // its stdout and stderr
};

class SshHostConnection {
 public:
  // control_path: the master's socket (short: sun_path holds 107 bytes).
  SshHostConnection(SshHost host, std::filesystem::path control_path);
  ~SshHostConnection();  // close()
  SshHostConnection(const SshHostConnection&) = delete;
  SshHostConnection& operator=(const SshHostConnection&) = delete;

  const SshHost& host() const { return host_; }
  // ssh's argv up to the destination (options, -S, user@host): append a command to it.
  std::vector<std::string> argv() const;

  // Opens the master (authenticates once) and records its process in state (when not
  // null), so that `fencecheck clean` ends it after a crash. Blocks up to 15 s per attempt
  // (5 attempts on transport failures). Throws HarnessError quoting ssh's own words.
  void open(RunState* state, const std::filesystem::path& log);
  // Runs a shell command line on the host with `input` on its stdin and waits up to
  // timeout (per attempt). Throws HarnessError when it could not be run (every attempt
  // failed in transport or timed out); a non-zero exit is the caller's to judge.
  SshResult exec(const std::string& command, const std::string& input = "",
                 std::chrono::milliseconds timeout = std::chrono::milliseconds(10000)) const;
  // exec(), throwing HarnessError "<what> on <host>: …" unless it exits 0; returns stdout.
  std::string check(const std::string& command, const std::string& what, const std::string& input = "",
                    std::chrono::milliseconds timeout = std::chrono::milliseconds(10000)) const;
  // Forwards the local unix socket `local` to `remote` on the host (the worker's control
  // socket): the control plane rides the ssh connection, never the test network.
  void forward_unix(const std::filesystem::path& local, const std::string& remote) const;
  // A 127.0.0.1 port on the controller whose connections reach address:port as the host
  // sees it (readiness probes). One forward per target, kept until close(). Blocks ≤ 10 s.
  std::uint16_t forward_tcp(const std::string& address, std::uint16_t port);
  // Ends the master (and every forward). Idempotent; never throws.
  void close() noexcept;

 private:
  SshHost host_;
  std::filesystem::path control_path_;
  std::mutex mu_;  // forwards_
  std::vector<std::pair<std::string, std::uint16_t>> forwards_;  // "address:port" → local port
  bool open_ = false;
  RunState* state_ = nullptr;  // where the master's process is recorded
  int master_pid_ = 0;
};

// Ends every ControlMaster whose socket is in dir (a crashed run's); never throws.
void close_ssh_masters_in(const std::filesystem::path& dir) noexcept;

}  // namespace fencecheck

namespace fencecheck {

// Where a run keeps its files on a host: kRemoteBase/<run id>/<node>/. The processes it
// starts there carry FENCECHECK_RUN=<run id> in their environment, and its firewall rules
// sit in the chain fc-<run id> jumped to from INPUT: that is how they are found again.
inline constexpr const char* kRemoteBase = "/var/tmp/fencecheck";
std::string remote_chain(const std::string& run_id);
// The run ids that left a directory or a chain on the host. Blocks like exec().
std::vector<std::string> remote_run_ids(const SshHostConnection& host);
// Kills every process of run_id on the host, removes its chain (and INPUT's jumps to it)
// and its directory. Idempotent. Blocks like exec(); throws HarnessError when it fails.
void remove_remote_run(const SshHostConnection& host, const std::string& run_id);

}  // namespace fencecheck
