// The FUSE operations of fclazydisk: see passthrough.h.
#include "nemesis/disk/passthrough.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>

namespace fencecheck::lazydisk {
namespace {

State* g = nullptr;
// The file system, once init has run, for request_stop; a stop requested before init ends
// the loop as soon as it starts.
std::atomic<fuse*> g_fuse{nullptr};
volatile sig_atomic_t g_stop = 0;

void on_stop_signal_impl() {
  g_stop = 1;
  if (fuse* f = g_fuse.load()) fuse_exit(f);
}

// An open regular file: the backing fd (without O_APPEND, O_DIRECT or O_SYNC) and its entry.
struct Handle {
  int fd = -1;
  FileKey key;
  std::shared_ptr<FileEntry> entry;
  bool append = false;
  bool sync = false;
};

Handle* handle(fuse_file_info* fi) { return reinterpret_cast<Handle*>(fi->fh); }
DIR* dir_handle(fuse_file_info* fi) { return reinterpret_cast<DIR*>(fi->fh); }
// A FUSE path ("/a/b") relative to the backing directory.
const char* rel(const char* path) { return path[1] == '\0' ? "." : path + 1; }
int result(int rc) { return rc == 0 ? 0 : -errno; }

// As root, what the caller makes through the mount is the caller's.
void give_to_caller(const char* path) {
  if (!g->as_root) return;
  const fuse_context* ctx = fuse_get_context();
  ::fchownat(g->root, rel(path), ctx->uid, ctx->gid, AT_SYMLINK_NOFOLLOW);
}

// The key and link count of path, or false when it is not a regular file.
bool regular_file(const char* path, FileKey* key, nlink_t* nlink) {
  struct stat st;
  if (::fstatat(g->root, rel(path), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) return false;
  *key = FileKey::of(st);
  *nlink = st.st_nlink;
  return true;
}

void* op_init(fuse_conn_info*, fuse_config* cfg) {
  cfg->use_ino = 1;      // the backing files' inode numbers
  cfg->hard_remove = 1;  // no .fuse_hidden files in the backing directory after a crash
  cfg->nullpath_ok = 1;  // calls on an open unlinked file come with its handle, no path
  cfg->direct_io = g->direct_io ? 1 : 0;
  cfg->kernel_cache = 0;
  cfg->auto_cache = 0;
  g_fuse = fuse_get_context()->fuse;
  if (g_stop) fuse_exit(g_fuse);
  g->writeback.start(&g->table, g->writeback_age);
  return nullptr;
}

void op_destroy(void*) {
  g->writeback.stop();
  if (int rc = g->table.flush_all(); rc != 0)
    std::fprintf(stderr, "fclazydisk: flushing at shutdown failed: %s\n", std::strerror(-rc));
}

int op_getattr(const char* path, struct stat* st, fuse_file_info* fi) {
  if (fi) {
    Handle* h = handle(fi);
    if (::fstat(h->fd, st) != 0) return -errno;
    if (h->entry) FileTable::adjust(*h->entry, st);
    return 0;
  }
  if (::fstatat(g->root, rel(path), st, AT_SYMLINK_NOFOLLOW) != 0) return -errno;
  if (S_ISREG(st->st_mode))
    if (auto e = g->table.find(FileKey::of(*st))) FileTable::adjust(*e, st);
  return 0;
}

int op_readlink(const char* path, char* buf, size_t size) {
  ssize_t n = ::readlinkat(g->root, rel(path), buf, size - 1);
  if (n < 0) return -errno;
  buf[n] = '\0';
  return 0;
}

int op_mknod(const char* path, mode_t mode, dev_t rdev) {
  if (::mknodat(g->root, rel(path), mode, rdev) != 0) return -errno;
  give_to_caller(path);
  return 0;
}

int op_mkdir(const char* path, mode_t mode) {
  if (::mkdirat(g->root, rel(path), mode) != 0) return -errno;
  give_to_caller(path);
  return 0;
}

int op_symlink(const char* target, const char* path) {
  if (::symlinkat(target, g->root, rel(path)) != 0) return -errno;
  give_to_caller(path);
  return 0;
}

int op_unlink(const char* path) {
  FileKey key;
  nlink_t nlink = 0;
  const bool file = regular_file(path, &key, &nlink);
  if (::unlinkat(g->root, rel(path), 0) != 0) return -errno;
  if (file && nlink == 1) g->table.unlinked(key);
  return 0;
}

int op_rmdir(const char* path) { return result(::unlinkat(g->root, rel(path), AT_REMOVEDIR)); }

int op_rename(const char* from, const char* to, unsigned int flags) {
  // A regular file replaced by the rename loses its last name: its unsynced bytes go.
  FileKey victim, source;
  nlink_t nlink = 0, source_nlink = 0;
  const bool replaces = !(flags & (RENAME_EXCHANGE | RENAME_NOREPLACE)) && regular_file(to, &victim, &nlink) &&
                        nlink == 1 && !(regular_file(from, &source, &source_nlink) && source == victim);
  if (::renameat2(g->root, rel(from), g->root, rel(to), flags) != 0) return -errno;
  if (replaces) g->table.unlinked(victim);
  return 0;
}

int op_link(const char* from, const char* to) { return result(::linkat(g->root, rel(from), g->root, rel(to), 0)); }

int op_chmod(const char* path, mode_t mode, fuse_file_info* fi) {
  if (fi) return result(::fchmod(handle(fi)->fd, mode));
  return result(::fchmodat(g->root, rel(path), mode, 0));
}

int op_chown(const char* path, uid_t uid, gid_t gid, fuse_file_info* fi) {
  if (fi) return result(::fchown(handle(fi)->fd, uid, gid));
  return result(::fchownat(g->root, rel(path), uid, gid, AT_SYMLINK_NOFOLLOW));
}

int op_truncate(const char* path, off_t size, fuse_file_info* fi) {
  if (fi) {
    Handle* h = handle(fi);
    return h->entry ? FileTable::truncate(*h->entry, h->fd, size) : result(::ftruncate(h->fd, size));
  }
  int fd = ::openat(g->root, rel(path), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return -errno;
  int rc;
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    rc = -errno;
  } else if (auto e = S_ISREG(st.st_mode) ? g->table.find(FileKey::of(st)) : nullptr) {
    rc = FileTable::truncate(*e, fd, size);
  } else {
    rc = result(::ftruncate(fd, size));
  }
  ::close(fd);
  return rc;
}

int open_file(const char* path, fuse_file_info* fi, bool create, mode_t mode) {
  const int flags = fi->flags;
  const int strip = O_APPEND | O_DIRECT | O_SYNC | O_DSYNC | O_TRUNC;
  int fd = ::openat(g->root, rel(path), (flags & ~strip) | O_CLOEXEC | (create ? O_CREAT : 0), mode);
  if (fd < 0) return -errno;
  if (create) give_to_caller(path);
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int rc = -errno;
    ::close(fd);
    return rc;
  }
  auto* h = new Handle;
  h->fd = fd;
  h->append = flags & O_APPEND;
  h->sync = flags & O_DSYNC;
  if (S_ISREG(st.st_mode)) {
    h->key = FileKey::of(st);
    h->entry = g->table.open(h->key);
    if ((flags & O_TRUNC) && (flags & O_ACCMODE) != O_RDONLY) {
      if (int rc = FileTable::truncate(*h->entry, fd, 0); rc != 0) {
        g->table.release(h->key, h->entry, fd);
        ::close(fd);
        delete h;
        return rc;
      }
    }
  }
  fi->fh = reinterpret_cast<uint64_t>(h);
  fi->direct_io = g->direct_io ? 1 : 0;
  return 0;
}

int op_open(const char* path, fuse_file_info* fi) { return open_file(path, fi, false, 0); }
int op_create(const char* path, mode_t mode, fuse_file_info* fi) { return open_file(path, fi, true, mode); }

int op_read(const char*, char* buf, size_t size, off_t off, fuse_file_info* fi) {
  Handle* h = handle(fi);
  if (h->entry) return int(FileTable::read(*h->entry, h->fd, off, size, buf));
  ssize_t n = ::pread(h->fd, buf, size, off);
  return n < 0 ? -errno : int(n);
}

int op_write(const char*, const char* buf, size_t size, off_t off, fuse_file_info* fi) {
  Handle* h = handle(fi);
  if (!h->entry) {
    ssize_t n = ::pwrite(h->fd, buf, size, off);
    return n < 0 ? -errno : int(n);
  }
  long n = FileTable::write(*h->entry, h->fd, off, buf, size, h->append);
  if (n >= 0 && h->sync) {
    if (int rc = FileTable::flush(*h->entry, h->fd, true); rc != 0) return rc;
  }
  return int(n);
}

int op_statfs(const char*, struct statvfs* st) { return result(::fstatvfs(g->root, st)); }

int op_flush(const char*, fuse_file_info*) { return 0; }

int op_release(const char*, fuse_file_info* fi) {
  Handle* h = handle(fi);
  if (h->entry) g->table.release(h->key, h->entry, h->fd);
  ::close(h->fd);
  delete h;
  return 0;
}

int op_fsync(const char*, int datasync, fuse_file_info* fi) {
  Handle* h = handle(fi);
  if (h->entry) return FileTable::flush(*h->entry, h->fd, datasync != 0);
  return result(datasync ? ::fdatasync(h->fd) : ::fsync(h->fd));
}

int op_opendir(const char* path, fuse_file_info* fi) {
  int fd = ::openat(g->root, rel(path), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return -errno;
  DIR* d = ::fdopendir(fd);
  if (!d) {
    int rc = -errno;
    ::close(fd);
    return rc;
  }
  fi->fh = reinterpret_cast<uint64_t>(d);
  return 0;
}

// The whole directory in one call (offset 0 to the filler: libfuse keeps the listing).
int op_readdir(const char*, void* buf, fuse_fill_dir_t fill, off_t, fuse_file_info* fi, fuse_readdir_flags) {
  DIR* d = dir_handle(fi);
  ::rewinddir(d);
  errno = 0;
  while (dirent* de = ::readdir(d)) {
    struct stat st {};
    st.st_ino = de->d_ino;
    st.st_mode = mode_t(DTTOIF(de->d_type));
    if (fill(buf, de->d_name, &st, 0, fuse_fill_dir_flags(0)) != 0) return 0;
  }
  return -errno;
}

int op_releasedir(const char*, fuse_file_info* fi) { return result(::closedir(dir_handle(fi))); }

int op_fsyncdir(const char*, int datasync, fuse_file_info* fi) {
  int fd = ::dirfd(dir_handle(fi));
  return result(datasync ? ::fdatasync(fd) : ::fsync(fd));
}

int op_utimens(const char* path, const struct timespec tv[2], fuse_file_info* fi) {
  if (fi) return result(::futimens(handle(fi)->fd, tv));
  return result(::utimensat(g->root, rel(path), tv, AT_SYMLINK_NOFOLLOW));
}

int op_fallocate(const char*, int mode, off_t off, off_t len, fuse_file_info* fi) {
  if (mode & ~FALLOC_FL_KEEP_SIZE) return -EOPNOTSUPP;
  Handle* h = handle(fi);
  if (!h->entry) return result(::fallocate(h->fd, mode, off, len));
  std::unique_lock lock(h->entry->mu);  // the backing size may change: not under a getattr
  return result(::fallocate(h->fd, mode, off, len));
}

fuse_operations make_ops_impl() {
  fuse_operations ops{};
  ops.init = op_init;
  ops.destroy = op_destroy;
  ops.getattr = op_getattr;
  ops.readlink = op_readlink;
  ops.mknod = op_mknod;
  ops.mkdir = op_mkdir;
  ops.symlink = op_symlink;
  ops.unlink = op_unlink;
  ops.rmdir = op_rmdir;
  ops.rename = op_rename;
  ops.link = op_link;
  ops.chmod = op_chmod;
  ops.chown = op_chown;
  ops.truncate = op_truncate;
  ops.open = op_open;
  ops.create = op_create;
  ops.read = op_read;
  ops.write = op_write;
  ops.statfs = op_statfs;
  ops.flush = op_flush;
  ops.release = op_release;
  ops.fsync = op_fsync;
  ops.opendir = op_opendir;
  ops.readdir = op_readdir;
  ops.releasedir = op_releasedir;
  ops.fsyncdir = op_fsyncdir;
  ops.utimens = op_utimens;
  ops.fallocate = op_fallocate;
  return ops;
}

}  // namespace

fuse_operations passthrough_ops(State* state) {
  g = state;
  return make_ops_impl();
}

void request_stop(int) { on_stop_signal_impl(); }

}  // namespace fencecheck::lazydisk
