// UniqueFd: owns one file descriptor and closes it when destroyed or reset; movable, not
// copyable. The one RAII fd wrapper of the tree. make_pipe(): a pipe whose two ends are
// UniqueFds.
//
// Not thread-safe (like any value). close() errors are ignored: a caller for whom close()
// can report lost data (a file it wrote) must close explicitly, as os::write_sync_close
// does. make_pipe() throws HarnessError when the pipe cannot be made; nothing blocks.
#pragma once

#include <unistd.h>

#include <utility>

namespace fencecheck {

class UniqueFd {
 public:
  explicit UniqueFd(int fd = -1) : fd_(fd) {}
  ~UniqueFd() { reset(); }
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) reset(other.release());
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  // Closes the fd held (if any) and takes fd.
  void reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }
  // Gives up ownership without closing.
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

struct PipeEnds {
  UniqueFd read;
  UniqueFd write;
};

// pipe2(O_CLOEXEC | flags).
PipeEnds make_pipe(int flags = 0);

}  // namespace fencecheck
