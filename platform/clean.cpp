// clean_runs and the removal helpers it shares with RunState and NetnsRuntime.
#include <signal.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fstream>
#include <regex>
#include <set>

#include "platform/cleanup.h"
#include "platform/docker_api.h"
#include "platform/os_util.h"
#include "platform/run_state.h"
#include "platform/runtime.h"

namespace fencecheck {

namespace fs = std::filesystem;

namespace cleanup {

namespace {

const fs::path kNetnsDir = "/run/netns";

std::optional<std::uint64_t> optional_start(const nlohmann::json& v) {
  return v.is_number_unsigned() || v.is_number_integer() ? std::optional(v.get<std::uint64_t>())
                                                         : std::nullopt;
}

}  // namespace

bool kill_group_if_ours(int pgid, std::optional<std::uint64_t> leader_start_time) {
  if (pgid <= 1) return false;
  bool ours = false;
  if (os::process_start_time(pgid)) {
    // A different leader start time means the pid was reused, hence our group is empty.
    ours = os::process_is(pgid, leader_start_time) && leader_start_time.has_value();
  } else {
    ours = !os::group_members(pgid).empty();
  }
  if (!ours || ::kill(-pgid, SIGKILL) != 0) return false;
  os::wait_until_group_gone(pgid, 2000);
  return true;
}

bool netns_exists(const std::string& name) {
  std::error_code ec;
  return fs::exists(kNetnsDir / name, ec);
}

bool delete_netns(const std::string& name) {
  if (!netns_exists(name)) return false;
  auto result = os::run_command({"ip", "netns", "del", name});
  if (result.status == 0) return true;
  // The run's own teardown (clean --force on a live run) may have deleted it meanwhile.
  if (!netns_exists(name)) return false;
  while (!result.output.empty() && result.output.back() == '\n') result.output.pop_back();
  throw HarnessError("deleting network namespace " + name + " failed: `ip netns del " + name +
                     "` exited with " + std::to_string(result.status) + ": " + result.output);
}

bool remove_path(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(path, ec))) return false;
  // A live run may be removing the same tree: what vanished under us is not an error,
  // only what is still there after a second pass.
  fs::remove_all(path, ec);
  if (!ec || !fs::exists(fs::symlink_status(path))) return true;
  fs::remove_all(path);
  return true;
}

void remove_recorded(const nlohmann::json& doc, CleanReport& report) {
  auto record_error = [&](const std::string& what, const std::exception& e) {
    report.errors.push_back(what + ": " + e.what());
  };
  for (const auto& g : doc.value("process_groups", nlohmann::json::array())) {
    int pgid = g.value("pgid", 0);
    if (kill_group_if_ours(pgid, optional_start(g.value("start_time", nlohmann::json())))) {
      report.removed.push_back("killed process group " + std::to_string(pgid));
    }
  }
  for (const auto& ns : doc.value("netns", nlohmann::json::array())) {
    try {
      if (delete_netns(ns.get<std::string>())) {
        report.removed.push_back("deleted network namespace " + ns.get<std::string>());
      }
    } catch (const std::exception& e) {
      record_error("namespace " + ns.dump(), e);
    }
  }
  // A dead FUSE daemon's mount answers "Transport endpoint is not connected" until detached.
  for (const auto& m : doc.value("mounts", nlohmann::json::array())) {
    if (!m.is_string()) continue;
    if (::umount2(m.get<std::string>().c_str(), MNT_DETACH) == 0) {
      report.removed.push_back("unmounted " + m.get<std::string>());
    } else if (errno != EINVAL && errno != ENOENT) {  // not (or no longer) a mount point: nothing to do
      report.errors.push_back("mount " + m.get<std::string>() + ": " + std::strerror(errno));
    }
  }
  const std::string run_id = doc.value("run_id", "");
  for (const auto& socket : doc.value("docker", nlohmann::json::array())) {
    try {
      if (!RunState::valid_run_id(run_id)) throw HarnessError("the state file names no valid run_id");
      remove_docker_run(socket.get<std::string>(), run_id, report);
    } catch (const std::exception& e) {
      record_error("docker at " + socket.dump(), e);
    }
  }
  for (const auto& p : doc.value("paths", nlohmann::json::array())) {
    try {
      fs::path path = p.get<std::string>();
      if (remove_path(path)) report.removed.push_back("removed " + path.string());
    } catch (const std::exception& e) {
      record_error("path " + p.dump(), e);
    }
  }
}

}  // namespace cleanup

