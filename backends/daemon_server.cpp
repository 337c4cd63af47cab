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
  for (const auto& node : nodes_) await_ready(node);
}

Process* DaemonServer::current(const std::string& node) {
  auto it = running_.find(node);
  return it == running_.end() ? nullptr : it->second;
}

void DaemonServer::start(const std::string& node) {
  if (current(node) != nullptr) return;
  launch(node);
  await_ready(node);
}

void DaemonServer::launch(const std::string& node) {
  if (current(node) == nullptr) running_[node] = &runtime().spawn(daemon(node));
}

void DaemonServer::await_ready(const std::string& node) {
  Process* p = current(node);
  if (p == nullptr) throw HarnessError("server on " + node + " awaited before it was launched");
  Runtime& rt = runtime();
  rt.wait_ready(*p, [&] { return ready(rt, node); }, ready_timeout_);
}

void DaemonServer::stop(const std::string& node) {
  if (Process* p = current(node)) p->stop(milliseconds(2000));
  running_.erase(node);
}

void DaemonServer::kill(const std::string& node) {
  Process* p = current(node);
  if (p == nullptr) return;
  p->crash();
  running_.erase(node);
}

void DaemonServer::pause(const std::string& node) {
  if (Process* p = current(node)) p->pause();
}

void DaemonServer::resume(const std::string& node) {
  if (Process* p = current(node)) p->resume();
}

bool DaemonServer::running(const std::string& node) { return current(node) != nullptr; }

std::vector<Process*> DaemonServer::processes(const std::string& node) {
  Process* p = current(node);
  return p ? std::vector<Process*>{p} : std::vector<Process*>{};
}

std::vector<std::filesystem::path> DaemonServer::log_files(const std::string& node) const {
  return {daemon(node).log};
}

void DaemonServer::teardown() noexcept {
  for (auto& [node, p] : running_) p->stop(milliseconds(2000));
  running_.clear();
}

}  // namespace fencecheck
