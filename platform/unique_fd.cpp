#include "platform/unique_fd.h"

#include <fcntl.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "platform/errors.h"

namespace fencecheck {

PipeEnds make_pipe(int flags) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC | flags) != 0) throw HarnessError(std::string("pipe: ") + std::strerror(errno));
  return {UniqueFd(fds[0]), UniqueFd(fds[1])};
}

}  // namespace fencecheck
