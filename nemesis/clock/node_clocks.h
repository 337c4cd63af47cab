// NodeClocks: the Clocks capability (nemesis.h) by the clock-offset preload library
// (clock_shim.c). Each node has an offset file of one page in `dir`; decorate() adds the
// library and the node's file to every process spec of that node (install it as the
// Runtime's spec decorator before anything is spawned), and set_offset() writes the node's
// offset in place, which its processes read on their next clock call.
//
// What it can shift: every dynamically linked program that reads the wall clock through
// libc (redis-server, PostgreSQL, the JVM's System.currentTimeMillis). What it cannot:
// statically linked or Go binaries (etcd), which make their own system calls, and any
// program's monotonic clock (on purpose: timeouts and history times stay true).
//
// Thread-safe. Files are removed by the destructor (they also live in the run's control
// directory, which `fencecheck clean` removes).
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "nemesis/nemesis.h"

namespace fencecheck {

class NodeClocks final : public Clocks {
 public:
  // library: path of libfcclock.so. Creates dir/<node>.clock (offset 0) for every node.
  // Throws HarnessError when a file cannot be made.
  NodeClocks(std::filesystem::path library, std::filesystem::path dir,
             const std::vector<std::string>& nodes);
  ~NodeClocks() override;
  NodeClocks(const NodeClocks&) = delete;
  NodeClocks& operator=(const NodeClocks&) = delete;

  // Adds LD_PRELOAD and FENCECHECK_CLOCK_FILE for spec.node (nodes without a file are
  // left alone).
  void decorate(ProcessSpec& spec) const;

  bool available() const override { return true; }
  // A store into the node's page, then the publisher (under ssh: each host's copy), by the deadline.
  void set_offset(const std::string& node, std::chrono::milliseconds offset, const Deadline& deadline) override;
  std::chrono::milliseconds offset(const std::string& node) const override;

  // node's clock file. A process maps it on its first clock call, if the library was
  // preloaded into it and could open the file; one that cannot read it (another user, a
  // directory it cannot enter) keeps the host's clock (Runtime::group_maps tells).
  const std::filesystem::path& file_path(const std::string& node) const { return file(node).path; }
  // Called by set_offset after each write with the file and the bytes that changed, for a
  // runtime whose nodes hold copies (Runtime::file_changed). Set it before any set_offset.
  using Publisher = std::function<void(const std::filesystem::path&, std::size_t, const Deadline&)>;
  void set_publisher(Publisher publish) { publish_ = std::move(publish); }

  // Where `fencecheck` looks for the library: beside its own executable.
  static std::optional<std::filesystem::path> find_library(const std::filesystem::path& exe);

 private:
  struct File {
    std::filesystem::path path;
    std::int64_t* offset_ns = nullptr;  // shared mapping
  };
  const File& file(const std::string& node) const;

  std::filesystem::path library_;
  std::map<std::string, File> files_;
  Publisher publish_;
};

}  // namespace fencecheck
