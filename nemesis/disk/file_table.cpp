// FileTable: see file_table.h.
#include "nemesis/disk/file_table.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace fencecheck::lazydisk {

namespace {

// pwrite of all len bytes; 0 or -errno.
int pwrite_all(int fd, const char* data, std::size_t len, off_t off) {
  while (len > 0) {
    ssize_t n = ::pwrite(fd, data, len, off);
    if (n < 0) {
      if (errno == EINTR) continue;
      return -errno;
    }
    data += n;
    len -= std::size_t(n);
    off += n;
  }
  return 0;
}

}  // namespace

bool writeback_due(bool empty, Clock::time_point dirty_since, Clock::time_point now,
                   std::chrono::milliseconds max_age) {
  return !empty && max_age.count() > 0 && now - dirty_since >= max_age;
}

FileTable::~FileTable() {
  for (auto& [key, e] : entries_)
    if (e->fd >= 0) ::close(e->fd);
}

std::shared_ptr<FileEntry> FileTable::open(const FileKey& key) {
  std::lock_guard lock(mu_);
  auto& e = entries_[key];
  if (!e) e = std::make_shared<FileEntry>();
  ++e->opens;
  return e;
}

void FileTable::drop_locked(std::map<FileKey, std::shared_ptr<FileEntry>>::iterator it) {
  std::shared_ptr<FileEntry> e = it->second;
  std::unique_lock elock(e->mu);
  if (e->fd >= 0) ::close(e->fd);
  e->fd = -1;
  e->overlay.clear();
  entries_.erase(it);
}

void FileTable::release(const FileKey& key, const std::shared_ptr<FileEntry>& entry, int handle_fd) {
  struct stat st;
  const bool unlinked = ::fstat(handle_fd, &st) == 0 && st.st_nlink == 0;
  std::lock_guard lock(mu_);
  if (--entry->opens > 0) return;
  auto it = entries_.find(key);
  if (it == entries_.end() || it->second != entry) return;
  bool empty;
  {
    std::shared_lock elock(entry->mu);
    empty = entry->overlay.empty();
  }
  if (unlinked || empty) drop_locked(it);
}

void FileTable::unlinked(const FileKey& key) {
  std::lock_guard lock(mu_);
  auto it = entries_.find(key);
  if (it != entries_.end() && it->second->opens == 0) drop_locked(it);
}

std::shared_ptr<FileEntry> FileTable::find(const FileKey& key) {
  std::lock_guard lock(mu_);
  auto it = entries_.find(key);
  return it == entries_.end() ? nullptr : it->second;
}

long FileTable::write(FileEntry& e, int handle_fd, off_t off, const char* data, std::size_t len, bool append) {
  std::unique_lock lock(e.mu);
  if (e.fd < 0) {
    e.fd = ::fcntl(handle_fd, F_DUPFD_CLOEXEC, 0);
    if (e.fd < 0) return -errno;
  }
  if (append) {
    struct stat st;
    if (::fstat(e.fd, &st) != 0) return -errno;
    off = std::max<off_t>(st.st_size, e.overlay.end());
  }
  if (e.overlay.empty() && len > 0) e.dirty_since = Clock::now();
  e.overlay.write(off, data, len);
  return long(len);
}

long FileTable::read(FileEntry& e, int handle_fd, off_t off, std::size_t len, char* out) {
  std::shared_lock lock(e.mu);
  std::size_t got = 0;
  while (got < len) {
    ssize_t n = ::pread(handle_fd, out + got, len - got, off + off_t(got));
    if (n < 0) {
      if (errno == EINTR) continue;
      return -errno;
    }
    if (n == 0) break;
    got += std::size_t(n);
  }
  if (e.overlay.empty()) return long(got);
  // Past the backing file's end, up to the overlay's end, the file reads as zeros (a hole)
  // under the overlay's bytes.
  const off_t overlay_end = e.overlay.end();
  std::size_t n = got;
  if (overlay_end > off) n = std::max(got, std::min(len, std::size_t(overlay_end - off)));
  std::memset(out + got, 0, n - got);
  e.overlay.read(off, n, out);
  return long(n);
}

