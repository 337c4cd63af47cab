// A process of the ssh runtime: it runs on a node's host, started by a local ssh client
// (a supervised child of the controller) whose output is the process's output and whose
// exit is the process's exit. Signals act on the host: they go to the remote process
// group, whose id the remote side wrote to a pid file before it exec'd. Internal to
// platform/.
//
// Thread-safe. pid() is the local ssh client's pid (no local process is the remote one:
// inspecting it under /proc finds ssh). Each signal is one ssh exec (≤ 10 s, retried on
// transport failures); pause() waits up to its timeout on the host.
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
  void signal(int sig) override;
  bool pause(std::chrono::milliseconds timeout) override;
  void resume() override;
  bool paused() const override { return paused_; }
  void expect_exit() override { local_.expect_exit(); }
  bool exit_expected() const override { return local_.exit_expected(); }
  void crash() override;
  void stop(std::chrono::milliseconds grace) override;
  std::string log_tail(std::size_t lines) const override { return local_.log_tail(lines); }
  // True when some member of the remote group has mapped remote_path (as the host names
  // it). One ssh exec (≤ 10 s); false when the group is gone.
  bool group_maps(const std::string& remote_path);

 private:
  // The remote process group, read from the pid file (waits up to 5 s for it); 0 if the
  // process never got that far.
  int group();
  // Runs `kill -s NAME -- -G` (and `extra`, which may wait up to `waits`) on the host;
  // false when the group is gone or extra failed.
  bool signal_group(const std::string& name, const std::string& extra = "",
                    std::chrono::milliseconds waits = std::chrono::milliseconds(0));
  bool wait_local_exit(std::chrono::milliseconds timeout);

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
