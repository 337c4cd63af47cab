// The run index of a store: <store>/index.html, one self-contained page listing every run
// under the store — every directory below it (up to a few levels, links not followed)
// that has a config.json, e.g. <store>/<test name>/<timestamp>/ — newest first, with its
// name, time, backend, faults, verdict and a relative link to its report.html (or to the
// directory when it has no report yet).
//
// Tolerant by design: a run without results.json is "unfinished", one whose files are
// malformed is "unreadable" with the reason; neither stops the index. Only index.html is
// written (atomically); throws std::runtime_error when the store is not a directory or
// the index cannot be written. Thread-compatible.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "report/run_info.h"

namespace fencecheck {

struct IndexWritten {
  std::filesystem::path file;
  std::size_t runs = 0;
  std::size_t unreadable = 0;
  std::size_t without_report = 0;
};

IndexWritten write_run_index(const std::filesystem::path& store_dir);

// The runs write_run_index lists, newest first.
std::vector<report::RunSummary> find_runs(const std::filesystem::path& store_dir);

// The page itself, links relative to store_dir.
std::string run_index_html(const std::filesystem::path& store_dir, const std::vector<report::RunSummary>& runs);

}  // namespace fencecheck
