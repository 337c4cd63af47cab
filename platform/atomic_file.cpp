#include "platform/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "platform/errors.h"
#include "platform/os_util.h"

namespace fencecheck {

std::filesystem::path write_temp_beside(const std::filesystem::path& target, std::string_view content,
                                        mode_t mode, FileSync sync) {
  std::filesystem::path tmp = target;
  tmp += ".tmp." + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) throw HarnessError("cannot create " + tmp.string() + ": " + os::strerror_string(errno));
  try {
    os::write_sync_close(fd, std::string(content), tmp.string(), sync == FileSync::kDisk);
  } catch (const HarnessError&) {
    ::unlink(tmp.c_str());
    throw;
  }
  return tmp;
}

void write_file_atomically(const std::filesystem::path& path, std::string_view content, mode_t mode,
                           FileSync sync) {
  std::filesystem::path tmp = write_temp_beside(path, content, mode, sync);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    throw HarnessError("cannot rename " + tmp.string() + " to " + path.string() + ": " +
                       os::strerror_string(err));
  }
}

}  // namespace fencecheck
