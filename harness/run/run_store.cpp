#include "harness/run/run_store.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>

#include "platform/atomic_file.h"
#include "platform/runtime.h"

namespace fencecheck {
namespace fs = std::filesystem;

std::string utc_timestamp() {
  auto now = std::chrono::system_clock::now();
  std::time_t t = std::chrono::system_clock::to_time_t(now);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d%02d%02dT%02d%02d%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
                tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms));
  return buf;
}

namespace {

// Single-quotes s for sh.
std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

}  // namespace

fs::path create_stamped_dir(const fs::path& parent) {
  std::error_code ec;
  fs::create_directories(parent, ec);
  if (ec) throw HarnessError("cannot create " + parent.string() + ": " + ec.message());
  std::string stamp = utc_timestamp();
  for (int attempt = 0; attempt < 100; ++attempt) {
    fs::path dir = parent / (attempt == 0 ? stamp : stamp + "-" + std::to_string(attempt));
    if (::mkdir(dir.c_str(), 0755) == 0) return dir;
    if (errno != EEXIST) throw HarnessError("cannot create " + dir.string() + ": " + std::strerror(errno));
  }
  throw HarnessError("cannot find a free directory name under " + parent.string());
}

fs::path create_run_dir(const fs::path& store, const std::string& name) {
  fs::path dir = create_stamped_dir(store / name);
  std::error_code ec;
  fs::create_directories(dir / "nodes", ec);
  if (ec) throw HarnessError("cannot create " + (dir / "nodes").string() + ": " + ec.message());
  return dir;
}

void update_latest(const fs::path& store, const fs::path& run_dir) {
  fs::path target = fs::relative(run_dir, store);
  fs::path tmp = store / (".latest." + std::to_string(::getpid()));
  std::error_code ec;
  fs::remove(tmp, ec);
  fs::create_directory_symlink(target, tmp, ec);
  if (!ec) fs::rename(tmp, store / "latest", ec);
  if (ec) throw HarnessError("cannot update " + (store / "latest").string() + ": " + ec.message());
}

void write_repro(const fs::path& run_dir, const fs::path& exe, const std::vector<std::string>& args,
                 const fs::path& store) {
  std::string draw = shell_quote(exe.string()) + " run";
  for (const auto& a : args) draw += " " + shell_quote(a);
  std::string text =
      "#!/bin/sh\n"
      "# Reruns this test: the same options and seed, and the faults this run recorded applied\n"
      "# again at the same offsets to the same nodes (--replay). Extra arguments are appended\n"
      "# (--store, --name). To run the test from scratch instead (faults drawn afresh from the\n"
      "# same seed, or its --plan followed again):\n"
      "#   " + draw + "\n"
      "exec " + shell_quote(exe.string()) + " run --replay \"$(cd \"$(dirname \"$0\")\" && pwd)\" --store " +
      shell_quote(fs::absolute(store).string()) + " \"$@\"\n";
  fs::path path = run_dir / "repro.sh";
  write_file_atomically(path, text);
  ::chmod(path.c_str(), 0755);
}

}  // namespace fencecheck
