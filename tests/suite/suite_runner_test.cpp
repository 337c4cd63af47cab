// What the suite runner keeps of a run's log for suite.json.
#include "harness/suite/suite_runner.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

namespace fencecheck {
namespace {

struct LogFile {
  explicit LogFile(const std::string& text)
      : path(std::filesystem::temp_directory_path() / ("fc-suite-log-" + std::to_string(::getpid()))) {
    std::ofstream(path, std::ios::binary) << text;
  }
  ~LogFile() { std::filesystem::remove(path); }
  std::filesystem::path path;
};

// A tail cut through a character, or a server's stray byte, must still go into suite.json.
TEST(RunLogTail, IsValidUtf8WhereverItIsCut) {
  // "é" is two bytes: a 5-byte tail of "ééé" would start inside one.
  LogFile cut("ab\xc3\xa9\xc3\xa9\xc3\xa9");
  std::string tail = run_log_tail(cut.path, 5);
  EXPECT_EQ(tail, "…\xc3\xa9\xc3\xa9");
  EXPECT_NO_THROW(nlohmann::json(tail).dump());

  LogFile stray("FATAL: r\xf4le");
  tail = run_log_tail(stray.path);
  EXPECT_EQ(tail, "FATAL: r\xEF\xBF\xBDle");
  EXPECT_NO_THROW(nlohmann::json(tail).dump());
}

TEST(RunLogTail, AMissingLogIsEmpty) { EXPECT_EQ(run_log_tail("/nonexistent/fc.log"), ""); }

}  // namespace
}  // namespace fencecheck
