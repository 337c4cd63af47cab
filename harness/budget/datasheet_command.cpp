// `fencecheck datasheet`: one configuration's sheet (datasheet.h), or with --all every
// backend × client of the registries that can start here, and the comparison table of
// every sheet in <store>/datasheets/ (datasheet_render.h). --shard I/N runs every Nth
// configuration from the Ith, so that N machines split --all; copying their
// <store>/datasheets/ folders together and running --table-only makes the one table.
// --jobs N makes N sheets at once, each a child `fencecheck datasheet` (datasheet_jobs.h).
// Exit codes: 0 every sheet made; 2 interrupted or a sheet that failed (Ctrl-C: what was measured stays);
// 3 bad options, or (without --all) a configuration that cannot run here.
#include "harness/budget/datasheet_command.h"

#include <unistd.h>

#include <ctime>
#include <iostream>
#include <memory>
#include <thread>

#include "adapters/registry.h"
#include "backends/registry.h"
#include "harness/budget/budget_faults.h"
#include "harness/budget/datasheet.h"
#include "harness/budget/datasheet_jobs.h"
#include "harness/budget/datasheet_render.h"
#include "harness/option_schema.h"
#include "harness/subcommand.h"
#include "harness/run/run_command.h"
#include "harness/run/run_store.h"
#include "platform/errors.h"

namespace fencecheck {
namespace {

namespace fs = std::filesystem;

struct DatasheetArgs {
  RunArgs run;
  DatasheetOptions sheet;
  bool all = false;
  std::string shard;  // "I/N"
  int jobs = 1;
  bool table_only = false;
};

// Every backend with its native client, then every adapter on each backend it locks on.
std::vector<std::pair<std::string, std::string>> every_configuration() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const BackendInfo& b : backend_registry()) out.emplace_back(b.name, kNativeClient);
  for (const AdapterInfo& a : adapter_registry()) {
    for (const auto& b : a.backends) out.emplace_back(b, a.name);
  }
  return out;
}

std::pair<int, int> parse_shard(const std::string& text) {
  const std::size_t slash = text.find('/');
  try {
    if (slash != std::string::npos) {
      const int i = std::stoi(text.substr(0, slash)), n = std::stoi(text.substr(slash + 1));
      if (n >= 1 && i >= 0 && i < n) return {i, n};
    }
  } catch (const std::exception&) {
  }
  throw std::invalid_argument("--shard \"" + text + "\" must be I/N with 0 <= I < N, e.g. 0/2");
}

std::string heading(bool quick) {
  char date[32], host[128] = "?";
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
  ::gethostname(host, sizeof host - 1);
  return std::string("fencecheck datasheets (") + (quick ? "quick" : "full") + "), " + date + ", " + host + ", " +
         std::to_string(std::thread::hardware_concurrency()) + " cores";
}

fs::path sheets_root(const RunConfig& c) { return fs::path(c.store) / "datasheets"; }

// This process's arguments without --all, --jobs and --shard: what each configuration's
// sheet is made with (a job's child, repro.sh), with its --backend and --client.
std::vector<std::string> own_args_for_one_sheet() {
  const std::vector<std::string> all = own_arguments();
  std::vector<std::string> out;
  for (std::size_t i = 0; i < all.size(); ++i) {
    const std::string& a = all[i];
    if (a == "--all") continue;
    if (a == "--jobs" || a == "--shard") {
      ++i;
      continue;
    }
    if (a.rfind("--jobs=", 0) == 0 || a.rfind("--shard=", 0) == 0) continue;
    out.push_back(a);
  }
  return out;
}

// One configuration's sheet; false when Ctrl-C ended it.
bool one_sheet(const RunConfig& c, const DatasheetOptions& o, std::vector<std::string> args) {
  const fs::path dir = create_stamped_dir(sheets_root(c) / (c.backend + "-" + c.opts.text("client")));
  write_command_repro(dir, std::move(args), c.seed.value_or(0));
  std::cout << "fencecheck datasheet: " << c.backend << " (" << c.opts.text("client") << ") in " << dir.string() << std::endl;
  const Datasheet sheet = make_datasheet(c, o, dir);
  std::cout << "fencecheck datasheet: " << (dir / "datasheet.md").string() << "\n" << datasheet_markdown(sheet.doc) << std::endl;
  return !sheet.interrupted;
}

