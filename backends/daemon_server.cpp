#include "backends/daemon_server.h"

namespace fencecheck {

using std::chrono::milliseconds;

DaemonServer::DaemonServer(std::vector<std::string> nodes, milliseconds ready_timeout)
    : nodes_(std::move(nodes)), ready_timeout_(ready_timeout) {}

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

void DaemonServer::launch(const std::string& node) {
  std::lock_guard lock(mu_);  // spawn returns once the child has exec'd: bounded
  if (!running_.contains(node)) running_[node] = &runtime().spawn(daemon(node));
}

Readiness DaemonServer::await_ready(const std::string& node, const CancelCheck& give_up) {
  Process* p = current(node);
  if (p == nullptr) throw HarnessError("server on " + node + " awaited before it was launched");
  Runtime& rt = runtime();
  return rt.await_ready(*p, [&] { return ready(rt, node); }, ready_timeout_, give_up);
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

void DaemonServer::stop(const std::string& node) {
  if (Process* p = take(node)) p->stop(milliseconds(2000));
}

void DaemonServer::kill(const std::string& node) {
  if (Process* p = take(node)) p->crash();
}

void DaemonServer::pause(const std::string& node) {
  Process* p = current(node);
  if (p != nullptr && !p->pause()) {
    p->resume();  // not reported as paused, so nothing else would ever resume it
    throw HarnessError("server on " + node + " did not stop within 2 s of SIGSTOP (a thread in "
                       "uninterruptible sleep?): the pause cannot be reported as in force");
  }
}

void DaemonServer::resume(const std::string& node) {
  if (Process* p = current(node)) p->resume();
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

void DaemonServer::teardown() noexcept {
  std::map<std::string, Process*> all;
  {
    std::lock_guard lock(mu_);
    all.swap(running_);
  }
  for (auto& [node, p] : all) p->stop(milliseconds(2000));
}

}  // namespace fencecheck
