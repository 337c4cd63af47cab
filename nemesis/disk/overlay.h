// Overlay: the bytes written to one file and not yet fsync'd, as non-overlapping extents
// over the backing file (fclazydisk, nemesis/disk/fclazydisk.cpp). A write merges with
// every extent it overlaps or touches, so a file that is only appended to keeps one
// extent, grown in place (amortised O(len) a write); the newest write wins where it
// overlaps older ones.
// Not thread-safe: its FileEntry (file_table.h) guards it. Owns its bytes; nothing here
// blocks or fails other than by std::bad_alloc (the overlay lives in memory, unbounded:
// a server that never fsyncs grows the daemon by what it wrote).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <map>
#include <string>

namespace fencecheck::lazydisk {

class Overlay {
 public:
  // Records len bytes at off (off >= 0).
  void write(off_t off, const char* data, std::size_t len);
  // Copies the overlay's bytes within [off, off + len) onto out (out[0] is offset off);
  // bytes the overlay does not hold are left as they were.
  void read(off_t off, std::size_t len, char* out) const;
  // Drops every byte at or beyond size.
  void truncate(off_t size);
  void clear() { extents_.clear(); }
  bool empty() const { return extents_.empty(); }
  // One past the last byte held; 0 when empty.
  off_t end() const;
  // Bytes held, and the number of extents holding them.
  std::size_t bytes() const;
  std::size_t extent_count() const { return extents_.size(); }
  // Start offset -> bytes, in offset order (what fsync writes to the backing file).
  const std::map<off_t, std::string>& extents() const { return extents_; }

 private:
  std::map<off_t, std::string> extents_;
};

}  // namespace fencecheck::lazydisk
