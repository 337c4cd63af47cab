#include "checkers/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <streambuf>

#include "platform/errors.h"

namespace fencecheck {
namespace {

const char* kind_of(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a file";  // unreachable: the caller checked S_ISREG
}

// A stream buffer over an InputFile. It keeps the last character of the previous block in
// front of each new one, so that sungetc() (the EDN parser re-reads a '#') works across refills.
class FileBuffer : public std::streambuf {
 public:
  FileBuffer(InputFile file, std::string path) : file_(std::move(file)), path_(std::move(path)) {}

 protected:
  int_type underflow() override {
    if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
    std::size_t keep = 0;
    if (gptr() != nullptr && gptr() > eback()) {
      buf_[0] = gptr()[-1];
      keep = 1;
    }
    std::size_t n = std::fread(buf_ + keep, 1, sizeof buf_ - keep, file_.get());
    if (n == 0) {
      if (std::ferror(file_.get())) {
        throw InputError(path_, 0, "", std::string("read error: ") + std::strerror(errno));
      }
      return traits_type::eof();
    }
    setg(buf_, buf_ + keep, buf_ + keep + n);
    return traits_type::to_int_type(*gptr());
  }

 private:
  InputFile file_;
  std::string path_;
  char buf_[1 << 16];
};

class FileStream : public std::istream {
 public:
  FileStream(InputFile file, const std::string& path)
      : std::istream(nullptr), buffer_(std::move(file), path) {
    rdbuf(&buffer_);
  }

 private:
  FileBuffer buffer_;
};

}  // namespace

void FileCloser::operator()(std::FILE* f) const { std::fclose(f); }

InputFile open_input_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) throw InputError(path, 0, "", std::string("cannot open: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    throw InputError(path, 0, "", std::string("cannot stat: ") + std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    throw InputError(path, 0, "",
                     std::string("not a regular file but ") + kind_of(st.st_mode) +
                         ": fencecheck reads histories and logs only from regular files, so that it never "
                         "waits on a writer; copy it to a file first");
  }
  // Reads of a regular file never block anyway; clear the flag so stdio sees a plain file.
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  std::FILE* f = ::fdopen(fd, "rb");
  if (f == nullptr) {
    int err = errno;
    ::close(fd);
    throw InputError(path, 0, "", std::string("cannot open: ") + std::strerror(err));
  }
  return InputFile(f);
}

std::unique_ptr<std::istream> open_input_stream(const std::string& path) {
  return std::make_unique<FileStream>(open_input_file(path), path);
}

}  // namespace fencecheck
