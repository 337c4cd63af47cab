// FileTable: fclazydisk's unsynced data, one FileEntry (an Overlay and its lock) per
// backing inode that is open or holds unsynced bytes, keyed by (st_dev, st_ino) so that
// it follows the file across renames and hard links. The operations here do the data
// half of a FUSE call on the backing file: a write lands in the overlay only; a read is
// the backing file's bytes (zeros past its end) with the overlay's on top; fsync writes
// the overlay to the backing file with pwrite, empties it and fsyncs the backing file;
// truncate trims the overlay and truncates the backing file at once.
// Thread-safe: the table's map is guarded by one mutex, each entry by its own
// shared_mutex (reads shared; writes, fsync and truncate exclusive); the order is table
// then entry, never the reverse. An entry lives while a FUSE handle has it open
// (FileEntry::opens) or while it holds unsynced bytes; the last release of an unlinked
// file, or the unlink of a closed one, drops its bytes. Entries own a dup of a writable
// backing fd (FileEntry::fd), kept so that a clean shutdown or the write-back can flush a
// file nobody has open. write_back (writeback.h's thread) writes the overlays that have
// been non-empty for a given time to their backing files without fsync, like a kernel's
// flusher; it holds the table's mutex only to list the entries, and one entry's lock while
// it writes that entry's overlay (as fsync does). Calls block on the backing file system (pread/pwrite/fsync of one file) and on
// other calls to the same file; none waits on another file. Errors are -errno of the
// failed system call on the backing file; a failed flush keeps the overlay (a retry
// rewrites the same bytes).
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <compare>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <vector>

#include "nemesis/disk/overlay.h"

namespace fencecheck::lazydisk {

struct FileKey {
  dev_t dev = 0;
  ino_t ino = 0;
  static FileKey of(const struct stat& st) { return {st.st_dev, st.st_ino}; }
  auto operator<=>(const FileKey&) const = default;
};

using Clock = std::chrono::steady_clock;

struct FileEntry {
  std::shared_mutex mu;
  Overlay overlay;  // guarded by mu
  int fd = -1;      // guarded by mu: a writable dup of the first handle that wrote, or -1
  // guarded by mu: when the overlay last went from empty to non-empty (its oldest byte's
  // age, or older: bytes written since may have replaced it); meaningless when empty.
  Clock::time_point dirty_since{};
  int opens = 0;  // guarded by the table's mutex
};

// The aging decision of the write-back: an overlay that has held bytes since dirty_since
// is written back at now when it is not empty and max_age has passed (max_age > 0).
bool writeback_due(bool empty, Clock::time_point dirty_since, Clock::time_point now,
                   std::chrono::milliseconds max_age);

struct TableStats {
  std::size_t open_files = 0;      // entries (open or unsynced)
  std::size_t unsynced_files = 0;  // entries with unsynced bytes
  std::size_t unsynced_bytes = 0;
  std::size_t extents = 0;
  std::size_t written_back_bytes = 0;  // by write_back, since the table was made
};

class FileTable {
 public:
  FileTable() = default;
  FileTable(const FileTable&) = delete;
  FileTable& operator=(const FileTable&) = delete;
  ~FileTable();

  // A FUSE open/create of key: the entry (made if missing), its open count raised.
  std::shared_ptr<FileEntry> open(const FileKey& key);
  // The matching release; handle_fd (still open) tells whether the file is unlinked.
  void release(const FileKey& key, const std::shared_ptr<FileEntry>& entry, int handle_fd);
  // The last name of key went away (unlink, or rename over it): a closed file's bytes go.
  void unlinked(const FileKey& key);
  // The entry of key, or null.
  std::shared_ptr<FileEntry> find(const FileKey& key);

  // Writes len bytes at off (at the file's end when append) through handle_fd, a
  // writable backing fd; returns len or -errno.
  static long write(FileEntry& e, int handle_fd, off_t off, const char* data, std::size_t len, bool append);
  // Reads up to len bytes at off; returns the count (short at the file's end) or -errno.
  static long read(FileEntry& e, int handle_fd, off_t off, std::size_t len, char* out);
  // fsync/fdatasync: the overlay to the backing file, then its fsync through sync_fd
  // (the caller's handle; the entry's own fd when -1). 0 or -errno.
  static int flush(FileEntry& e, int sync_fd, bool datasync);
  // ftruncate(fd, size) with the overlay trimmed to match. 0 or -errno.
  static int truncate(FileEntry& e, int fd, off_t size);
  // Corrects a backing file's stat (st_size, st_blocks) for the entry's overlay.
  static void adjust(FileEntry& e, struct stat* st);

  // A clean shutdown: every overlay written and fsync'd. 0, or the first -errno.
  int flush_all();
  // The write-back: every overlay due at now (writeback_due) written to its backing file
  // with pwrite, no fsync (the backing file system's page cache outlives this process),
  // and emptied; an entry nobody has open is then dropped. Returns the bytes written;
  // *first_error (when given) gets the first -errno (that overlay is kept, to be retried).
  std::size_t write_back(Clock::time_point now, std::chrono::milliseconds max_age, int* first_error = nullptr);
  TableStats stats();

 private:
  void drop_locked(std::map<FileKey, std::shared_ptr<FileEntry>>::iterator it);

  std::mutex mu_;
  std::map<FileKey, std::shared_ptr<FileEntry>> entries_;  // guarded by mu_
  std::atomic<std::size_t> written_back_{0};
};

}  // namespace fencecheck::lazydisk
