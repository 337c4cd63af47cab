#include "backends/lazy_disks.h"

#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "platform/errors.h"
#include "platform/os_util.h"

namespace fencecheck {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

// A FUSE mount answers at mountpoint once it is another device than its parent directory.
bool is_mounted(const fs::path& mountpoint) {
  struct stat self{}, parent{};
  if (::stat(mountpoint.c_str(), &self) != 0) return false;
  if (::stat(mountpoint.parent_path().c_str(), &parent) != 0) return false;
  return self.st_dev != parent.st_dev;
}

void detach(const fs::path& mountpoint) {
  if (::umount2(mountpoint.c_str(), MNT_DETACH) != 0 && errno != EINVAL && errno != ENOENT) {
    throw HarnessError("cannot detach " + mountpoint.string() + ": " + std::strerror(errno));
  }
}

}  // namespace

std::optional<fs::path> LazyDisks::find_program() {
  if (const char* env = std::getenv("FENCECHECK_LAZYDISK"); env != nullptr && *env != '\0') {
    return fs::exists(env) ? std::optional<fs::path>(env) : std::nullopt;
  }
  std::error_code ec;
  const fs::path beside = fs::read_symlink("/proc/self/exe", ec).parent_path() / "fclazydisk";
  if (!ec && fs::exists(beside)) return beside;
  if (auto found = os::find_executable("fclazydisk")) return fs::path(*found);
  return std::nullopt;
}

std::optional<std::string> LazyDisks::unsupported(const Runtime& runtime) {
  if (runtime.kind() != "local" && runtime.kind() != "netns") {
    return "a power failure (fclazydisk) needs the servers' files on this machine: the local or netns runtime, not " +
           std::string(runtime.kind());
  }
  if (::geteuid() != 0) return "a power failure (fclazydisk) mounts a FUSE file system: run as root";
  if (!fs::exists("/dev/fuse")) return "a power failure (fclazydisk) needs /dev/fuse";
  if (!find_program()) return "fclazydisk is not built beside fencecheck (its build needs libfuse3-dev)";
  return std::nullopt;
}

void LazyDisks::mount(Runtime& runtime, const std::string& node, const fs::path& backing, const fs::path& mountpoint,
                      const Deadline& deadline) {
  {
    std::lock_guard lock(mu_);
    auto it = disks_.find(node);
    if (it != disks_.end() && it->second.process->alive()) return;
  }
  std::optional<fs::path> program = find_program();
  if (!program) throw HarnessError(node + ": fclazydisk is not built beside fencecheck (its build needs libfuse3-dev)");
  fs::create_directories(backing);
  detach(mountpoint);  // what a crash left, should the last detach have failed
  fs::create_directories(mountpoint);
  runtime.record_mount(mountpoint);
  ProcessSpec spec;
  spec.node = node;
  spec.name = "fclazydisk";
  spec.argv = {program->string(), "--writeback-ms", std::to_string(writeback_.count()), backing.string(),
               mountpoint.string()};
  spec.log = backing.parent_path() / "fclazydisk.log";
  Process& p = runtime.spawn(spec);
  {
    std::lock_guard lock(mu_);
    disks_[node] = Disk{&p, mountpoint};
  }
  while (!is_mounted(mountpoint)) {
    if (!p.alive()) throw HarnessError(node + ": fclazydisk " + p.describe_exit() + ":\n" + p.log_tail(10));
    if (deadline.expired()) throw HarnessError(node + ": fclazydisk did not mount " + mountpoint.string() + " within " +
                                               deadline.budget_text());
    std::this_thread::sleep_for(milliseconds(20));
  }
}

std::optional<LazyDisks::Disk> LazyDisks::take(const std::string& node) {
  std::lock_guard lock(mu_);
  auto it = disks_.find(node);
  if (it == disks_.end()) return std::nullopt;
  Disk d = it->second;
  disks_.erase(it);
  return d;
}

void LazyDisks::crash(Runtime& runtime, const std::string& node, const Deadline& deadline) {
  std::optional<Disk> d = take(node);
  if (!d) return;
  d->process->crash(deadline);
  detach(d->mountpoint);
  runtime.forget_mount(d->mountpoint);
}

void LazyDisks::stop_all(Runtime& runtime) noexcept {
  std::map<std::string, Disk> disks;
  {
    std::lock_guard lock(mu_);
    disks.swap(disks_);
  }
  for (auto& [node, d] : disks) {
    try {
      d.process->stop(milliseconds(2000));
      detach(d.mountpoint);  // a clean stop unmounts; a SIGKILL after the grace would not
      runtime.forget_mount(d.mountpoint);
    } catch (const std::exception&) {
      // the RunState keeps the mount recorded: its destructor and `fencecheck clean` detach it
    }
  }
}

}  // namespace fencecheck
