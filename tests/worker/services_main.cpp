// A stand-in for `fencecheck worker` / `fencecheck resource` while harness/main.cpp is
// not there: the same subcommands, registered the same way, so tests exercise the real
// command code (options, SIGTERM handling, exit status).
#include <iostream>

#include <CLI/CLI.hpp>

#include "harness/resource/resource_server.h"
#include "harness/worker/worker_server.h"

int main(int argc, char** argv) {
  CLI::App app("fencecheck client-side services (test build)");
  app.require_subcommand(1);
  fencecheck::add_worker_command(app);
  fencecheck::add_resource_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 3;
  }
  return 0;
}
