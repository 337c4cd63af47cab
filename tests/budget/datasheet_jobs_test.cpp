// run_sheet_jobs (harness/budget/datasheet_jobs.h) with this very binary as each job's
// child: given --fc-job=EXIT,DIR it notes how many jobs are running at once (a file per
// running job in DIR), waits 150 ms, and exits EXIT — before main, so no test runs in it.
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "harness/budget/datasheet_jobs.h"

namespace fencecheck {
namespace {

namespace fs = std::filesystem;

[[maybe_unused]] const bool kIsAJobsChild = [] {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  for (std::string arg; std::getline(in, arg, '\0');) {
    if (arg.rfind("--fc-job=", 0) != 0) continue;
    const std::size_t comma = arg.find(',');
    const int code = std::atoi(arg.substr(9, comma - 9).c_str());
    const fs::path dir = arg.substr(comma + 1);
    const fs::path mine = dir / ("running." + std::to_string(::getpid()));
    std::ofstream(mine).put('x');
    std::size_t running = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) running += e.path().filename().string().rfind("running.", 0) == 0;
    std::cout << "running at once: " << running << std::endl;
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    fs::remove(mine);
    std::_Exit(code);
  }
  return false;
}();

TEST(SheetJobs, EveryJobRunsAtMostNAtOnceAndGivesItsExitCode) {
  const fs::path dir = fs::temp_directory_path() / ("fc-sheet-jobs-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::vector<SheetJob> jobs;
  const std::vector<int> codes = {0, 3, 0, 2, 1};
  for (std::size_t k = 0; k < codes.size(); ++k) {
    jobs.push_back({"job " + std::to_string(k), {"--fc-job=" + std::to_string(codes[k]) + "," + dir.string()},
                    dir / ("job" + std::to_string(k) + ".log")});
  }
  EXPECT_EQ(run_sheet_jobs(jobs, 2), codes);
  for (const SheetJob& j : jobs) {
    std::ifstream log(j.log);
    std::string line;
    std::getline(log, line);
    ASSERT_EQ(line.rfind("running at once: ", 0), 0u) << j.name << ": its output goes to its log: " << line;
    const int at_once = std::stoi(line.substr(17));
    EXPECT_GE(at_once, 1);
    EXPECT_LE(at_once, 2) << j.name << " ran with " << at_once << " jobs at once; --jobs 2";
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace fencecheck
