// The option schema of `fencecheck run`: one declaration gives the flag and its help, the
// range check, the config.json field, repro.sh's arguments and --replay's reading; a
// config.json as fencecheck wrote it before the schema reads back the same run.
#include "harness/run/run_options.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>

#include "checkers/registry.h"
#include "harness/run/run_command.h"
#include "harness/run/run_config.h"
#include "nemesis/fault_registry.h"

namespace fencecheck::testing {
namespace {

// A fault option nothing in fencecheck has: declared once, here, and nowhere else.
OptionSpec made_up_fault_option() {
  OptionSpec s;
  s.name = "wobble-ms";
  s.reader = OptionReader::kNemesis;
  s.default_value = 250;
  s.min = 10;
  s.max = 5000;
  s.unit = "ms";
  s.help = "how long a made-up wobble fault lasts";
  return s;
}

OptionSchema schema_with_made_up_option() {
  OptionSchema schema = make_run_option_schema();
  schema.add(made_up_fault_option());
  return schema;
}

bool has_pair(const std::vector<std::string>& args, const std::string& flag, const std::string& value) {
  for (std::size_t i = 0; i + 1 < args.size(); ++i) {
    if (args[i] == flag && args[i + 1] == value) return true;
  }
  return false;
}

TEST(RunOptions, OneDeclarationGivesFlagHelpConfigReproAndReplay) {
  const OptionSchema schema = schema_with_made_up_option();
  CLI::App app;
  add_run_command(app, schema);
  const std::string help = app.get_subcommand("run")->help();
  EXPECT_NE(help.find("--wobble-ms"), std::string::npos) << help;
  EXPECT_NE(help.find("how long a made-up wobble fault lasts [ms; default: 250]"), std::string::npos) << help;

  RunConfig c = parse_run_args({"--wobble-ms", "42", "--seed", "3"}, schema);
  c.resolve(schema);
  EXPECT_EQ(c.input_problem(schema), std::nullopt);
  const nlohmann::json config = c.to_json(schema);
  EXPECT_EQ(config["wobble_ms"], 42);
  EXPECT_TRUE(has_pair(c.repro_args(schema), "--wobble-ms", "42"));
  EXPECT_EQ(RunConfig::from_json(config, "config.json", schema).opts.integer("wobble-ms"), 42);
  EXPECT_EQ(parse_run_args(c.repro_args(schema), schema).opts.integer("wobble-ms"), 42);

  nlohmann::json before = config;  // a run stored before the option existed
  before.erase("wobble_ms");
  EXPECT_EQ(RunConfig::from_json(before, "config.json", schema).opts.integer("wobble-ms"), 250);

  c.opts.set("wobble-ms", 5);
  ASSERT_TRUE(c.input_problem(schema));
  EXPECT_EQ(*c.input_problem(schema), "--wobble-ms must be between 10 and 5000 (got 5 ms)");
  EXPECT_THROW(parse_run_args({"--wobble-ms", "soon"}, schema), std::invalid_argument);
  EXPECT_THROW(parse_run_args({"--wobble-ms", "42"}), std::invalid_argument) << "not declared in the real schema";
}

TEST(RunOptions, AnOptionDeclaredTwiceIsRefused) {
  OptionSchema schema = make_run_option_schema();
  OptionSpec again = made_up_fault_option();
  again.name = "pause-ms";
  EXPECT_THROW(schema.add(again), std::logic_error);
}

// config.json exactly as fencecheck wrote it before options were declared once (no model,
// no linear_* fields): --replay must read it back to the same run.
TEST(RunOptions, TodaysConfigJsonReadsBack) {
  const nlohmann::json stored = nlohmann::json::parse(R"({
    "backend": "redlock", "backend_options": {"n": "3", "persistence": "none"},
    "clock_max_ms": 5000, "clock_min_ms": 2500,
    "command": ["--backend", "redlock", "--backend-opt", "n=3"],
    "concurrency": 5, "hold_ms": 100, "keys": 1, "max_info": 1000, "name": "K3",
    "nemesis": ["clock-bump"], "nemesis_interval_ms": 500, "nemesis_targets": "all",
    "op_timeout_ms": 5000, "pause_ms": 3000, "resource": "unfenced", "restart_ms": 0,
    "runtime": "netns", "seed": 12345, "stall_ms": 10000, "store": "/tmp/store",
    "time_limit_s": 15.0, "ttl_ms": 1000, "workload": "lock-append"})");
  RunConfig c = RunConfig::from_json(stored, "config.json");
  EXPECT_EQ(c.backend, "redlock");
  EXPECT_EQ(c.backend_opts, (std::vector<std::string>{"n=3", "persistence=none"}));
  EXPECT_EQ(c.opts.integer("clock-min-ms"), 2500);
  EXPECT_EQ(c.opts.integer("clock-max-ms"), 5000);
  EXPECT_EQ(c.opts.text("nemesis-targets"), "all");
  EXPECT_EQ(c.opts.integer("nemesis-interval"), 500);
  EXPECT_EQ(c.opts.number("time-limit"), 15.0);
  EXPECT_EQ(c.opts.text("model"), "") << "absent: its default";
  EXPECT_EQ(check_options(c.opts).time_limit_s, CheckOptions{}.time_limit_s);
  c.resolve();
  const nlohmann::json again = c.to_json();
  for (const auto& [field, value] : stored.items()) {
    // "command" is the runner's, beside to_json(); backend_options gains the backend's
    // other options at their defaults (this sample names two).
    if (field == "command" || field == "backend_options") continue;
    EXPECT_EQ(again.value(field, nlohmann::json()), value) << field << " changed its name or meaning";
  }
  // Older still: before clock_min_ms and nemesis_targets.
  nlohmann::json older = stored;
  older.erase("clock_min_ms");
  older.erase("nemesis_targets");
  RunConfig o = RunConfig::from_json(older, "config.json");
  EXPECT_EQ(o.opts.integer("clock-min-ms"), 0);
  EXPECT_EQ(o.opts.text("nemesis-targets"), "");
  nlohmann::json mistyped = stored;
  mistyped["pause_ms"] = "3000";
  try {
    RunConfig::from_json(mistyped, "config.json");
    FAIL() << "a mistyped field was accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("pause_ms"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("config.json"), std::string::npos) << e.what();
  }
}

TEST(RunOptions, RunTakesTheCheckerOptionsUnderNamesThatDoNotClash) {
  RunConfig c = parse_run_args({"--time-limit", "20", "--model", "register", "--linear-time-limit", "5",
                                "--linear-memory-limit", "512M"});
  EXPECT_EQ(c.opts.number("time-limit"), 20.0) << "run's --time-limit is the test's length";
  CheckOptions o = check_options(c.opts);
  EXPECT_EQ(o.model, "register");
  EXPECT_EQ(o.time_limit_s, 5.0);
  EXPECT_EQ(o.memory_limit_bytes, std::size_t{512} << 20);
  c.seed = 1;
  c.resolve();
  const nlohmann::json config = c.to_json();
  EXPECT_EQ(config["model"], "register");
  EXPECT_EQ(config["linear_time_limit_s"], 5.0);
  EXPECT_EQ(config["linear_memory_limit_bytes"], std::int64_t{512} << 20);
  EXPECT_TRUE(has_pair(c.repro_args(), "--linear-time-limit", "5"));
  EXPECT_TRUE(has_pair(c.repro_args(), "--model", "register"));
  EXPECT_EQ(RunConfig::from_json(config, "c").opts.text("model"), "register");
}

TEST(RunOptions, ValuesParseByTheirTypeOrNameTheOption) {
  const OptionSchema& schema = run_option_schema();
  const OptionSpec& memory = *schema.find("linear-memory-limit");
  EXPECT_EQ(OptionSchema::parse(memory, "512M"), std::int64_t{512} << 20);
  EXPECT_EQ(OptionSchema::parse(memory, "2G"), std::int64_t{2} << 30);
  EXPECT_EQ(OptionSchema::parse(memory, "4096"), 4096);
  for (const char* bad : {"lots", "", "5X", "99999999999999T"}) {
    EXPECT_THROW(OptionSchema::parse(memory, bad), std::invalid_argument) << bad;
  }
  const OptionSpec& time_limit = *schema.find("time-limit");
  EXPECT_EQ(OptionSchema::parse(time_limit, "2.5"), 2.5);
  for (const char* bad : {"nan", "inf", "2.5s", "soon"}) {
    EXPECT_THROW(OptionSchema::parse(time_limit, bad), std::invalid_argument) << bad;
  }
  try {
    OptionSchema::parse(*schema.find("keys"), "3.5");
    FAIL() << "3.5 keys accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "--keys: \"3.5\" is not a whole number");
  }
}

TEST(RunOptions, DerivedDefaultsFollowWhatTheyDependOn) {
  RunConfig c;
  c.opts.set("pause-ms", 9000);
  c.resolve();
  EXPECT_EQ(c.opts.integer("op-timeout-ms"), 11000);
  EXPECT_EQ(c.opts.integer("stall-ms"), 22000);
}

TEST(FaultOptions, EachFaultsOptionsAreDeclaredAndEachDeclaredOptionIsRead) {
  std::vector<std::string> read;
  for (const FaultInfo& f : fault_registry()) {
    for (const auto& o : f.options) {
      EXPECT_NE(run_option_schema().find(o), nullptr) << f.name << " reads --" << o << ", which is not declared";
      read.push_back(o);
    }
  }
  for (const OptionSpec& spec : fault_option_specs()) {
    EXPECT_NE(std::find(read.begin(), read.end(), spec.name), read.end()) << "no fault reads --" << spec.name;
    EXPECT_TRUE(default_fault_options().has(spec.name)) << spec.name;
  }
}

}  // namespace
}  // namespace fencecheck::testing
