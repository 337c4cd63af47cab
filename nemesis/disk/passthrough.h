// The FUSE operations of fclazydisk (fclazydisk.cpp): a passthrough of one backing
// directory, by the high-level libfuse3 API, whose file data goes through a FileTable
// (file_table.h) — writes stay in memory until fsync — and whose metadata calls (create,
// mkdir, unlink, rename, link, chmod, chown, utimens, truncate, fallocate) are done on the
// backing directory at once. As root, what a caller makes through the mount is chowned to
// the caller. Paths of calls on an open file are not used (nullpath_ok, hard_remove), so
// an open unlinked file keeps working and leaves no .fuse_hidden file behind.
// Thread-safe: libfuse calls the operations from many threads; State is read-only but for
// its FileTable. Calls block on the backing file system; errors are its -errno.
#pragma once

#ifndef FUSE_USE_VERSION
#define FUSE_USE_VERSION 35
#endif
#include <fuse.h>

#include "nemesis/disk/file_table.h"

namespace fencecheck::lazydisk {

struct State {
  int root = -1;  // the backing directory, open
  bool direct_io = true;
  bool as_root = false;
  FileTable table;
};

// The operations over state, which outlives the file system.
fuse_operations passthrough_ops(State* state);

// A clean stop (async-signal-safe, for SIGTERM/SIGINT/SIGHUP handlers): ends the FUSE loop
// at once, or as soon as it starts; fuse_main then unmounts, flushes every file (the
// destroy operation) and returns 0. libfuse's own handlers would make it return 8.
void request_stop(int sig);

}  // namespace fencecheck::lazydisk
