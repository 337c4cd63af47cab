// Test support: a program that runs the deliberately broken adapter (broken.py, beside this
// file) in one of its modes, for tests that start an adapter by its program path.
// Not thread-safe; throws std::filesystem::filesystem_error when it cannot write.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

namespace fencecheck::testing {

// Writes an executable shell script at `run` that execs the broken adapter of the source
// tree `source_dir` in `mode` (FENCECHECK_BROKEN_MODE); returns `run`.
inline std::filesystem::path write_broken_adapter(const std::filesystem::path& run, const std::filesystem::path& source_dir,
                                                  const std::string& mode) {
  std::filesystem::create_directories(run.parent_path());
  std::ofstream(run) << "#!/bin/sh\nFENCECHECK_BROKEN_MODE=" << mode << " exec "
                     << (source_dir / "tests/adapters/broken/run").string() << "\n";
  std::filesystem::permissions(run, std::filesystem::perms::owner_all);
  return run;
}

}  // namespace fencecheck::testing
