#include "backends/daemon_server.h"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <fstream>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "platform/fnv.h"
#include "platform/os_util.h"

namespace fencecheck {

using std::chrono::milliseconds;
namespace fs = std::filesystem;

namespace {

// True when path is a directory of this user's that nobody else may write into.
bool private_dir(const fs::path& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == ::geteuid() &&
         (st.st_mode & (S_IWGRP | S_IWOTH)) == 0;
}

// How long an undo of a pause that did not take may take (a SIGCONT: over ssh one command).
constexpr milliseconds kSignalUndo{1000};

}  // namespace

std::optional<fs::path> DaemonServer::reuse_dir(const Runtime& runtime, const std::string& name) {
  if (runtime.kind() != "local" && runtime.kind() != "netns") return std::nullopt;
  fs::path root;
  if (const char* chosen = std::getenv("FENCECHECK_CACHE")) {
    if (std::string(chosen).empty() || std::string(chosen) == "off") return std::nullopt;
    root = fs::absolute(chosen);
  } else if (::geteuid() == 0) {
    root = "/var/cache/fencecheck";
  } else if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && xdg[0] == '/') {
    root = fs::path(xdg) / "fencecheck";
  } else if (const char* home = std::getenv("HOME"); home != nullptr && home[0] == '/') {
    root = fs::path(home) / ".cache" / "fencecheck";
  } else {
    return std::nullopt;
  }
  const fs::path dir = root / name;
  std::error_code ec;
  fs::create_directories(root.parent_path(), ec);
  ::mkdir(root.c_str(), 0700);  // EEXIST is fine; anything else shows in the check below
  ::mkdir(dir.c_str(), 0700);
  if (!private_dir(root) || !private_dir(dir)) return std::nullopt;
  return dir;
}

fs::path DaemonServer::partial_path(const fs::path& final_path) {
  static std::atomic<unsigned> made{0};
  return final_path.parent_path() / (".new-" + std::to_string(::getpid()) + "-" + std::to_string(made++) + "-" +
                                     final_path.filename().string());
}

std::string DaemonServer::fingerprint(const std::vector<std::string>& parts, const std::vector<fs::path>& files) {
  Fnv1a64 h;
  for (const auto& part : parts) h.add(part);
  for (const auto& file : files) {
    std::error_code ec;
    const fs::path real = fs::canonical(file, ec);
    struct stat st {};
    if (ec || ::stat(real.c_str(), &st) != 0) {
      h.add("missing " + file.string());
      continue;
    }
    h.add(real.string() + " " + std::to_string(st.st_size) + " " + std::to_string(st.st_mtim.tv_sec) + "." +
          std::to_string(st.st_mtim.tv_nsec));
  }
  return h.hex();
}

void DaemonServer::note_setup(const fs::path& log, const std::string& line) {
  std::ofstream out(log, std::ios::app);
  out << "fencecheck: " << line << "\n";
}

void DaemonServer::keep_for_later_runs(Runtime& runtime, const std::string& node, const fs::path& made,
                                       const fs::path& kept, const fs::path& log) {
  const fs::path fresh = partial_path(kept);
  std::error_code ec;
  fs::remove_all(fresh, ec);
  try {
    if (!fs::create_directory(fresh, ec) || ec) throw HarnessError("cannot create " + fresh.string());
    runtime.run_to_end({node, "cp", {"cp", "-a", "--", made.string(), (fresh / made.filename()).string()}, {}, log, {}, {}},
                       std::chrono::seconds(60));
    if (::rename(fresh.c_str(), kept.c_str()) != 0 && errno != EEXIST && errno != ENOTEMPTY) {
      throw HarnessError("cannot rename " + fresh.string() + " to " + kept.string() + ": " + os::strerror_string(errno));
    }
  } catch (const HarnessError& e) {
    note_setup(log, std::string("not kept for later runs: ") + e.what());
  } catch (...) {
    fs::remove_all(fresh, ec);
    throw;  // Interrupted
  }
  fs::remove_all(fresh, ec);
}

DaemonServer::DaemonServer(std::vector<std::string> nodes, milliseconds ready_timeout)
    : nodes_(std::move(nodes)), ready_timeout_(ready_timeout) {}

bool DaemonServer::port_answers(Runtime& runtime, const std::string& node, const std::string& address, int port,
                                const std::function<bool(const HostPort&)>& probe) {
  if (!runtime.tcp_connects(node, address, port, std::chrono::milliseconds(200))) return false;
  bool answered = false;
  const HostPort target = runtime.probe_target(node, address, port);
  runtime.run_in(node, [&] { answered = probe(target); });
  return answered;
}

