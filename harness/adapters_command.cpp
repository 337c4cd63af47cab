#include "harness/adapters_command.h"

#include <iostream>
#include <memory>

#include <nlohmann/json.hpp>

#include "adapters/registry.h"

namespace fencecheck {

void print_adapters(std::ostream& out, bool json) {
  nlohmann::json all = nlohmann::json::array();
  all.push_back({{"client", kNativeClient},
                 {"library", "fencecheck's own C++ client of each backend"},
                 {"backends", backend_names()},
                 {"ready", true}});
  for (const AdapterInfo& a : adapter_registry()) {
    auto problem = adapter_install_problem(a);
    std::string backends;
    for (const auto& b : a.backends) backends += (backends.empty() ? "" : ", ") + b;
    nlohmann::json options = nlohmann::json::array();
    for (const BackendOption& o : a.options) {
      options.push_back({{"name", o.name}, {"default", o.default_value}, {"allowed", o.allowed}, {"description", o.description}});
    }
    all.push_back({{"client", a.name},
                   {"library", a.library + " " + a.version},
                   {"language", a.language},
                   {"backends", backends},
                   {"promise", a.promise},
                   {"options", options},
                   {"folder", adapter_dir(a).string()},
                   {"ready", !problem},
                   {"problem", problem ? nlohmann::json(*problem) : nlohmann::json()}});
  }
  if (json) {
    out << all.dump(2) << "\n";
    return;
  }
  for (const auto& row : all) {
    out << row["client"].get<std::string>() << ": " << row["library"].get<std::string>();
    if (row.contains("language")) out << " (" << row["language"].get<std::string>() << ")";
    out << "\n  backends: " << row["backends"].get<std::string>() << "\n";
    if (row.contains("promise")) out << "  promises: " << row["promise"].get<std::string>() << "\n";
    for (const auto& o : row.value("options", nlohmann::json::array())) {
      out << "  --client-opt " << o["name"].get<std::string>() << "=" << o["default"].get<std::string>() << ": "
          << o["description"].get<std::string>() << "\n";
    }
    if (row["ready"] == false) out << "  not ready: " << row["problem"].get<std::string>() << "\n";
  }
}

void add_adapters_command(CLI::App& app) {
  auto json = std::make_shared<bool>(false);
  CLI::App* cmd = app.add_subcommand("adapters", "List the lock clients --client takes: native and each library's adapter");
  cmd->add_flag("--json", *json, "Print JSON");
  cmd->callback([json] { print_adapters(std::cout, *json); });
}

}  // namespace fencecheck
