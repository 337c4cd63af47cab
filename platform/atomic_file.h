// Writes a file so that readers see either the old or the new content, never half of it:
// write to a temporary beside it, fsync (unless FileSync::kPageCache), rename over. The one atomic file writer of the
// tree (reports, results.json, the run state file).
//
// Errors throw HarnessError (a std::runtime_error) "cannot <create|write|fsync|close|
// rename> <path>: why"; the temporary is removed and the old file left intact. A file
// whose data may not have reached the disk is never taken for written. Blocks on disk I/O
// only. Thread-safe for distinct paths; two writers of one path in one process race
// (their temporaries share a name).
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string_view>

namespace fencecheck {

// How far a written file must have got before the call returns.
enum class FileSync {
  kDisk,        // fsync'd: it survives a power loss
  kPageCache,   // written, not fsync'd: it survives this process's crash, not a power loss
                // (for state that only outlives the process, such as the run state file)
};

// Replaces path with content; the result has permissions mode (less the umask): the
// replacement is a new file.
void write_file_atomically(const std::filesystem::path& path, std::string_view content,
                           mode_t mode = 0644, FileSync sync = FileSync::kDisk);

// The first half of write_file_atomically: writes content to a fresh temporary beside
// target ("<target>.tmp.<pid>"), fsyncs (unless sync says not) and closes it, and returns
// its path, for a caller that puts it in place some other way (link(2), to refuse an
// existing target).
std::filesystem::path write_temp_beside(const std::filesystem::path& target,
                                        std::string_view content, mode_t mode = 0644,
                                        FileSync sync = FileSync::kDisk);

}  // namespace fencecheck
