// Writes a file so that readers see either the old or the new content, never half of it:
// write to a temporary beside it, flush, rename over. Throws std::runtime_error naming the
// path on failure; the old file is left intact.
#pragma once

#include <filesystem>
#include <string_view>

namespace fencecheck {

void write_file_atomically(const std::filesystem::path& path, std::string_view content);

}  // namespace fencecheck
