// The row contract end to end (label `integration`, root: the runs use network namespaces):
// `suite run-row` SIGKILLed at random instants, then run again, stores its row exactly once
// and never leaves a half-made row that collect would read; rows fanned out as parallel
// processes (xargs -P 2) collect into the same table as the one-process suite of the same
// plan; collect names a hole and exits 3.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <random>
#include <thread>

#include "tests/integration/run_fixture.h"
#include "tests/integration/run_processes.h"

namespace fencecheck::testing {
namespace {

using json = nlohmann::json;

class SuiteRowsTest : public RunTest {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "the rows' runs use network namespaces (root)";
    RunTest::SetUp();
  }
  std::string fc() const { return std::string(FENCECHECK_BIN); }
  // A plan of the redis × fault matrix, written to <store>/plan.jsonl; its path.
  std::string plan(const std::string& faults, int repeat, int seconds) {
    const std::string file = store_ + "/plan.jsonl";
    auto r = run_command(fc() + " suite plan matrix --backends redis --faults " + faults + " --time-limit " +
                         std::to_string(seconds) + " --repeat " + std::to_string(repeat) + " > " + file);
    EXPECT_EQ(r.code, 0) << r.out;
    return file;
  }
  pid_t spawn_row(const std::string& plan_file, const std::string& store, int index) {
    std::cout.flush();  // a child must not inherit (and print again) what is buffered
    std::fflush(stdout);
    pid_t pid = ::fork();
    if (pid == 0) {
      std::string out = store_ + "/row.log";
      ::freopen(out.c_str(), "a", stdout);
      ::dup2(STDOUT_FILENO, STDERR_FILENO);
      const std::string i = std::to_string(index);
      ::execl(FENCECHECK_BIN, FENCECHECK_BIN, "suite", "run-row", "--plan", plan_file.c_str(), "--index", i.c_str(),
              "--store", store.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    return pid;
  }
  static std::vector<std::string> dirs_in(const fs::path& dir) {
    std::vector<std::string> out;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }
};

// A SIGTERM (a pod evicted, a node drained) cuts the run short: the row is kept for the table
// but without a verdict, run-row exits 3 (worth a retry), and the next try runs it whole.
TEST_F(SuiteRowsTest, ARowCutShortBySigtermIsRunAgainByTheNextTry) {
  const std::string plan_file = plan("none", 1, 6);
  const std::string store = store_ + "/rows-store";
  pid_t row = spawn_row(plan_file, store, 0);
  // Into the test phase: the run's history has its first ok op (setup takes ~1 s, longer on
  // a busy machine).
  bool testing = false;
  for (int i = 0; i < 600 && !testing; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const fs::path history = first_file_named(fs::path(store) / "runs", "history.jsonl");
    std::ifstream in(history);
    for (std::string line; !testing && std::getline(in, line);) testing = line.find("\"ok\"") != std::string::npos;
  }
  ASSERT_TRUE(testing) << "the row's run never got to its test";
  ::kill(row, SIGTERM);
  EXPECT_EQ(exit_code(row), 3) << "a cut-short row asks to be run again";
  std::vector<std::string> rows = dirs_in(fs::path(store) / "rows");
  ASSERT_EQ(rows.size(), 1u);
  const fs::path row_json = fs::path(store) / "rows" / rows[0] / "row.json";
  json first = json::parse(std::ifstream(row_json), nullptr, false);
  ASSERT_TRUE(first.is_object());
  EXPECT_EQ(first.value("verdict", true), false) << first.dump();
  json results = json::parse(std::ifstream(fs::path(store) / first.value("run", std::string()) / "results.json"),
                             nullptr, false);
  ASSERT_TRUE(results.is_object());
  EXPECT_EQ(results["run"]["interrupted"], true) << "the run knew it was cut short";

  EXPECT_EQ(exit_code(spawn_row(plan_file, store, 0)), 0) << "the next try runs it whole";
  json second = json::parse(std::ifstream(row_json), nullptr, false);
  EXPECT_EQ(second.value("verdict", false), true) << second.dump();
  EXPECT_NE(second.value("run", std::string()), first.value("run", std::string()));
}

TEST_F(SuiteRowsTest, ARowKilledAtRandomInstantsIsStoredOnceByTheNextTry) {
  const std::string plan_file = plan("pause-holder", 1, 6);
  const std::string store = store_ + "/rows-store";
  std::mt19937 rng(std::random_device{}());
  int stored_by_killed = 0;  // kills that came after the row was stored (the run takes ~7 s)
  for (int attempt = 0; attempt < 3; ++attempt) {
    pid_t row = spawn_row(plan_file, store, 0);
    const int ms = std::uniform_int_distribution<int>(100, 5000)(rng);
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    pid_t run = child_with(row, " run ");
    std::optional<std::string> run_id = run == 0 ? std::nullopt : run_id_of_controller(run);
    ::kill(row, SIGKILL);
    ::waitpid(row, nullptr, 0);
    // Its run dies of its parent-death signal; then clean what it recorded.
    for (int i = 0; run != 0 && i < 500 && ::kill(run, 0) == 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (run_id) {
      EXPECT_EQ(run_command(fc() + " clean --run " + *run_id).code, 0);
    }
    // Either the row is not stored (only .partial- directories, which collect never reads) or
    // it is, whole: a kill after it was renamed into place.
    for (const std::string& d : dirs_in(fs::path(store) / "rows")) {
      if (d.rfind(".partial-", 0) == 0) continue;
      json row_doc = json::parse(std::ifstream(fs::path(store) / "rows" / d / "row.json"), nullptr, false);
      ASSERT_TRUE(row_doc.is_object()) << "killed at " << ms << " ms: rows/" << d << " without a whole row.json";
      EXPECT_EQ(row_doc.value("verdict", false), true) << row_doc.dump();
      EXPECT_TRUE(fs::exists(fs::path(store) / row_doc.value("run", std::string()) / "results.json")) << row_doc.dump();
      ++stored_by_killed;
    }
  }
  std::cout << "[ rows ] " << stored_by_killed << " of 3 killed tries found the row stored\n";
  pid_t row = spawn_row(plan_file, store, 0);
  EXPECT_EQ(exit_code(row), 0) << controller_log();
  std::vector<std::string> rows = dirs_in(fs::path(store) / "rows");
  ASSERT_EQ(rows.size(), 1u) << "one row, and no .partial- left of the killed tries";
  const fs::path row_json = fs::path(store) / "rows" / rows[0] / "row.json";
  const auto written = fs::last_write_time(row_json);
  // Run again: stored already, nothing done.
  EXPECT_EQ(exit_code(spawn_row(plan_file, store, 0)), 0);
  EXPECT_EQ(fs::last_write_time(row_json), written);
  auto collect = run_command(fc() + " suite collect --store " + store + " --plan " + plan_file);
  EXPECT_EQ(collect.code == 0 || collect.code == 1, true) << collect.out;
  EXPECT_EQ(collect.out.find("problem"), std::string::npos) << collect.out;
}

TEST_F(SuiteRowsTest, FannedOutRowsCollectIntoTheSequentialSuitesTable) {
  const std::string plan_file = plan("none", 4, 3);
  const std::string fan = store_ + "/fan";
  auto t0 = std::chrono::steady_clock::now();
  auto rows = run_command("seq 0 3 | xargs -P 2 -I{} " + fc() + " suite run-row --plan " + plan_file +
                          " --index {} --store " + fan);
  ASSERT_EQ(rows.code, 0) << rows.out;
  auto collect = run_command(fc() + " suite collect --store " + fan + " --plan " + plan_file);
  ASSERT_EQ(collect.code, 0) << collect.out;
  const double fan_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  auto seq = run_command(fc() + " suite matrix --backends redis --faults none --time-limit 3 --repeat 4 --store " +
                         store_ + "/seq");
  ASSERT_EQ(seq.code, 0) << seq.out;
  const double all_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cout << "[ rows ] 4 rows fanned out over 2 processes and collected in " << fan_s << " s; one process: "
            << all_s - fan_s << " s\n";
  fs::path seq_dir;
  for (const auto& e : fs::recursive_directory_iterator(store_ + "/seq")) {
    if (e.path().filename() == "suite.json") seq_dir = e.path().parent_path();
  }
  json a = json::parse(std::ifstream(fs::path(fan) / "suite.json"));
  json b = json::parse(std::ifstream(seq_dir / "suite.json"));
  ASSERT_EQ(a["rows"].size(), b["rows"].size());
  for (std::size_t i = 0; i < a["rows"].size(); ++i) {
    EXPECT_EQ(a["rows"][i]["id"], b["rows"][i]["id"]);
    ASSERT_EQ(a["rows"][i]["runs"].size(), b["rows"][i]["runs"].size());
    for (std::size_t r = 0; r < a["rows"][i]["runs"].size(); ++r) {
      EXPECT_EQ(a["rows"][i]["runs"][r]["seed"], b["rows"][i]["runs"][r]["seed"]);
      EXPECT_EQ(a["rows"][i]["runs"][r]["verdict"], b["rows"][i]["runs"][r]["verdict"]) << "no fault: valid in both";
    }
  }
  std::ifstream seq_plan(seq_dir / "plan.jsonl"), fan_plan(plan_file);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(seq_plan), {}),
            std::string(std::istreambuf_iterator<char>(fan_plan), {}))
      << "the suite ran the very plan that `suite plan` printed";
  // A hole: collect names it and exits 3.
  std::vector<std::string> stored = dirs_in(fs::path(fan) / "rows");
  ASSERT_EQ(stored.size(), 4u);
  fs::remove_all(fs::path(fan) / "rows" / stored[1]);
  auto holed = run_command(fc() + " suite collect --store " + fan + " --plan " + plan_file);
  EXPECT_EQ(holed.code, 3) << holed.out;
  EXPECT_NE(holed.out.find("missing: row"), std::string::npos) << holed.out;
}

}  // namespace
}  // namespace fencecheck::testing
