#include "harness/suite/suite_plan.h"

#include <fstream>
#include <stdexcept>

#include "adapters/registry.h"
#include "platform/fnv.h"

namespace fencecheck {
namespace {

using nlohmann::json;

// The --client of a run's arguments; empty when it names none (fencecheck's own client).
std::string client_of(const std::vector<std::string>& args) {
  for (std::size_t i = 0; i + 1 < args.size(); ++i) {
    if (args[i] == "--client") return args[i + 1];
  }
  return "";
}

std::string version_of(const std::string& client) {
  if (client.empty() || client == "native") return "";
  const AdapterInfo* a = find_adapter(client);
  return a == nullptr ? "" : a->version;
}

template <class T>
T field(const json& j, const char* name, const std::string& where) {
  if (!j.contains(name)) throw std::invalid_argument(where + ": field \"" + name + "\" is missing");
  try {
    return j.at(name).get<T>();
  } catch (const json::exception&) {
    throw std::invalid_argument(where + ": field \"" + name + "\" has the wrong type: " + j.at(name).dump());
  }
}

}  // namespace

std::string plan_row_id(const PlanRow& row) {
  std::vector<std::string> parts = {row.suite, row.c.id};
  parts.insert(parts.end(), row.c.args.begin(), row.c.args.end());
  parts.insert(parts.end(), {"client " + client_of(row.c.args) + "@" + row.client_version,
                             "seed " + std::to_string(row.seed), "repeat " + std::to_string(row.repeat)});
  return fnv1a64_hex(parts);
}

std::vector<PlanRow> make_plan(const std::string& suite, const std::vector<SuiteCase>& cases, int repeat,
                               std::uint64_t seed) {
  std::vector<PlanRow> plan;
  for (std::size_t k = 0; k < cases.size(); ++k) {
    for (int r = 0; r < repeat; ++r) {
      PlanRow row;
      row.suite = suite;
      row.index = plan.size();
      row.c = cases[k];
      row.repeat = r + 1;
      row.seed = seed + 1000 * k + static_cast<std::uint64_t>(r);
      row.client_version = version_of(client_of(row.c.args));
      row.id = plan_row_id(row);
      plan.push_back(std::move(row));
    }
  }
  return plan;
}

std::string plan_line(const PlanRow& row) {
  // nlohmann::json keeps an object's keys sorted: the same row, the same bytes.
  json j = {{"id", row.id},
            {"index", row.index},
            {"suite", row.suite},
            {"case", row.c.id},
            {"repeat", row.repeat},
            {"seed", row.seed},
            {"args", row.c.args},
            {"client_version", row.client_version},
            {"title", row.c.title},
            {"claim", row.c.claim},
            {"backend", row.c.backend},
            {"faults", row.c.faults}};
  return j.dump();
}

PlanRow parse_plan_line(const std::string& text, const std::string& where) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) throw std::invalid_argument(where + ": not a JSON object");
  PlanRow row;
  row.id = field<std::string>(j, "id", where);
  row.index = field<std::size_t>(j, "index", where);
  row.suite = field<std::string>(j, "suite", where);
  row.c.id = field<std::string>(j, "case", where);
  row.repeat = field<int>(j, "repeat", where);
  row.seed = field<std::uint64_t>(j, "seed", where);
  row.c.args = field<std::vector<std::string>>(j, "args", where);
  row.client_version = field<std::string>(j, "client_version", where);
  row.c.title = field<std::string>(j, "title", where);
  row.c.claim = field<std::string>(j, "claim", where);
  row.c.backend = field<std::string>(j, "backend", where);
  row.c.faults = field<std::string>(j, "faults", where);
  if (row.repeat < 1) throw std::invalid_argument(where + ": field \"repeat\" must be at least 1");
  if (plan_row_id(row) != row.id) {
    throw std::invalid_argument(where + ": field \"id\" is " + row.id + ", but the row's contents hash to " +
                                plan_row_id(row) + " (the line was edited, or made by another fencecheck)");
  }
  if (row.suite != "matrix") {
    row.c.scenario = find_scenario(row.c.id);
    if (row.c.scenario == nullptr) {
      throw std::invalid_argument(where + ": field \"case\": no scenario " + row.c.id + " in this fencecheck");
    }
  }
  return row;
}

std::string plan_text(const std::vector<PlanRow>& plan) {
  std::string out;
  for (const PlanRow& row : plan) out += plan_line(row) + "\n";
  return out;
}

std::vector<PlanRow> read_plan(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) throw std::invalid_argument(file.string() + ": cannot be read");
  std::vector<PlanRow> plan;
  std::string text;
  for (std::size_t n = 1; std::getline(in, text); ++n) {
    if (text.empty()) continue;
    PlanRow row = parse_plan_line(text, file.string() + ":" + std::to_string(n));
    if (row.index != plan.size()) {
      throw std::invalid_argument(file.string() + ":" + std::to_string(n) + ": field \"index\" is " +
                                  std::to_string(row.index) + ", expected " + std::to_string(plan.size()));
    }
    plan.push_back(std::move(row));
  }
  if (plan.empty()) throw std::invalid_argument(file.string() + ": no rows");
  return plan;
}

}  // namespace fencecheck
