// libFuzzer target for the JSONL readers: any input must end in events, a warning or an
// InputError — never a crash, a hang, a sanitizer report or another exception.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "checkers/check.h"
#include "checkers/event_source.h"
#include "checkers/history_reader.h"

namespace {

// The input as a file the readers can open by path, without touching the disk.
struct MemFile {
  MemFile(const std::uint8_t* data, std::size_t size) {
    fd = ::memfd_create("fuzz", 0);
    for (std::size_t done = 0; done < size;) {
      ssize_t n = ::write(fd, data + done, size - done);
      if (n <= 0) break;
      done += static_cast<std::size_t>(n);
    }
    path = "/proc/self/fd/" + std::to_string(fd);
  }
  ~MemFile() { ::close(fd); }
  int fd;
  std::string path;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  MemFile file(data, size);
  try {
    fencecheck::CheckRequest req;
    req.history = file.path;
    req.resource = file.path;  // the same bytes as a resource log
    fencecheck::run_checks(req);
  } catch (const fencecheck::InputError&) {
  }
  return 0;
}