int FileTable::flush(FileEntry& e, int sync_fd, bool datasync) {
  {
    std::unique_lock lock(e.mu);
    if (!e.overlay.empty()) {
      for (const auto& [off, buf] : e.overlay.extents())
        if (int rc = pwrite_all(e.fd, buf.data(), buf.size(), off); rc != 0) return rc;
      e.overlay.clear();
    }
    if (sync_fd < 0) sync_fd = e.fd;
  }
  // Outside the lock: the bytes are in the backing file's page cache now, where a crash of
  // this process cannot lose them; a fsync of any fd of the inode makes them durable.
  if (sync_fd < 0) return 0;
  if ((datasync ? ::fdatasync(sync_fd) : ::fsync(sync_fd)) != 0) return -errno;
  return 0;
}

int FileTable::truncate(FileEntry& e, int fd, off_t size) {
  std::unique_lock lock(e.mu);
  if (::ftruncate(fd, size) != 0) return -errno;
  e.overlay.truncate(size);
  return 0;
}

void FileTable::adjust(FileEntry& e, struct stat* st) {
  std::shared_lock lock(e.mu);
  if (e.fd < 0 || e.overlay.empty()) return;
  // Under the lock the backing size and the overlay agree (a flush may have just moved
  // bytes from one to the other).
  struct stat now;
  if (::fstat(e.fd, &now) == 0) *st = now;
  st->st_size = std::max<off_t>(st->st_size, e.overlay.end());
  st->st_blocks = std::max<blkcnt_t>(st->st_blocks, (st->st_size + 511) / 512);
}

int FileTable::flush_all() {
  std::lock_guard lock(mu_);
  int first = 0;
  for (auto& [key, e] : entries_) {
    int rc = flush(*e, -1, false);
    if (rc != 0 && first == 0) first = rc;
  }
  return first;
}

std::size_t FileTable::write_back(Clock::time_point now, std::chrono::milliseconds max_age, int* first_error) {
  // The entries are listed without taking their locks: the table's mutex is not held
  // while waiting for an entry that a fsync is writing.
  std::vector<std::pair<FileKey, std::shared_ptr<FileEntry>>> all;
  {
    std::lock_guard lock(mu_);
    all.assign(entries_.begin(), entries_.end());
  }
  std::size_t written = 0;
  for (auto& [key, e] : all) {
    {
      // Decided under the entry's own lock: a fsync, truncate or unlink may have emptied
      // the overlay since the listing (a dropped entry's fd is -1 too).
      {
        std::shared_lock elock(e->mu);
        if (!writeback_due(e->overlay.empty(), e->dirty_since, now, max_age)) continue;
      }
      std::unique_lock elock(e->mu);
      if (!writeback_due(e->overlay.empty(), e->dirty_since, now, max_age) || e->fd < 0) continue;
      int rc = 0;
      for (const auto& [off, buf] : e->overlay.extents())
        if (rc = pwrite_all(e->fd, buf.data(), buf.size(), off); rc != 0) break;
      if (rc != 0) {
        if (first_error && *first_error == 0) *first_error = rc;
        continue;
      }
      const std::size_t n = e->overlay.bytes();
      e->overlay.clear();
      written += n;
      written_back_ += n;
    }
    // A file nobody has open is kept only for its unsynced bytes (release): now none. No
    // write can come while opens is 0 under the table's mutex (a write needs a handle).
    std::lock_guard lock(mu_);
    auto it = entries_.find(key);
    if (it == entries_.end() || it->second != e || e->opens > 0) continue;
    bool empty;
    {
      std::shared_lock elock(e->mu);
      empty = e->overlay.empty();
    }
    if (empty) drop_locked(it);
  }
  return written;
}

TableStats FileTable::stats() {
  std::lock_guard lock(mu_);
  TableStats s;
  s.open_files = entries_.size();
  s.written_back_bytes = written_back_;
  for (auto& [key, e] : entries_) {
    std::shared_lock elock(e->mu);
    if (e->overlay.empty()) continue;
    ++s.unsynced_files;
    s.unsynced_bytes += e->overlay.bytes();
    s.extents += e->overlay.extent_count();
  }
  return s;
}

}  // namespace fencecheck::lazydisk