Runtime& DaemonServer::runtime() const {
  if (runtime_ == nullptr) throw HarnessError("server used before setup()");
  return *runtime_;
}

void DaemonServer::setup(Runtime& runtime, const std::filesystem::path& nodes_dir) {
  runtime_ = &runtime;
  for (const auto& node : nodes_) {
    std::filesystem::path dir = std::filesystem::absolute(nodes_dir / node);
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) throw HarnessError("cannot create " + dir.string() + ": " + ec.message());
    configure(runtime, node, dir);
  }
  if (one_after_another_) {
    for (const auto& node : nodes_) start(node);
    return;
  }
  for (const auto& node : nodes_) launch(node);
  for (const auto& node : nodes_) require_ready(node);
}

Process* DaemonServer::current(const std::string& node) const {
  std::lock_guard lock(mu_);
  auto it = running_.find(node);
  return it == running_.end() ? nullptr : it->second;
}

void DaemonServer::start(const std::string& node) {
  if (current(node) != nullptr) return;
  launch(node);
  require_ready(node);
}

void DaemonServer::start_in_quorum(const std::string& node) {
  if (current(node) != nullptr) return;
  launch(node);
  std::size_t up = 0;
  for (const auto& n : nodes_) up += current(n) != nullptr ? 1 : 0;
  if (2 * up > nodes_.size()) require_ready(node);
}

// Reserved under the lock, spawned outside it (under ssh a spawn may upload for seconds),
// published under it: another node's pause or kill never waits behind this spawn.
void DaemonServer::launch(const std::string& node) {
  starting_.run(
      mu_, node, [&] { return running_.contains(node); }, [&] { return &runtime().spawn(daemon(node)); },
      [&](Process* p) { running_[node] = p; });
}

Readiness DaemonServer::await_ready(const std::string& node, const Deadline& deadline) {
  Process* p = current(node);
  if (p == nullptr) throw HarnessError("server on " + node + " awaited before it was launched");
  Runtime& rt = runtime();
  return rt.await_ready(*p, [&] { return ready(rt, node); }, deadline.within(ready_timeout_));
}

void DaemonServer::require_ready(const std::string& node) {
  Process* p = current(node);
  if (p == nullptr) throw HarnessError("server on " + node + " awaited before it was launched");
  Runtime& rt = runtime();
  rt.wait_ready(*p, [&] { return ready(rt, node); }, ready_timeout_);
}

// Forgets the node's process; returns it (nullptr when it was not running).
Process* DaemonServer::take(const std::string& node) {
  std::lock_guard lock(mu_);
  auto it = running_.find(node);
  if (it == running_.end()) return nullptr;
  Process* p = it->second;
  running_.erase(it);
  return p;
}

void DaemonServer::stop(const std::string& node, const Deadline& deadline) {
  if (Process* p = take(node)) p->stop(grace_within(deadline));
}

void DaemonServer::kill(const std::string& node, const Deadline& deadline) {
  if (Process* p = take(node)) p->crash(deadline);
}

void DaemonServer::pause(const std::string& node, const Deadline& deadline) {
  Process* p = current(node);
  if (p != nullptr && !p->pause(deadline)) {
    // Not reported as paused, so nothing else would ever resume it.
    p->resume(Deadline::after(kSignalUndo));
    throw HarnessError("server on " + node + " did not stop within " + deadline.budget_text() +
                       " of SIGSTOP (a thread in uninterruptible sleep, or a host that does not answer): the "
                       "pause cannot be reported as in force");
  }
}

void DaemonServer::resume(const std::string& node, const Deadline& deadline) {
  if (Process* p = current(node)) p->resume(deadline);
}

bool DaemonServer::running(const std::string& node) { return current(node) != nullptr; }

std::vector<std::string> DaemonServer::answering_nodes() {
  std::vector<std::string> out;
  for (const auto& node : nodes_) {
    Process* p = current(node);
    if (p != nullptr && !p->paused()) out.push_back(node);
  }
  return out;
}

std::vector<Process*> DaemonServer::processes(const std::string& node) {
  Process* p = current(node);
  return p ? std::vector<Process*>{p} : std::vector<Process*>{};
}

std::vector<std::filesystem::path> DaemonServer::log_files(const std::string& node) const {
  return {daemon(node).log};
}

void DaemonServer::teardown(const Deadline& deadline) noexcept {
  std::map<std::string, Process*> all;
  {
    std::lock_guard lock(mu_);
    all.swap(running_);
  }
  // All at once: each stop may wait on its own host.
  std::vector<std::thread> stops;
  for (auto& [node, p] : all) stops.emplace_back([p = p, grace = grace_within(deadline)] { p->stop(grace); });
  for (auto& t : stops) t.join();
}

}  // namespace fencecheck
