// The run store (docs/results.md): one directory per run under
// <store>/<test name>/<UTC timestamp>/, with `latest` beside the test names pointing at
// the newest run. Existing runs are never overwritten. Throws HarnessError on I/O errors.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace fencecheck {

// Now as a directory name: "20261204T234433.598Z".
std::string utc_timestamp();
// Creates parent/<UTC timestamp>/ (a suffix when taken) and returns its path.
std::filesystem::path create_stamped_dir(const std::filesystem::path& parent);
// Creates a fresh run directory (and its nodes/ folder) and returns its path.
std::filesystem::path create_run_dir(const std::filesystem::path& store, const std::string& name);
// Points <store>/latest at run_dir (atomically replacing an older link).
void update_latest(const std::filesystem::path& store, const std::filesystem::path& run_dir);
// Writes repro.sh, executable: `fencecheck run --replay <its own directory>` into store,
// and as a comment the plain command (args) that draws the faults afresh from the seed.
void write_repro(const std::filesystem::path& run_dir, const std::filesystem::path& exe,
                 const std::vector<std::string>& args, const std::filesystem::path& store);

}  // namespace fencecheck
