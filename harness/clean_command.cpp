#include "harness/clean_command.h"

#include <iostream>
#include <memory>

#include "platform/run_state.h"

namespace fencecheck {

int run_clean(const std::string& run_id, bool force, std::ostream& out, std::ostream& err) {
  CleanReport report = clean_runs(run_id, force);
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
  };
  auto options = std::make_shared<Options>();
  CLI::App* clean = app.add_subcommand(
      "clean", "Remove the processes, namespaces and files that dead runs left behind");
  clean->add_option("--run", options->run_id, "Only this run id (default: every dead run)");
  clean->add_flag("--force", options->force,
                  "Also clean runs whose controller is still alive");
  clean->callback([options] {
    int code = run_clean(options->run_id, options->force, std::cout, std::cerr);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

}  // namespace fencecheck
