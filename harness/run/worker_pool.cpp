#include "harness/run/worker_pool.h"

#include <atomic>
#include <exception>
#include <thread>

#include "adapters/registry.h"
#include "backends/registry.h"
#include "harness/control/op_channel.h"

namespace fencecheck {

namespace {
bool native_client_renews(const std::string& backend) {
  const BackendInfo* info = find_backend(backend);
  return info != nullptr && info->offers.has(Capability::kClientRenews);
}
}  // namespace


using std::chrono::milliseconds;

WorkerPool::WorkerPool(Runtime& runtime, WorkerSetup setup, std::vector<std::string> nodes)
    : runtime_(runtime), setup_(std::move(setup)), nodes_(std::move(nodes)) {}

// The handles' notice threads read sink_ (under mu_) until each handle is destroyed, so the
// handles go first, outside mu_ (a handle's destructor joins its thread).
WorkerPool::~WorkerPool() {
  std::map<std::string, Worker> workers, launched;
  {
    std::lock_guard lock(mu_);
    workers.swap(workers_);
    launched.swap(launched_);
  }
}

void WorkerPool::start_all() {
  // Every worker is spawned first, then all are awaited at once: their execs, sockets and
  // first connections to the servers overlap, so setup does not grow with the clients.
  for (const auto& node : nodes_) launch(node, Deadline::only_cancel(setup_.interrupted));
  std::mutex failure_mu;
  std::exception_ptr failure;
  std::atomic<bool> failed{false};
  std::vector<std::thread> waits;
  waits.reserve(nodes_.size());
  for (const auto& node : nodes_) {
    waits.emplace_back([&, node] {
      try {
        // One failure ends the other waits (kGaveUp): the run is over anyway.
        Readiness r = await_ready(node, Deadline::only_cancel([&] { return failed.load(); }));
        if (r == Readiness::kGaveUp && failed) return;
        if (r != Readiness::kReady) throw Interrupted("worker on " + node + ": the wait for it was interrupted");
      } catch (...) {
        std::lock_guard lock(failure_mu);
        if (!failure) failure = std::current_exception();
        failed = true;
      }
    });
  }
  for (auto& t : waits) t.join();
  if (failure) std::rethrow_exception(failure);
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
  launch(node, Deadline::only_cancel(setup_.interrupted));
  if (await_ready(node, Deadline::only_cancel({})) != Readiness::kReady) {
    throw Interrupted("worker on " + node + ": the wait for it was interrupted");
  }
}

// Reserved under the lock, spawned outside it, published under it (the pool's lock is what
// every op's handle() takes). The spawn is bounded by the runtime (it returns once the child
// has exec'd; under ssh, its uploads by the runtime's set-up step).
void WorkerPool::launch(const std::string& node, const Deadline&) {
  const std::string socket = (setup_.control_dir / (node + ".sock")).string();
  starting_.run(
      mu_, node, [&] { return workers_.contains(node) || launched_.contains(node); },
      [&] {
        return &runtime_.spawn({node, "worker", {setup_.exe.string(), "worker", "--socket", socket, "--node", node},
                                {}, setup_.nodes_dir / node / "worker.log", {}, {}, {socket, op_socket_path(socket)}});
      },
      [&](Process* p) { launched_[node] = Worker{p, std::make_shared<WorkerHandle>(socket), 0}; });
}

std::chrono::milliseconds WorkerPool::take_pause_inside() {
  if (pause_inside_ms_.load() == 0) return std::chrono::milliseconds(0);  // the common case
  return std::chrono::milliseconds(pause_inside_ms_.exchange(0));
}

Readiness WorkerPool::await_ready(const std::string& node, const Deadline& deadline) {
  Worker w;
  {
    std::lock_guard lock(mu_);
    auto it = launched_.find(node);
    if (it == launched_.end()) {
      if (workers_.contains(node)) return Readiness::kReady;
      throw HarnessError("worker on " + node + " awaited before it was launched");
    }
    w = it->second;
  }
  // The connection is waited for in short steps so that give_up is heard; the Runtime's
  // await_ready adds its interrupt check and throws if the worker exits meanwhile.
  const CancelCheck give_up = deadline.cancel();
  Readiness r = runtime_.await_ready(
      *w.process, [&] { return w.handle->connects_within(milliseconds(50)); }, deadline.within(milliseconds(10000)));
  try {
    if (r == Readiness::kTimedOut) throw HarnessError("it did not accept a connection within 10000 ms");
    if (r == Readiness::kReady) {
      WorkerHandle::ClientChoice client = setup_.client;
      client.adapter_log = (setup_.nodes_dir / node / "adapter.log").string();
      w.handle->setup(setup_.backend, setup_.client_config, setup_.resource_address, node, client,
                      [&] { return (setup_.interrupted && setup_.interrupted()) || (give_up && give_up()); });
      // Only a lock library, or a native client that renews its grants (etcd's keep-alive),
      // says anything on its own: the other workers get no stream (and no thread here).
      if (client.name != kNativeClient || native_client_renews(setup_.backend)) {
        w.handle->watch_notices([this, node](const WorkerHandle::Notice& n) {
          std::shared_ptr<NoticeSink> sink;
          {
            std::lock_guard lock(mu_);
            sink = sink_;
          }
          if (sink) (*sink)(node, n);
        });
      }
    }
  } catch (const Interrupted&) {
    if (setup_.interrupted && setup_.interrupted()) throw;
    return Readiness::kGaveUp;  // give_up said so; the worker stays launched
  } catch (const std::exception& e) {
    throw HarnessError("worker on " + node + " did not start: " + e.what() + "\n" + w.process->log_tail());
  }
  if (r != Readiness::kReady) return r;
  std::lock_guard lock(mu_);
  launched_.erase(node);
  workers_[node] = Worker{w.process, std::move(w.handle), ++generations_[node]};
  return Readiness::kReady;
}

bool WorkerPool::pause(const std::string& node, const Deadline& deadline) {
  std::lock_guard acting(acting_.lock(node));
  Process* p = process(node);
  if (p == nullptr) return false;
  if (!p->pause(deadline)) {
    // Not reported as paused, so nothing else would ever resume it.
    p->resume(Deadline::after(milliseconds(1000)));
    throw HarnessError("worker on " + node + " did not stop within " + deadline.budget_text() + " of SIGSTOP");
  }
  return true;
}

// Without the node's lock: a SIGCONT never waits behind a slow kill or stop.
void WorkerPool::resume(const std::string& node, const Deadline& deadline) {
  if (Process* p = process(node)) p->resume(deadline);
}

WorkerPool::Worker WorkerPool::take(const std::string& node) {
  std::lock_guard lock(mu_);  // sessions see the node down from now on
  Worker w;
  if (auto it = workers_.find(node); it != workers_.end()) {
    w = it->second;
    workers_.erase(it);
  }
  return w;
}

bool WorkerPool::kill(const std::string& node, const Deadline& deadline) {
  std::lock_guard acting(acting_.lock(node));
  Worker w = take(node);
  if (w.process == nullptr) return false;
  w.process->crash(deadline);
  return true;
}

bool WorkerPool::stop(const std::string& node, const Deadline& deadline) {
  std::lock_guard acting(acting_.lock(node));
  Worker w = take(node);
  if (w.process == nullptr) return false;
  w.process->expect_exit();
  w.handle->shutdown(std::min(milliseconds(1000), deadline.left() / 2));
  w.process->stop(grace_within(deadline));
  return true;
}

void WorkerPool::set_notice_sink(NoticeSink sink) {
  std::lock_guard lock(mu_);
  sink_ = std::make_shared<NoticeSink>(std::move(sink));
}

void WorkerPool::shutdown_all(milliseconds timeout) {
  std::map<std::string, Worker> all;
  {
    std::lock_guard lock(mu_);
    all = workers_;
  }
  // All at once: a worker that does not answer costs the timeout once, not once per worker.
  std::vector<std::thread> asks;
  for (auto& [node, w] : all) {
    w.process->expect_exit();
    asks.emplace_back([handle = w.handle, timeout] { handle->shutdown(timeout); });
  }
  for (auto& t : asks) t.join();
}

}  // namespace fencecheck
