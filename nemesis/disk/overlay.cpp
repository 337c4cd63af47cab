// Overlay: see overlay.h.
#include "nemesis/disk/overlay.h"

#include <algorithm>
#include <cstring>
#include <iterator>

namespace fencecheck::lazydisk {

void Overlay::write(off_t off, const char* data, std::size_t len) {
  if (len == 0) return;
  const off_t write_end = off + off_t(len);
  // The extent that starts at or before off and reaches it (overlaps or touches) becomes
  // the merged extent's head, its buffer reused: appends grow it in place.
  auto it = extents_.upper_bound(off);
  off_t start = off;
  std::string buf;
  if (it != extents_.begin()) {
    auto prev = std::prev(it);
    if (prev->first + off_t(prev->second.size()) >= off) {
      start = prev->first;
      buf = std::move(prev->second);
      it = extents_.erase(prev);
    }
  }
  if (buf.size() < std::size_t(write_end - start)) buf.resize(std::size_t(write_end - start));
  std::memcpy(buf.data() + (off - start), data, len);
  // Later extents that start within or right after the merged one: their bytes beyond it
  // are kept, the rest lies under the new write, which wins.
  while (it != extents_.end() && it->first <= start + off_t(buf.size())) {
    const off_t cur_end = start + off_t(buf.size());
    const off_t ext_end = it->first + off_t(it->second.size());
    if (ext_end > cur_end) buf.append(it->second, std::size_t(cur_end - it->first), std::string::npos);
    it = extents_.erase(it);
  }
  extents_.emplace_hint(it, start, std::move(buf));
}

void Overlay::read(off_t off, std::size_t len, char* out) const {
  const off_t read_end = off + off_t(len);
  auto it = extents_.upper_bound(off);
  if (it != extents_.begin()) --it;
  for (; it != extents_.end() && it->first < read_end; ++it) {
    const off_t ext_end = it->first + off_t(it->second.size());
    const off_t from = std::max(off, it->first);
    const off_t to = std::min(read_end, ext_end);
    if (from < to) std::memcpy(out + (from - off), it->second.data() + (from - it->first), std::size_t(to - from));
  }
}

void Overlay::truncate(off_t size) {
  auto it = extents_.lower_bound(size);
  extents_.erase(it, extents_.end());
  if (!extents_.empty()) {
    auto& last = *std::prev(extents_.end());
    if (last.first + off_t(last.second.size()) > size) last.second.resize(std::size_t(size - last.first));
  }
}

off_t Overlay::end() const {
  if (extents_.empty()) return 0;
  const auto& last = *std::prev(extents_.end());
  return last.first + off_t(last.second.size());
}

std::size_t Overlay::bytes() const {
  std::size_t n = 0;
  for (const auto& [off, buf] : extents_) n += buf.size();
  return n;
}

}  // namespace fencecheck::lazydisk
