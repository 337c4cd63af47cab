// fclazydisk: a FUSE file system that loses what was not fsync'd when its process dies,
// to emulate a power failure for servers that write through the page cache and fsync
// lazily (NATS JetStream fsyncs every 2 minutes), on a machine without dm-flakey or lazyfs.
//
//   fclazydisk [--no-direct-io] [--writeback-ms N] [-o OPT,...] [-d] BACKING_DIR MOUNTPOINT
//
// MOUNTPOINT shows BACKING_DIR (a passthrough: every call is done on the backing file,
// by the high-level libfuse3 API, multi-threaded). Data written to a file stays in this
// process's memory (file_table.h) until the file is fsync'd or fdatasync'd, or written
// through an O_SYNC/O_DSYNC handle; then it goes to the backing file, which is fsync'd.
// Reads and sizes see the backing file with the unsynced bytes on top.
// --writeback-ms N (N > 0; default 0: never) imitates a kernel's dirty-page write-back
// (vm.dirty_expire_centisecs, 30 s by default, checked every 5 s): a thread (writeback.h)
// wakes every P = min(N/4, 500) ms (at least 1 ms) and writes each file's unsynced bytes
// to its backing file (pwrite, no fsync: the backing file system's page cache outlives
// this process) once they have been unsynced for N ms. Age is per file, as the kernel's
// per-inode dirtied_when: the time the file went from no unsynced bytes to some; then all
// of them go, also those written just before. The bound: a write older than N + P ms
// (plus the time the write-back of the files before it takes) has reached the backing
// file and survives a crash; a younger one may or may not. A crash during a write-back
// leaves part of that file's overlay written, as a kernel's partial write-back would.
// Simplification: metadata is durable at once — create, mkdir, unlink, rename, link,
// chmod/chown/utimens, truncate and fallocate are done on the backing directory when
// called (after a crash a file written but never fsync'd exists, with its backing size:
// 0 for a new file; a truncate is kept even when the data before it was lost).
//
// Stopping: SIGKILL of this process is the power failure — the unsynced bytes only lived
// here. The mount is then dead (ENOTCONN, "Transport endpoint is not connected"):
// `fusermount3 -u -z MOUNTPOINT` (or umount -l) detaches it, and a new fclazydisk on the
// same BACKING_DIR shows only what was fsync'd. A clean stop — SIGTERM, SIGINT, SIGHUP, or
// `fusermount3 -u MOUNTPOINT` — flushes every file like a kernel's clean shutdown does,
// then unmounts and exits 0 (the flush is done when the process has exited).
// SIGUSR1 prints one line of stats to stderr (files and bytes not yet synced, bytes the
// write-back has written); nothing else is logged unless libfuse or a write-back fails
// (-d: libfuse's debug trace).
//
// Readiness: the program stays in the foreground; the mount is ready once stat(MOUNTPOINT)
// reports another st_dev than before it was started (or MOUNTPOINT appears in
// /proc/self/mountinfo with type fuse.fclazydisk). If the process exits first, the mount
// failed (its stderr says why; exit code 1).
//
// Mount options: default_permissions always (the kernel checks modes against the caller,
// as on a local disk); allow_other when started as root (servers that run as other users
// — postgres, mariadb — can use it; a non-root mounter needs user_allow_other in
// /etc/fuse.conf and -o allow_other). As root, files, directories, nodes and symlinks made
// through the mount belong to the caller (fuse_get_context), as on a local disk.
// direct_io (the default) keeps the kernel's page cache out: every read and write reaches
// this process. With direct_io a MAP_SHARED mmap of a file fails with ENODEV (MAP_PRIVATE
// works); --no-direct-io lets the kernel cache pages (writes still pass through at once,
// the cache dies with the mount), which MAP_SHARED users such as etcd's bbolt need
// (etcd 3.4 panics "cannot open database ... (no such device)" under direct_io).
// nats-server 2.9 maps no file of its store (strace), and fsyncs nothing until its 2 min
// sync interval: after a crash of this file system within that time its streams are gone
// (meta.inf empty: "checksums do not match"). A kernel would have written dirty pages back
// within ~30 s (dirty_expire_centisecs); this file system does not unless given
// --writeback-ms (--writeback-ms 30000 for a kernel's default): without it, the worst case.
// Cost (2-core VM, ext4): 4 KiB appends ~280 MB/s through the mount, ~1.6 GB/s direct.
//
// Not supported: extended attributes, SEEK_DATA/SEEK_HOLE (the whole file is data),
// fallocate modes other than 0 and KEEP_SIZE, POSIX/flock locks across processes are the
// kernel's own (local to this mount). The unsynced bytes are unbounded in memory.
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "nemesis/disk/passthrough.h"

