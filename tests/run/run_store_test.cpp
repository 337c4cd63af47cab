// The run store: fresh run directories, the `latest` link, and repro.sh.
#include "harness/run/run_store.h"

#include <sys/stat.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <set>

#include "tests/run/temp_dir.h"

namespace fencecheck::testing {
namespace {

namespace fs = std::filesystem;

TEST(RunStore, CreatesAFreshRunDirectoryWithNodes) {
  TempDir store;
  fs::path dir = create_run_dir(store.path(), "redis-lock");
  EXPECT_EQ(dir.parent_path(), store.path() / "redis-lock");
  EXPECT_TRUE(fs::is_directory(dir / "nodes"));
  EXPECT_TRUE(fs::is_empty(dir / "nodes"));
  // A UTC timestamp with milliseconds, e.g. 20261130T141718.123Z.
  EXPECT_EQ(dir.filename().string().size(), 20u) << dir;
  EXPECT_EQ(dir.filename().string().back(), 'Z') << dir;
}

TEST(RunStore, NeverReusesADirectoryEvenWithinOneMillisecond) {
  TempDir store;
  std::set<fs::path> dirs;
  for (int i = 0; i < 20; ++i) {
    fs::path dir = create_run_dir(store.path(), "t");
    std::ofstream(dir / "mine") << i;
    EXPECT_TRUE(dirs.insert(dir).second) << "reused " << dir;
  }
  for (const auto& dir : dirs) {
    EXPECT_TRUE(fs::is_directory(dir / "nodes")) << dir;
    EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 2) << dir;
  }
}

TEST(RunStore, UnwritableStoreIsAClearError) {
  TempDir store;
  std::ofstream(store.path() / "file") << "x";
  EXPECT_THROW(create_run_dir(store.path() / "file", "t"), std::runtime_error);
}

TEST(RunStore, LatestPointsAtTheNewestRun) {
  TempDir store;
  fs::path first = create_run_dir(store.path(), "a");
  update_latest(store.path(), first);
  EXPECT_EQ(fs::canonical(store.path() / "latest"), fs::canonical(first));
  fs::path second = create_run_dir(store.path(), "b");
  update_latest(store.path(), second);
  EXPECT_TRUE(fs::is_symlink(store.path() / "latest"));
  EXPECT_EQ(fs::canonical(store.path() / "latest"), fs::canonical(second));
  EXPECT_TRUE(fs::read_symlink(store.path() / "latest").is_relative()) << "the store must stay movable";
  // No temporary link is left beside it.
  for (const auto& entry : fs::directory_iterator(store.path())) {
    EXPECT_NE(entry.path().filename().string().rfind(".latest", 0), 0u) << entry.path();
  }
}

std::string run_shell(const std::string& cmd) {
  FILE* p = ::popen((cmd + " 2>&1").c_str(), "r");
  std::string out;
  char buf[4096];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  EXPECT_EQ(::pclose(p), 0) << cmd << "\n" << out;
  return out;
}

TEST(RunStore, ReproScriptReplaysItsOwnDirectoryWhereverItIsAndQuotes) {
  TempDir dir;
  const fs::path run = dir.path() / "a run dir";
  fs::create_directories(run);
  const std::vector<std::string> args = {"--name", "two words", "it's", "$HOME", "a\"b", "`id`", "", "*"};
  write_repro(run, "/bin/echo", args, dir.path() / "the store");
  fs::path script = run / "repro.sh";
  struct stat st {};
  ASSERT_EQ(::stat(script.c_str(), &st), 0);
  EXPECT_TRUE(st.st_mode & S_IXUSR) << "repro.sh must be executable";
  run_shell("sh -n '" + script.string() + "'");
  // /bin/echo prints its arguments joined by spaces: exactly what the script passed.
  EXPECT_EQ(run_shell("'" + script.string() + "' --extra"),
            "run --replay " + run.string() + " --store " + (dir.path() / "the store").string() + " --extra\n");
  // Moved elsewhere, it replays the directory it is in now.
  fs::rename(run, dir.path() / "moved");
  EXPECT_EQ(run_shell("'" + (dir.path() / "moved" / "repro.sh").string() + "'"),
            "run --replay " + (dir.path() / "moved").string() + " --store " + (dir.path() / "the store").string() + "\n");
  // The plain command, every argument quoted, is kept as a comment that parses as shell.
  std::ifstream in(dir.path() / "moved" / "repro.sh");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto at = text.find("#   ");
  ASSERT_NE(at, std::string::npos) << text;
  std::string plain = text.substr(at + 4, text.find('\n', at) - at - 4);
  EXPECT_EQ(run_shell(plain), "run --name two words it's $HOME a\"b `id`  *\n");
}

TEST(RunStore, ReproScriptQuotesTheProgramPath) {
  TempDir dir;
  fs::path exe = dir.path() / "my fencecheck";
  std::ofstream(exe) << "#!/bin/sh\necho \"[$1][$2]\"\n";
  fs::permissions(exe, fs::perms::owner_all);
  write_repro(dir.path(), exe, {"a b"}, "/s");
  EXPECT_EQ(run_shell((dir.path() / "repro.sh").string()), "[run][--replay]\n");
}

}  // namespace
}  // namespace fencecheck::testing
