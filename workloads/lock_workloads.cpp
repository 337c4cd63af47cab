// `lock`: acquire a random lock, hold it for a random time, release.
// `lock-append`: acquire lock i; read resource key i; hold; write the list read plus one
// element unique in the run, with the grant's token; release. This is the article's
// client: if it is paused between acquire and write, its write carries a stale token.
// `cas`: no lock at all: read resource key i, then compare-and-set it from the value read
// to a value unique in the run — the version check the resource makes itself, the
// alternative to a lock the article's discussion names. Safe under every fault.
#include <string_view>

#include "platform/named_registry.h"
#include "workloads/workload.h"

namespace fencecheck {
namespace {

using std::chrono::milliseconds;

milliseconds random_upto(ClientSession& s, milliseconds max) {
  if (max.count() <= 0) return milliseconds(0);
  return milliseconds(static_cast<std::int64_t>(s.rng()() % static_cast<std::uint64_t>(max.count() + 1)));
}

int random_key(ClientSession& s, int keys) {
  return static_cast<int>(s.rng()() % static_cast<std::uint64_t>(keys));
}

// Backs off after a refused acquire so that clients do not spin on a held lock.
void back_off(ClientSession& s) { s.sleep(milliseconds(5) + random_upto(s, milliseconds(20))); }

class LockWorkload : public Workload {
 public:
  explicit LockWorkload(const WorkloadOptions& o) : o_(o) {}
  void run_client(ClientSession& s) const override {
    while (s.running()) {
      std::string lock = lock_name(random_key(s, o_.keys));
      OpResult got = s.invoke(OpFn::kAcquire, lock, nullptr);
      if (got.type != OpType::kOk) {
        if (got.type == OpType::kFail) back_off(s);
        continue;
      }
      s.sleep(random_upto(s, o_.hold));
      s.invoke(OpFn::kRelease, lock, {{"token", got.value.value("token", nlohmann::json())}});
    }
  }
  std::vector<std::string> final_read_keys() const override { return {}; }

 private:
  WorkloadOptions o_;
};

class LockAppendWorkload : public Workload {
 public:
  explicit LockAppendWorkload(const WorkloadOptions& o) : o_(o) {}
  void run_client(ClientSession& s) const override {
    while (s.running()) {
      int i = random_key(s, o_.keys);
      OpResult got = s.invoke(OpFn::kAcquire, lock_name(i), nullptr);
      if (got.type != OpType::kOk) {
        if (got.type == OpType::kFail) back_off(s);
        continue;
      }
      nlohmann::json token = got.value.value("token", nlohmann::json());
      if (!append_once(s, i, token)) continue;  // an info: the grant is abandoned
      s.invoke(OpFn::kRelease, lock_name(i), {{"token", token}});
    }
  }
  std::vector<std::string> final_read_keys() const override {
    std::vector<std::string> keys;
    for (int i = 0; i < o_.keys; ++i) keys.push_back(resource_key(i));
    return keys;
  }

 private:
  // Read, hold, write. False when an op ended in `info` (the process was retired).
  bool append_once(ClientSession& s, int i, const nlohmann::json& token) const {
    std::optional<std::int64_t> fence;
    if (token.is_number_integer()) fence = token.get<std::int64_t>();
    OpResult read = s.invoke(OpFn::kRead, resource_key(i), nullptr, fence);
    if (read.type == OpType::kInfo) return false;
    if (read.type != OpType::kOk) return true;
    nlohmann::json list = read.value.is_array() ? read.value : nlohmann::json::array();
    s.sleep(random_upto(s, o_.hold));
    list.push_back(s.unique_element());
    OpResult wrote = s.invoke(OpFn::kWrite, resource_key(i), {{"token", token}, {"value", list}});
    return wrote.type != OpType::kInfo;
  }
  WorkloadOptions o_;
};

class CasWorkload : public Workload {
 public:
  explicit CasWorkload(const WorkloadOptions& o) : o_(o) {}
  void run_client(ClientSession& s) const override {
    while (s.running()) {
      std::string key = resource_key(random_key(s, o_.keys));
      OpResult read = s.invoke(OpFn::kRead, key, nullptr);
      if (read.type != OpType::kOk) {
        if (read.type == OpType::kFail) back_off(s);
        continue;
      }
      s.sleep(random_upto(s, o_.hold));
      nlohmann::json next = s.unique_element();
      OpResult set = s.invoke(OpFn::kCas, key, {{"expect", read.value}, {"value", next}});
      if (set.type == OpType::kFail) back_off(s);
    }
  }
  std::vector<std::string> final_read_keys() const override {
    std::vector<std::string> keys;
    for (int i = 0; i < o_.keys; ++i) keys.push_back(resource_key(i));
    return keys;
  }

 private:
  WorkloadOptions o_;
};

}  // namespace

std::string lock_name(int i) { return "l" + std::to_string(i); }
std::string resource_key(int i) { return "k" + std::to_string(i); }

const std::vector<WorkloadInfo>& workload_registry() {
  static const std::vector<WorkloadInfo> registry = {
      {"lock", "acquire a lock, hold it, release it", {OpFn::kAcquire, OpFn::kRelease},
       {"exclusion", "tokens", "linearizable"},
       [](const WorkloadOptions& o) { return std::make_unique<LockWorkload>(o); }},
      {"lock-append", "under a lock: read a list, append a unique element, write it with the token",
       {OpFn::kAcquire, OpFn::kRelease, OpFn::kRead, OpFn::kWrite},
       {"exclusion", "tokens", "resource", "linearizable"},
       [](const WorkloadOptions& o) { return std::make_unique<LockAppendWorkload>(o); }},
      {"cas", "no lock: read a register, then compare-and-set it from that value to a unique one",
       {OpFn::kRead, OpFn::kCas},
       {"resource", "linearizable"},
       [](const WorkloadOptions& o) { return std::make_unique<CasWorkload>(o); }},
  };
  return registry;
}

const WorkloadInfo* find_workload(std::string_view name) { return find_by_name(workload_registry(), name); }
std::string workload_names() { return names_of(workload_registry()); }

}  // namespace fencecheck