namespace fencecheck::lazydisk {
namespace {

int usage() {
  std::fprintf(stderr,
               "usage: fclazydisk [--no-direct-io] [--writeback-ms N] [-o OPT,...] [-d] BACKING_DIR MOUNTPOINT\n");
  return 2;
}

// A --writeback-ms value: a decimal count of milliseconds, >= 0.
bool parse_ms(const std::string& text, std::chrono::milliseconds* out) {
  if (text.empty() || text.size() > 12 || text.find_first_not_of("0123456789") != std::string::npos) return false;
  *out = std::chrono::milliseconds(std::stoll(text));
  return true;
}

}  // namespace
}  // namespace fencecheck::lazydisk

int main(int argc, char** argv) {
  using namespace fencecheck::lazydisk;
  static State state;
  std::string options = "fsname=fclazydisk,subtype=fclazydisk,default_permissions,max_idle_threads=10";
  std::vector<std::string> positional;
  bool debug = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    bool ok = true;
    if (a == "--no-direct-io") state.direct_io = false;
    else if (a == "--writeback-ms" && i + 1 < argc) ok = parse_ms(argv[++i], &state.writeback_age);
    else if (a.rfind("--writeback-ms=", 0) == 0) ok = parse_ms(a.substr(15), &state.writeback_age);
    else if (a == "-d") debug = true;
    else if (a == "-o" && i + 1 < argc) options += std::string(",") + argv[++i];
    else if (a == "-h" || a == "--help") return usage(), 0;
    else if (!a.empty() && a[0] == '-') return usage();
    else positional.push_back(a);
    if (!ok) return usage();
  }
  if (positional.size() != 2) return usage();
  state.as_root = ::geteuid() == 0;
  if (state.as_root) options += ",allow_other";
  state.root = ::open(positional[0].c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (state.root < 0) {
    std::fprintf(stderr, "fclazydisk: %s: %s\n", positional[0].c_str(), std::strerror(errno));
    return 1;
  }
  ::umask(0);  // the kernel applied the caller's umask already
  // An entry with unsynced bytes keeps an fd: allow as many as the hard limit.
  if (rlimit rl; ::getrlimit(RLIMIT_NOFILE, &rl) == 0) {
    rl.rlim_cur = rl.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &rl);
  }
  // SIGUSR1: stats from a thread of its own; every other thread (libfuse's workers are
  // started from this one) inherits the blocked mask.
  sigset_t usr1;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, &usr1, nullptr);
  std::thread([usr1] {
    for (;;) {
      int sig = 0;
      if (sigwait(&usr1, &sig) != 0) continue;
      TableStats s = state.table.stats();
      std::fprintf(stderr,
                   "fclazydisk: %zu files with unsynced data, %zu bytes unsynced in %zu extents, %zu entries, "
                   "%zu bytes written back\n",
                   s.unsynced_files, s.unsynced_bytes, s.extents, s.open_files, s.written_back_bytes);
    }
  }).detach();

  // SIGTERM, SIGINT, SIGHUP: a clean stop (libfuse leaves handlers it finds in place).
  struct sigaction sa {};
  sa.sa_handler = request_stop;  // no SA_RESTART: a worker's read of /dev/fuse returns EINTR
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) sigaction(sig, &sa, nullptr);

  std::vector<std::string> args = {argv[0], "-f", "-o", options, positional[1]};
  if (debug) args.push_back("-d");
  std::vector<char*> cargs;
  for (auto& a : args) cargs.push_back(a.data());
  fuse_operations ops = passthrough_ops(&state);
  return fuse_main(int(cargs.size()), cargs.data(), &ops, nullptr);
}
