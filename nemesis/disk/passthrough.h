// The FUSE operations of fclazydisk (fclazydisk.cpp): a passthrough of one backing
// directory, by the high-level libfuse3 API, whose file data goes through a FileTable
// (file_table.h) — writes stay in memory until fsync — and whose metadata calls (create,
// mkdir, unlink, rename, link, chmod, chown, utimens, truncate, fallocate) are done on the
// backing directory at once. As root, what a caller makes through the mount is chowned to
// the caller. Paths of calls on an open file are not used (nullpath_ok, hard_remove), so
// an open unlinked file keeps working and leaves no .fuse_hidden file behind.
// Thread-safe: libfuse calls the operations from many threads; State is read-only but for
// its FileTable and Writeback. Calls block on the backing file system; errors are its
// -errno. With writeback_age > 0, init starts the write-back thread (writeback.h).
#pragma once

#ifndef FUSE_USE_VERSION
#define FUSE_USE_VERSION 35
#endif
#include <fuse.h>

#include <chrono>

#include "nemesis/disk/file_table.h"
#include "nemesis/disk/writeback.h"

namespace fencecheck::lazydisk {

struct State {
  int root = -1;  // the backing directory, open
  bool direct_io = true;
  bool as_root = false;
  std::chrono::milliseconds writeback_age{0};  // --writeback-ms; 0: never
  FileTable table;
  Writeback writeback;  // started by init when writeback_age > 0, stopped by destroy
};

// The operations over state, which outlives the file system.
fuse_operations passthrough_ops(State* state);

// A clean stop (async-signal-safe, for SIGTERM/SIGINT/SIGHUP handlers): ends the FUSE loop
// at once, or as soon as it starts; fuse_main then unmounts, stops the write-back thread
// and flushes every file (the destroy operation) and returns 0. libfuse's own handlers
// would make it return 8.
void request_stop(int sig);

}  // namespace fencecheck::lazydisk
