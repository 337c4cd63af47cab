// LazyDisks: a server's data directory on fclazydisk (nemesis/disk/), one per node, so that
// a crash of the node can be a power failure: the node's server and its disk are killed
// together, and every write the server had not fsynced is gone — the page cache of a machine
// that lost power. A backend that offers it (nats: crash_loses=unsynced) mounts each node's
// disk before it launches the node's server, and crashes it after killing the server.
//
// The disk: `fclazydisk --writeback-ms W BACKING MOUNTPOINT`, spawned through the Runtime on
// the node (log: nodes/<node>/fclazydisk.log), on this machine's files — only the local and
// netns runtimes, as root (a FUSE mount by a non-root user needs fusermount3; not done).
// W imitates the kernel's write-back of dirty pages (vm.dirty_expire_centisecs): a write
// older than W (plus a check period of min(W/4, 500 ms)) survives the crash. The mount point
// is recorded in the RunState first (Runtime::record_mount), so that `fencecheck clean`
// detaches it after a controller's crash.
//
// Thread-safety: every call may come from any thread (kill-server kills nodes on threads of
// their own); the lock is never held while spawning, waiting or signalling. Blocking: mount
// up to its deadline (the mount is ready within ~50 ms); crash by its deadline; stop_all
// up to 3 s per disk. Errors: HarnessError naming the node and quoting the disk's log.
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "platform/deadline.h"
#include "platform/runtime.h"

namespace fencecheck {

class LazyDisks {
 public:
  explicit LazyDisks(std::chrono::milliseconds writeback) : writeback_(writeback) {}

  // fclazydisk: $FENCECHECK_LAZYDISK when set, else beside the running executable, else on
  // $PATH; nullopt when none is there.
  static std::optional<std::filesystem::path> find_program();
  // Whether this runtime can have them (local or netns, as root); nullopt when it can, else why not.
  static std::optional<std::string> unsupported(const Runtime& runtime);

  // Mounts node's disk at mountpoint over backing (both made if missing) unless it is
  // mounted already, and waits until the mount answers.
  void mount(Runtime& runtime, const std::string& node, const std::filesystem::path& backing,
             const std::filesystem::path& mountpoint, const Deadline& deadline);
  // The power failure: SIGKILL to node's disk, then its mount detached. No-op when none.
  void crash(Runtime& runtime, const std::string& node, const Deadline& deadline);
  // Clean stops (SIGTERM: the disk writes what it holds and unmounts). Never throws.
  void stop_all(Runtime& runtime) noexcept;

 private:
  struct Disk {
    Process* process = nullptr;
    std::filesystem::path mountpoint;
  };
  std::optional<Disk> take(const std::string& node);
  std::chrono::milliseconds writeback_;
  std::mutex mu_;  // disks_; never held while spawning or waiting
  std::map<std::string, Disk> disks_;
};

}  // namespace fencecheck
