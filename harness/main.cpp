// fencecheck: a Jepsen-style safety tester for distributed lock services.
// Each subcommand lives in its own file and registers itself here, one line each.
#include <iostream>

#include <CLI/CLI.hpp>

#include "harness/adapters_command.h"
#include "harness/budget/budget_command.h"
#include "harness/budget/datasheet_command.h"
#include "harness/check_command.h"
#include "harness/resource/resource_server.h"
#include "harness/run/run_command.h"
#include "harness/shrink/shrink_command.h"
#include "harness/suite/suite_command.h"
#include "harness/clean_command.h"
#include "harness/preflight_command.h"
#include "harness/report_command.h"
#include "harness/worker/worker_server.h"

int main(int argc, char** argv) {
  CLI::App app{"fencecheck: a safety tester for distributed lock services"};
  app.set_version_flag("--version", std::string("fencecheck ") + FENCECHECK_VERSION);
  app.require_subcommand(1);
  fencecheck::add_run_command(app);
  fencecheck::add_check_command(app);
  fencecheck::add_suite_command(app);
  fencecheck::add_shrink_command(app);
  fencecheck::add_budget_command(app);
  fencecheck::add_datasheet_command(app);
  fencecheck::add_clean_command(app);
  fencecheck::add_preflight_command(app);
  fencecheck::add_report_commands(app);
  fencecheck::add_adapters_command(app);
  fencecheck::add_worker_command(app);
  fencecheck::add_resource_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::RuntimeError& e) {
    return e.get_exit_code();  // a subcommand finished; its exit code
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    // --help and --version exit 0; any other usage error is bad input: exit 3 (4 for
    // `suite run-row`, whose 3 means "run it again").
    if (code == 0) return 0;
    return fencecheck::parsing_run_row(app) ? 4 : 3;
  } catch (const std::exception& e) {
    // Every subcommand reports its own errors; this is the last line of defence against
    // an abort, so that a harness failure is always exit 3 with a message.
    std::cerr << "fencecheck: " << e.what() << "\n";
    return 3;
  }
  return 0;
}
