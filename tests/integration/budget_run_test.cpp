// `fencecheck datasheet` and `fencecheck budget` with real servers (label `integration`):
// CI's one quick sheet — redis, its native client, pause-holder only — whose budget must
// bracket the lease (a holder paused past its 1000 ms lease overstays; one paused far less
// does not), and a budget interrupted by Ctrl-C that keeps what it probed.
#include <gtest/gtest.h>

#include "tests/integration/run_fixture.h"

namespace fencecheck::testing {
namespace {

class BudgetRun : public RunTest {
 protected:
  json read_json(const fs::path& file) const {
    std::ifstream in(file);
    return json::parse(in);
  }
  // The one stamped folder under dir.
  fs::path only_child(const fs::path& dir) const {
    std::vector<fs::path> found;
    for (const auto& e : fs::directory_iterator(dir)) found.push_back(e.path());
    EXPECT_EQ(found.size(), 1u) << dir;
    return found.empty() ? dir : found[0];
  }
};

TEST_F(BudgetRun, AQuickSheetOfRedisBracketsThePauseBoundaryNearTheLease) {
  const CommandResult r = run_command("timeout 600 " + std::string(FENCECHECK_BIN) + " datasheet --backend redis " +
                                      "--faults pause-holder --quick --ttl-ms 1000 --store " + store_);
  ASSERT_EQ(r.code, 0) << r.out;
  const fs::path sheet_dir = only_child(fs::path(store_) / "datasheets" / "redis-native");
  const json sheet = read_json(sheet_dir / "datasheet.json");
  ASSERT_EQ(sheet["faults"].size(), 1u) << sheet.dump(2);
  const json& pause = sheet["faults"][0];
  ASSERT_EQ(pause["budget"]["outcome"], "boundary") << pause.dump(2);
  // The physics: a pause past the lease (less the ≤ 100 ms the holder goes on holding) breaks
  // exclusion; one well inside it does not. The quick profile brackets within 250 ms.
  EXPECT_GE(pause["budget"]["broken_at"].get<int>(), 600) << pause.dump(2);
  EXPECT_LE(pause["budget"]["broken_at"].get<int>(), 1500) << pause.dump(2);
  EXPECT_GE(pause["budget"]["safe_at"].get<int>(), 500) << pause.dump(2);
  EXPECT_EQ(pause["classes"], json({{"overstayed", pause["classes"].value("overstayed", 0)}}))
      << "a paused holder overstays; nothing else: " << pause["classes"].dump();
  EXPECT_GT(pause["classes"].value("overstayed", 0), 0);
  EXPECT_EQ(pause["data"]["safe"], true) << "redis's token fences every stale write: " << pause.dump(2);
  EXPECT_EQ(sheet["token"]["kind"], "unique and increasing") << sheet["token"].dump();
  EXPECT_EQ(sheet["notice"]["told"], 0) << "the native redis client is never told";
  const fs::path budget_dir = sheet_dir / pause["dir"].get<std::string>();
  const json budget = read_json(budget_dir / "budget.json");
  for (const auto& probe : budget["search"]["probes"]) {
    for (const auto& t : probe["tries"]) {
      EXPECT_TRUE(fs::exists(fs::path(t["detail"]["run_dir"].get<std::string>()) / "history.jsonl")) << t.dump();
    }
  }
  std::ifstream html(sheet_dir / "datasheet.html");
  const std::string page((std::istreambuf_iterator<char>(html)), std::istreambuf_iterator<char>());
  EXPECT_NE(page.find("<svg"), std::string::npos) << "the rate plot is inline";
  EXPECT_TRUE(fs::exists(fs::path(store_) / "datasheets" / "datasheets.md")) << "the comparison table";
  std::ifstream repro(sheet_dir / "repro.sh");
  const std::string command((std::istreambuf_iterator<char>(repro)), std::istreambuf_iterator<char>());
  EXPECT_NE(command.find("'datasheet' '--backend' 'redis' '--faults' 'pause-holder'"), std::string::npos) << command;
  EXPECT_NE(command.find("'--seed'"), std::string::npos) << "the same seeds again: " << command;
}

TEST_F(BudgetRun, CtrlCKeepsWhatWasProbedAndExitsUndecided) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    const std::string out = store_ + "/budget.log";
    ::freopen(out.c_str(), "w", stdout);
    ::dup2(STDOUT_FILENO, STDERR_FILENO);
    ::execl(FENCECHECK_BIN, FENCECHECK_BIN, "budget", "--fault", "pause-holder", "--tries", "5", "--store",
            store_.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  // Wait for the first try to finish, then interrupt the second.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  std::string log;
  while (std::chrono::steady_clock::now() < deadline && log.find("try 1]") == std::string::npos) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    std::ifstream in(store_ + "/budget.log");
    log.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  ASSERT_NE(log.find("try 1]"), std::string::npos) << log;
  std::this_thread::sleep_for(std::chrono::seconds(1));
  ::kill(pid, SIGINT);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status)) << log;
  EXPECT_EQ(WEXITSTATUS(status), 2) << "interrupted: undecided";
  fs::path search;
  for (const auto& e : fs::directory_iterator(store_)) {
    if (e.path().filename().string().find("-budget-pause-holder") != std::string::npos) search = only_child(e.path());
  }
  ASSERT_FALSE(search.empty());
  const json budget = read_json(search / "budget.json");
  EXPECT_EQ(budget["interrupted"], true);
  EXPECT_GE(budget["search"]["probes"].size(), 1u) << budget.dump(2);
  EXPECT_NE(budget["search"]["stopped_by"].get<std::string>().find("interrupted"), std::string::npos);
}

}  // namespace
}  // namespace fencecheck::testing