namespace {

// Namespaces named like ours whose run has no state file: the controller died between
// creating them and recording them, or its state file was lost.
void sweep_unrecorded_namespaces(const std::string& run_id, const std::set<std::string>& known,
                                 CleanReport& report) {
  static const std::regex ours("^fc-([0-9a-f]{6})-(hub|[a-z][a-z0-9]{0,15})$");
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/run/netns", ec)) {
    std::string name = entry.path().filename().string();
    std::smatch m;
    if (!std::regex_match(name, m, ours)) continue;
    std::string id = m[1];
    if ((!run_id.empty() && id != run_id) || known.count(id)) continue;
    if (fs::exists(RunState::state_dir() / (id + ".json"))) continue;  // created meanwhile
    try {
      if (cleanup::delete_netns(name)) {
        report.removed.push_back("deleted unrecorded network namespace " + name);
      }
    } catch (const std::exception& e) {
      report.errors.push_back(std::string("namespace ") + name + ": " + e.what());
    }
  }
}

// Containers and networks labelled fencecheck.run=<id> in the environment's dockerd
// (DOCKER_HOST or the default socket) whose run has no state file. Skipped quietly when no
// dockerd answers there.
void sweep_unrecorded_containers(const std::string& run_id, CleanReport& report) {
  auto socket = docker_socket_from_environment(nullptr);
  if (!socket || !fs::exists(*socket) || !DockerApi(*socket).ping(std::chrono::seconds(1))) return;
  auto has_state = [](const std::string& id) {
    return !RunState::valid_run_id(id) || fs::exists(RunState::state_dir() / (id + ".json"));
  };
  try {
    if (run_id.empty()) {
      cleanup::remove_docker_run(*socket, "", report, has_state);
    } else if (!has_state(run_id)) {
      cleanup::remove_docker_run(*socket, run_id, report);
    }
  } catch (const std::exception& e) {
    report.errors.push_back("docker at " + *socket + ": " + e.what());
  }
}

// "<id>.json.tmp.<pid>": a state write interrupted by its writer's death.
void remove_abandoned_temp_file(const fs::path& file, const std::string& run_id,
                                CleanReport& report) {
  static const std::regex temp("^([0-9a-f]{6})\\.json\\.tmp\\.([0-9]+)$");
  std::smatch m;
  std::string name = file.filename().string();
  if (!std::regex_match(name, m, temp) || (!run_id.empty() && m[1] != run_id)) return;
  if (os::process_is(std::stoi(m[2]), std::nullopt)) return;  // still being written
  std::error_code ec;
  if (fs::remove(file, ec)) report.removed.push_back("removed " + file.string());
}

void clean_one(const fs::path& file, bool force, CleanReport& report) {
  nlohmann::json doc;
  try {
    std::ifstream in(file);
    doc = nlohmann::json::parse(in);
  } catch (const std::exception& e) {
    report.errors.push_back("unreadable state file " + file.string() + ": " + e.what() +
                            " (inspect it, then delete it by hand)");
    return;
  }
  const auto controller = doc.value("controller", nlohmann::json::object());
  int pid = controller.value("pid", 0);
  auto start = controller.value("start_time", nlohmann::json());
  bool alive = os::process_is(pid, start.is_number() ? std::optional(start.get<std::uint64_t>())
                                                     : std::nullopt);
  alive = alive && os::process_state(pid) != 'Z';  // a killed controller nobody reaped yet is dead
  std::string run = doc.value("run_id", file.stem().string());
  if (alive && !force) {
    report.skipped.push_back("run " + run + ": controller pid " + std::to_string(pid) +
                             " is alive (use --force to clean it anyway)");
    return;
  }
  std::size_t errors_before = report.errors.size();
  cleanup::remove_recorded(doc, report);
  if (report.errors.size() == errors_before) {
    // A live run (--force) removes its own state file as it ends: gone is as good.
    std::error_code ec;
    if (fs::remove(file, ec)) {
      report.removed.push_back("removed state file " + file.string());
    } else if (ec) {
      report.errors.push_back("state file " + file.string() + ": " + ec.message());
    }
  }
}

}  // namespace

CleanReport clean_runs(const std::string& run_id, bool force) {
  CleanReport report;
  if (!run_id.empty() && !RunState::valid_run_id(run_id)) {
    report.errors.push_back("bad run id '" + run_id + "': expected 6 lowercase hex digits");
    return report;
  }
  std::set<std::string> known;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(RunState::state_dir(), ec)) {
    const fs::path& file = entry.path();
    if (file.extension() != ".json") {
      remove_abandoned_temp_file(file, run_id, report);
      continue;
    }
    std::string id = file.stem().string();
    if (!run_id.empty() && id != run_id) continue;
    known.insert(id);
    clean_one(file, force, report);
  }
  // Only root makes namespaces, and records them in root's state_dir(): another user
  // would take every live root run for an unrecorded one.
  if (::geteuid() == 0) {
    sweep_unrecorded_namespaces(run_id, known, report);
    sweep_unrecorded_containers(run_id, report);
  }
  return report;
}

}  // namespace fencecheck
