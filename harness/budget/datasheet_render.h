// The datasheet's pages: one configuration's (datasheet.json, .md, .html with its plots as
// inline SVG, readable offline) and the comparison table of every sheet in a store
// (datasheets.json, .md, .html: a row per configuration, a link to each sheet). Pure over
// the documents but for the writes, which are atomic and throw HarnessError on I/O errors.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace fencecheck {

std::string datasheet_markdown(const nlohmann::json& sheet);
std::string datasheet_html(const nlohmann::json& sheet);
// datasheet.json, datasheet.md, datasheet.html into dir.
void write_datasheet(const std::filesystem::path& dir, const nlohmann::json& sheet);

// Every configuration's newest sheet under <root>/<config>/<stamp>/datasheet.json, each with
// "path" (its folder, relative to root) added; a sheet that does not parse is skipped with
// a warning on stderr. Sorted by backend, then client.
std::vector<nlohmann::json> find_datasheets(const std::filesystem::path& root);
// One short cell for a fault's row in the table: "950–1000 ms", "kept to 3000 ms", "refused".
std::string budget_cell(const nlohmann::json& fault_row);
std::string comparison_markdown(const std::vector<nlohmann::json>& sheets, const std::string& heading);
// datasheets.json, datasheets.md and datasheets.html into root; heading: the date and machine.
void write_comparison(const std::filesystem::path& root, const std::vector<nlohmann::json>& sheets,
                      const std::string& heading);

}  // namespace fencecheck
