// Opening the files the checkers read (history.jsonl, history.edn, resource.jsonl): the one
// place every reader opens its input, so that none of them can hang on it.
//
// Only a regular file (or a symlink to one) is accepted. Opening a FIFO for reading blocks
// until some writer opens it, and reading a device may never end, so either would make
// `check`, `report` or a run's own judging wait silently forever. The file is opened with
// O_NONBLOCK and inspected with fstat on the same descriptor (no window in which the path
// could be swapped), so neither function ever blocks on a FIFO; a refusal throws InputError
// "<path>:0: not a regular file but a FIFO (named pipe): …". A file that cannot be opened
// throws InputError "<path>:0: cannot open: <strerror>". Thread-safe: no shared state.
#pragma once

#include <cstdio>
#include <istream>
#include <memory>
#include <string>

namespace fencecheck {

struct FileCloser {
  void operator()(std::FILE* f) const;
};
using InputFile = std::unique_ptr<std::FILE, FileCloser>;

// A regular file opened for reading ("rb"), owned by the result.
InputFile open_input_file(const std::string& path);

// The same file as a buffered input stream that owns it. A read error (EIO) throws
// InputError from the stream buffer rather than looking like the end of the file.
std::unique_ptr<std::istream> open_input_stream(const std::string& path);

}  // namespace fencecheck
