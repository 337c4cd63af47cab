// One host of the ssh runtime, driven through OpenSSH (Jepsen's "shelling out is faster"):
// a ControlMaster connection opened once, and every command, upload and forward carried
// over it. BatchMode: nothing ever prompts. Internal to platform/.
//
// Blocking and errors: every remote call takes the caller's Deadline (platform/deadline.h)
// and returns or throws by then: the local ssh client is killed when it passes or its
// cancel check says so. A command marked Retry::kIdempotent (running it twice does what
// running it once does) is run again after a transport failure (ssh's own exit 255: no
// connection, the master gone), 100 ms, 200 ms, 400 ms … apart while the deadline lasts; a
// command that is not idempotent is never run twice, and a command that timed out is never
// run again (it may still be running on the host). A command's own exit code is never
// retried. A host whose last command got no answer is silent() until one is answered again:
// a teardown gives its steps on such a host at most kSilentHostWait each (not each its
// whole deadline), while the run's own commands keep theirs. Thread-safe: OpenSSH multiplexes concurrent sessions over the master
// (sshd's MaxSessions, 10 by default, bounds them; the runtime keeps well below).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

#include "platform/deadline.h"
#include "platform/nodes_file.h"

namespace fencecheck {

class RunState;

// 'text' single-quoted for sh, safe whatever it holds.
std::string shell_quote(const std::string& text);

struct SshResult {
  int exit = -1;    // the remote command's exit code
  std::string out;  // its stdout and stderr
};

// How long a teardown step on a silent host may wait.
inline constexpr std::chrono::milliseconds kSilentHostWait{300};

// Whether a remote command may be run again after a transport failure.
enum class Retry {
  kNever,       // it changes something each time (starts a process, appends): at most once
  kIdempotent,  // running it twice does what running it once does
};

class SshHostConnection {
 public:
  // control_path: the master's socket (short: sun_path holds 107 bytes).
  SshHostConnection(SshHost host, std::filesystem::path control_path);
  ~SshHostConnection();  // close() within 5 s
  SshHostConnection(const SshHostConnection&) = delete;
  SshHostConnection& operator=(const SshHostConnection&) = delete;

  const SshHost& host() const { return host_; }
  // ssh's argv up to the destination (options, -S, user@host): append a command to it.
  std::vector<std::string> argv() const;

  // Opens the master (authenticates once) and records its process in state (when not
  // null), so that `fencecheck clean` ends it after a crash. Retried on transport failures
  // within the deadline. Throws HarnessError quoting ssh's own words.
  void open(RunState* state, const std::filesystem::path& log, const Deadline& deadline);
  // Runs a shell command line on the host with `input` on its stdin, by the deadline.
  // Throws HarnessError when it could not be run (a transport failure, or no answer by the
  // deadline: "no answer within 2000 ms"); a non-zero exit is the caller's to judge.
  SshResult exec(const std::string& command, const std::string& input, const Deadline& deadline,
                 Retry retry) const;
  // exec(), throwing HarnessError "<what> on <host>: …" unless it exits 0; returns stdout.
  std::string check(const std::string& command, const std::string& what, const std::string& input,
                    const Deadline& deadline, Retry retry) const;
  // Forwards the local unix socket `local` to `remote` on the host (the worker's control
  // socket): the control plane rides the ssh connection, never the test network.
  void forward_unix(const std::filesystem::path& local, const std::string& remote, const Deadline& deadline) const;
  // A 127.0.0.1 port on the controller whose connections reach address:port as the host
  // sees it (readiness probes). One forward per target, kept until close().
  std::uint16_t forward_tcp(const std::string& address, std::uint16_t port, const Deadline& deadline);
  // The last command got no answer (and none has been answered since).
  bool silent() const { return silent_; }
  // Ends the master (and every forward), waiting for it at most until the deadline.
  // Idempotent; never throws.
  void close(const Deadline& deadline) noexcept;

 private:
  SshHost host_;
  std::filesystem::path control_path_;
  std::mutex mu_;  // forwards_
  std::vector<std::pair<std::string, std::uint16_t>> forwards_;  // "address:port" → local port
  bool open_ = false;
  mutable std::atomic<bool> silent_{false};  // the last command got no answer
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
// The run ids that left a directory or a chain on the host. One exec by the deadline.
std::vector<std::string> remote_run_ids(const SshHostConnection& host, const Deadline& deadline);
// Kills every process of run_id on the host, removes its chain (and INPUT's jumps to it)
// and its directory. Idempotent. One exec by the deadline; throws HarnessError when it fails.
void remove_remote_run(const SshHostConnection& host, const std::string& run_id, const Deadline& deadline);
// The shell script remove_remote_run runs on the host (fed to `sh -s`): it exits 0 once the
// run left nothing there. Throws HarnessError for a malformed run id.
std::string remote_run_removal_script(const std::string& run_id);

}  // namespace fencecheck
