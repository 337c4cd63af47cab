#include "platform/run_state.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <random>
#include <regex>

#include "platform/atomic_file.h"
#include "platform/cleanup.h"
#include "platform/os_util.h"
#include "platform/runtime.h"

namespace fencecheck {

namespace fs = std::filesystem;

namespace {

std::optional<std::uint64_t> start_time_or_null(int pid) { return os::process_start_time(pid); }

nlohmann::json start_time_json(std::optional<std::uint64_t> t) {
  return t ? nlohmann::json(*t) : nlohmann::json(nullptr);
}

void erase_value(nlohmann::json& array, const nlohmann::json& value) {
  auto it = std::find(array.begin(), array.end(), value);
  if (it != array.end()) array.erase(it);
}

}  // namespace

bool RunState::valid_run_id(const std::string& id) {
  static const std::regex pattern("^[0-9a-f]{6}$");
  return std::regex_match(id, pattern);
}

fs::path RunState::state_dir() {
  if (::geteuid() == 0) return "/run/fencecheck";
  if (const char* xdg = std::getenv("XDG_RUNTIME_DIR"); xdg && *xdg) {
    return fs::path(xdg) / "fencecheck";
  }
  return "/tmp/fencecheck-" + std::to_string(::getuid());
}

std::string RunState::new_run_id() {
  std::random_device random;
  for (int attempt = 0; attempt < 1000; ++attempt) {
    char id[7];
    std::snprintf(id, sizeof id, "%06x", random() & 0xffffffu);
    if (!fs::exists(state_dir() / (std::string(id) + ".json")) &&
        !cleanup::netns_exists("fc-" + std::string(id) + "-hub")) {
      return id;
    }
  }
  throw HarnessError("could not find a free run id in " + state_dir().string() +
                     " (run `fencecheck clean`)");
}

RunState::RunState(std::string run_id) : run_id_(std::move(run_id)) {
  if (!valid_run_id(run_id_)) {
    throw HarnessError("bad run id '" + run_id_ + "': expected 6 lowercase hex digits");
  }
  std::error_code ec;
  fs::create_directories(state_dir(), ec);
  if (ec) {
    throw HarnessError("cannot create state directory " + state_dir().string() + ": " +
                       ec.message());
  }
  file_ = state_dir() / (run_id_ + ".json");
  int self = static_cast<int>(::getpid());
  doc_ = {{"version", 1},
          {"run_id", run_id_},
          {"controller", {{"pid", self}, {"start_time", start_time_json(start_time_or_null(self))}}},
          {"netns", nlohmann::json::array()},
          {"process_groups", nlohmann::json::array()},
          {"paths", nlohmann::json::array()}};
  // link() fails if the file exists, so two runs can never share one state file.
  // A state file that may not have reached the disk is not a record clean could rely on.
  fs::path tmp = write_temp_beside(file_, doc_.dump(2) + "\n", 0600);
  int rc = ::link(tmp.c_str(), file_.c_str());
  int err = errno;
  ::unlink(tmp.c_str());
  if (rc != 0) {
    throw HarnessError("cannot create run state " + file_.string() + ": " +
                       os::strerror_string(err) +
                       (err == EEXIST ? " (another run uses this id)" : ""));
  }
}

RunState::~RunState() {
  try {
    CleanReport report;
    {
      std::lock_guard lock(mu_);
      cleanup::remove_recorded(doc_, report);
    }
    if (report.errors.empty()) ::unlink(file_.c_str());
  } catch (...) {
    // Leave the file: `fencecheck clean` can finish the job.
  }
}

void RunState::save_locked(FileSync sync) { write_file_atomically(file_, doc_.dump(2) + "\n", 0600, sync); }

// A network namespace is a kernel object: like a process, it does not outlive a power
// loss, and `fencecheck clean` sweeps ours by name even without a record. So its record
// need only outlive the controller: no fsync (one per node, 20-70 ms each under load).
void RunState::add_netns(const std::string& name) {
  std::lock_guard lock(mu_);
  doc_["netns"].push_back(name);
  save_locked(FileSync::kPageCache);
}

void RunState::remove_netns(const std::string& name) {
  std::lock_guard lock(mu_);
  erase_value(doc_["netns"], name);
  save_locked(FileSync::kPageCache);
}

void RunState::add_process_group(int pgid) {
  auto start = start_time_or_null(pgid);
  std::lock_guard lock(mu_);
  doc_["process_groups"].push_back({{"pgid", pgid}, {"start_time", start_time_json(start)}});
  // No process outlives a power loss, so a process group's record need only outlive the
  // controller: no fsync (which cost 20-70 ms a worker, a second or more at 50 clients).
  save_locked(FileSync::kPageCache);
}

void RunState::remove_process_group(int pgid) {
  std::lock_guard lock(mu_);
  auto& groups = doc_["process_groups"];
  groups.erase(std::remove_if(groups.begin(), groups.end(),
                              [&](const nlohmann::json& g) { return g.value("pgid", 0) == pgid; }),
               groups.end());
  save_locked(FileSync::kPageCache);
}

void RunState::add_path(const fs::path& p) {
  std::lock_guard lock(mu_);
  doc_["paths"].push_back(fs::absolute(p).string());
  save_locked();
}

void RunState::remove_path(const fs::path& p) {
  std::lock_guard lock(mu_);
  erase_value(doc_["paths"], fs::absolute(p).string());
  save_locked();
}

void RunState::add_mount(const fs::path& p) {
  std::lock_guard lock(mu_);
  doc_["mounts"].push_back(fs::absolute(p).string());
  save_locked();
}

void RunState::remove_mount(const fs::path& p) {
  std::lock_guard lock(mu_);
  if (doc_.contains("mounts")) erase_value(doc_["mounts"], fs::absolute(p).string());
  save_locked();
}

void RunState::add_docker_daemon(const std::string& socket) {
  std::lock_guard lock(mu_);
  doc_["docker"].push_back(socket);
  save_locked();
}

void RunState::remove_docker_daemon(const std::string& socket) {
  std::lock_guard lock(mu_);
  if (doc_.contains("docker")) erase_value(doc_["docker"], socket);
  save_locked();
}

nlohmann::json RunState::snapshot() const {
  std::lock_guard lock(mu_);
  return doc_;
}

}  // namespace fencecheck