int datasheet_main(DatasheetArgs& a, const CLI::App& cmd) {
  refuse_flags(cmd, {"--nemesis", "--plan", "--replay", "--junit", "--time-limit", "--resource"}, "datasheet",
               "its runs are its own (one fault as a plan per probe, the resource fenced)");
  a.run.finish(run_option_schema());
  RunConfig base = a.run.config;
  base.nemesis.clear();
  for (const auto& f : a.sheet.faults) {
    if (find_budget_fault(f) == nullptr) throw std::invalid_argument("--faults: unknown fault \"" + f + "\"; faults: " + budget_fault_names());
  }
  bool complete = true;
  if (a.table_only) {
    // nothing to run: the table below is made from the sheets already there
  } else if (!a.all) {
    base.resolve();
    if (auto why = base.problem()) throw std::invalid_argument(*why);
    complete = one_sheet(base, a.sheet, own_arguments());
  } else {
    refuse_flags(cmd, {"--backend", "--client"}, "datasheet --all", "it makes a sheet of every backend and client");
    const auto [shard, shards] = a.shard.empty() ? std::pair(0, 1) : parse_shard(a.shard);
    const auto configs = every_configuration();
    std::vector<SheetJob> jobs;
    for (std::size_t k = 0; k < configs.size() && complete; ++k) {
      if (static_cast<int>(k % static_cast<std::size_t>(shards)) != shard) continue;
      RunConfig c = base;
      c.backend = configs[k].first;
      c.opts.set("client", configs[k].second);
      c.name.clear();
      c.resolve();
      const std::string name = c.backend + " (" + configs[k].second + ")";
      if (auto why = c.problem()) {
        std::cout << "fencecheck datasheet: " << name << " not run here: " << *why << std::endl;
        continue;
      }
      std::vector<std::string> args = own_args_for_one_sheet();
      args.insert(args.end(), {"--backend", c.backend, "--client", configs[k].second});
      if (a.jobs <= 1) {
        complete = one_sheet(c, a.sheet, args);
        continue;
      }
      fs::create_directories(sheets_root(base) / "logs");
      jobs.push_back({name, args, sheets_root(base) / "logs" / (c.backend + "-" + configs[k].second + ".log")});
    }
    if (!jobs.empty()) {
      for (int code : run_sheet_jobs(jobs, a.jobs)) complete = complete && code == 0;
    }
  }
  const std::vector<nlohmann::json> sheets = find_datasheets(sheets_root(base));
  write_comparison(sheets_root(base), sheets, heading(a.sheet.quick));
  std::cout << "fencecheck datasheet: " << sheets.size() << " sheet(s) in the table "
            << (sheets_root(base) / "datasheets.md").string() << std::endl;
  return complete ? 0 : 2;
}

}  // namespace

void add_datasheet_command(CLI::App& app) {
  auto a = std::make_shared<DatasheetArgs>();
  a->run.config.opts = run_option_schema().defaults();
  CLI::App* cmd = app.add_subcommand(
      "datasheet", "Measure one lock configuration (or --all) into a datasheet: its fault budgets, token, notices");
  add_run_options(*cmd, a->run, run_option_schema());
  cmd->add_flag("--quick", a->sheet.quick, "3 tries per magnitude, a coarse resolution (a quarter of the lease)");
  cmd->add_option("--faults", a->sheet.faults, "the faults measured (default every one): " + budget_fault_names())
      ->delimiter(',');
  cmd->add_option("--budget", a->sheet.budget_s, "seconds of runs per fault after which no new run starts")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--all", a->all, "every backend × client of the registries that can start here, then the table");
  cmd->add_option("--shard", a->shard, "with --all: I/N, every Nth configuration from the Ith (0-based)");
  cmd->add_option("--jobs", a->jobs, "with --all: sheets made at once, each in its own process")
      ->capture_default_str()
      ->check(CLI::Range(1, 16));
  cmd->add_flag("--table-only", a->table_only, "run nothing: remake the table from the sheets in <store>/datasheets");
  cmd->callback([a, cmd] { finish_subcommand("datasheet", [&] { return datasheet_main(*a, *cmd); }); });
}

}  // namespace fencecheck
