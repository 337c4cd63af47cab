// A process of the ssh runtime: it runs on a node's host, started by a local ssh client
// (a supervised child of the controller) whose output is the process's output and whose
// exit is the process's exit. Signals act on the host: they go to the remote process
// group, whose id the remote side wrote to a pid file before it exec'd. Internal to
// platform/.
//
// Thread-safe. pid() is the local ssh client's pid (no local process is the remote one:
// inspecting it under /proc finds ssh). Each signal is one ssh exec by the caller's
// deadline (a signal is idempotent: retried on transport failures while the deadline
// lasts); pause() waits on the host until the deadline. stop(grace) ends within grace + 1 s
// even when the host is silent: what it leaves there is the run's removal's (or
// `fencecheck clean --nodes-file`'s).
#pragma once

#include <atomic>
#include <mutex>
#include <string>

#include "platform/process.h"
#include "platform/ssh_remote.h"

namespace fencecheck {

class RemoteProcess final : public Process {
 public:
  // local: the ssh client running the command that writes pid_file on the host. spec:
  // what the caller asked for (its paths as the controller sees them).
  RemoteProcess(ProcessSpec spec, Process& local, const SshHostConnection& host, std::string pid_file);

  const ProcessSpec& spec() const override { return spec_; }
  int pid() const override { return local_.pid(); }
  bool alive() override { return local_.alive(); }
  std::optional<int> exit_status() override { return local_.exit_status(); }
  std::string describe_exit() override;
  void signal(int sig, const Deadline& deadline) override;
  bool pause(const Deadline& deadline) override;
  void resume(const Deadline& deadline) override;
  bool paused() const override { return paused_; }
  void expect_exit() override { local_.expect_exit(); }
  bool exit_expected() const override { return local_.exit_expected(); }
  void crash(const Deadline& deadline) override;
  void stop(std::chrono::milliseconds grace) override;
  std::string log_tail(std::size_t lines) const override { return local_.log_tail(lines); }
  // True when some member of the remote group has mapped remote_path (as the host names
  // it). One ssh exec by the deadline; false when the group is gone.
  bool group_maps(const std::string& remote_path, const Deadline& deadline);

 private:
  // The remote process group, read from the pid file (waits for it up to 5 s, or the
  // deadline); 0 if the process never got that far. Throws HarnessError when the host
  // does not answer by the deadline.
  int group(const Deadline& deadline);
  // Runs `kill -s NAME -- -G` (and `extra`, a wait on the host that ends by itself before
  // the deadline) on the host; false when the group is gone or extra failed. Throws
  // HarnessError when the host does not answer by the deadline.
  bool signal_group(const std::string& name, const Deadline& deadline, const std::string& extra = "");
  bool wait_local_exit(const Deadline& deadline);

  ProcessSpec spec_;
  Process& local_;
  const SshHostConnection& host_;
  const std::string pid_file_;
  std::mutex mu_;  // group_
  int group_ = 0;
  std::atomic<bool> paused_{false};
  std::atomic<bool> stopped_{false};
};

}  // namespace fencecheck
