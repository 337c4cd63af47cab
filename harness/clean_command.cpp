#include "harness/clean_command.h"

#include <iostream>
#include <memory>

#include "platform/errors.h"
#include "platform/nodes_file.h"
#include "platform/run_state.h"

namespace fencecheck {

int run_clean(const std::string& run_id, bool force, const std::string& nodes_file, std::ostream& out,
              std::ostream& err) {
  CleanReport report = clean_runs(run_id, force);
  if (!nodes_file.empty()) {
    try {
      clean_ssh_hosts(read_nodes_file(nodes_file), run_id, report);
    } catch (const InputError& e) {
      report.errors.push_back(e.what());
    }
  }
  for (const auto& line : report.removed) out << line << "\n";
  for (const auto& line : report.skipped) out << "skipped " << line << "\n";
  for (const auto& line : report.errors) err << "fencecheck clean: " << line << "\n";
  if (report.removed.empty() && report.errors.empty()) out << "nothing to clean\n";
  return report.errors.empty() ? 0 : 3;
}

void add_clean_command(CLI::App& app) {
  struct Options {
    std::string run_id;
    bool force = false;
    std::string nodes_file;
  };
  auto options = std::make_shared<Options>();
  CLI::App* clean = app.add_subcommand(
      "clean", "Remove the processes, namespaces and files that dead runs left behind");
  clean->add_option("--run", options->run_id, "Only this run id (default: every dead run)");
  clean->add_flag("--force", options->force,
                  "Also clean runs whose controller is still alive");
  clean->add_option("--nodes-file", options->nodes_file,
                    "Also clean the hosts of this nodes file (--runtime ssh): processes, firewall chains and "
                    "run directories of runs that are over");
  clean->callback([options] {
    int code = run_clean(options->run_id, options->force, options->nodes_file, std::cout, std::cerr);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

}  // namespace fencecheck
