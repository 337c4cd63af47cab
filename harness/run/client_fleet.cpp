#include "harness/run/client_fleet.h"

#include <map>

#include "ops/ops.h"

namespace fencecheck {

struct ClientFleet::Directory {
  std::mutex mu;
  std::map<std::string, WorkerSession*> by_node;
};

ClientFleet::ClientFleet(SessionShared& shared, const std::vector<std::string>& clients, std::uint64_t seed)
    : shared_(shared), directory_(std::make_shared<Directory>()) {
  for (std::size_t i = 0; i < clients.size(); ++i) {
    sessions_.push_back(std::make_unique<WorkerSession>(shared, clients[i], static_cast<std::int64_t>(i), seed + 1 + i));
    directory_->by_node[clients[i]] = sessions_.back().get();
  }
  shared.workers.set_notice_sink([directory = directory_](const std::string& node, const WorkerHandle::Notice& n) {
    std::lock_guard lock(directory->mu);
    if (auto it = directory->by_node.find(node); it != directory->by_node.end()) it->second->notice(n);
  });
}

ClientFleet::~ClientFleet() {
  {
    std::lock_guard lock(directory_->mu);
    directory_->by_node.clear();
  }
  shared_.running = false;
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
}

void ClientFleet::start(Workload& workload) {
  for (auto& s : sessions_) {
    threads_.emplace_back([this, &workload, session = s.get()] {
      try {
        workload.run_client(*session);
      } catch (...) {  // ends the test for all; rethrown by join()
        std::lock_guard lock(failure_mu_);
        if (!failure_) failure_ = std::current_exception();
        shared_.running = false;
      }
    });
  }
}

bool ClientFleet::any_running() const {
  for (const auto& s : sessions_) {
    if (s->running()) return true;
  }
  return false;
}

void ClientFleet::join() {
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
  std::lock_guard lock(failure_mu_);
  if (failure_) std::rethrow_exception(failure_);
}

void ClientFleet::final_reads(const std::vector<std::string>& keys, const std::function<bool()>& give_up) {
  for (const auto& key : keys) {
    for (auto& s : sessions_) {
      if (give_up()) return;
      Process* worker = shared_.workers.process(s->node());
      if (s->stopped() || worker == nullptr || !worker->alive()) continue;
      if (s->invoke(OpFn::kRead, key, nullptr).type == OpType::kOk) break;
    }
  }
}

}  // namespace fencecheck
