#include "nemesis/clock/node_clocks.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "platform/errors.h"

namespace fencecheck {

namespace fs = std::filesystem;

NodeClocks::NodeClocks(fs::path library, fs::path dir, const std::vector<std::string>& nodes)
    : library_(std::move(library)) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  for (const auto& node : nodes) {
    fs::path path = dir / (node + ".clock");
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    void* m = MAP_FAILED;
    if (fd >= 0 && ::ftruncate(fd, 4096) == 0) {
      m = ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    }
    int err = errno;
    if (fd >= 0) ::close(fd);
    if (m == MAP_FAILED) {
      throw HarnessError("cannot make the clock file " + path.string() + ": " + std::strerror(err));
    }
    files_[node] = File{path, static_cast<std::int64_t*>(m)};
  }
}

NodeClocks::~NodeClocks() {
  for (auto& [node, f] : files_) {
    ::munmap(f.offset_ns, 4096);
    std::error_code ec;
    fs::remove(f.path, ec);
  }
}

const NodeClocks::File& NodeClocks::file(const std::string& node) const {
  auto it = files_.find(node);
  if (it == files_.end()) throw HarnessError("node " + node + " has no clock file");
  return it->second;
}

void NodeClocks::decorate(ProcessSpec& spec) const {
  auto it = files_.find(spec.node);
  if (it == files_.end()) return;
  spec.preload.push_back(library_.string());
  spec.env["FENCECHECK_CLOCK_FILE"] = it->second.path.string();
}

void NodeClocks::set_offset(const std::string& node, std::chrono::milliseconds offset, const Deadline& deadline) {
  __atomic_store_n(file(node).offset_ns, std::chrono::nanoseconds(offset).count(), __ATOMIC_RELEASE);
  if (publish_) publish_(file(node).path, sizeof(std::int64_t), deadline);
}

std::chrono::milliseconds NodeClocks::offset(const std::string& node) const {
  std::int64_t ns = __atomic_load_n(file(node).offset_ns, __ATOMIC_ACQUIRE);
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::nanoseconds(ns));
}

std::optional<fs::path> NodeClocks::find_library(const fs::path& exe) {
  fs::path lib = exe.parent_path() / "libfcclock.so";
  std::error_code ec;
  if (fs::exists(lib, ec)) return lib;
  return std::nullopt;
}

}  // namespace fencecheck
