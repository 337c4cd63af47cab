#include "harness/run/worker_pool.h"

namespace fencecheck {

using std::chrono::milliseconds;

WorkerPool::WorkerPool(Runtime& runtime, WorkerSetup setup, std::vector<std::string> nodes)
    : runtime_(runtime), setup_(std::move(setup)), nodes_(std::move(nodes)) {}

WorkerPool::~WorkerPool() = default;

void WorkerPool::start_all() {
  for (const auto& node : nodes_) start(node);
}

WorkerPool::Worker WorkerPool::current(const std::string& node) const {
  std::lock_guard lock(mu_);
  auto it = workers_.find(node);
  return it == workers_.end() ? Worker{} : it->second;
}

std::shared_ptr<WorkerHandle> WorkerPool::handle(const std::string& node, std::uint64_t* generation) const {
  Worker w = current(node);
  if (generation != nullptr) *generation = w.generation;
  return w.handle;
}

Process* WorkerPool::process(const std::string& node) const { return current(node).process; }

void WorkerPool::start(const std::string& node) {
  if (current(node).process != nullptr) return;
  std::string socket = (setup_.control_dir / (node + ".sock")).string();
  Process& p = runtime_.spawn({node, "worker", {setup_.exe.string(), "worker", "--socket", socket, "--node", node},
                               {}, setup_.nodes_dir / node / "worker.log", {}, {}});
  auto handle = std::make_shared<WorkerHandle>(socket);
  try {
    handle->wait_connected(milliseconds(10000));
    handle->setup(setup_.backend, setup_.client_config, setup_.resource_address, node);
  } catch (const std::exception& e) {
    throw HarnessError("worker on " + node + " did not start: " + e.what() + "\n" + p.log_tail());
  }
  std::lock_guard lock(mu_);
  workers_[node] = Worker{&p, std::move(handle), ++generations_[node]};
}

void WorkerPool::pause(const std::string& node) {
  if (Process* p = process(node)) p->pause();
}

void WorkerPool::resume(const std::string& node) {
  if (Process* p = process(node)) p->resume();
}

void WorkerPool::kill(const std::string& node) {
  Worker w = current(node);
  if (w.process == nullptr) return;
  {
    std::lock_guard lock(mu_);
    workers_.erase(node);  // sessions see the node down from now on
  }
  w.process->crash();
}

void WorkerPool::stop(const std::string& node) {
  Worker w = current(node);
  if (w.process == nullptr) return;
  {
    std::lock_guard lock(mu_);
    workers_.erase(node);
  }
  w.process->expect_exit();
  w.handle->shutdown(milliseconds(1000));
  w.process->stop(milliseconds(2000));
}

void WorkerPool::shutdown_all(milliseconds timeout) {
  std::map<std::string, Worker> all;
  {
    std::lock_guard lock(mu_);
    all = workers_;
  }
  for (auto& [node, w] : all) {
    w.process->expect_exit();
    w.handle->shutdown(timeout);
  }
}

}  // namespace fencecheck
