// `lock`: acquire a random lock, hold it for a random time, release.
// `lock-append`: acquire lock i; read resource key i; hold; write the list read plus one
// element unique in the run, with the grant's token; release. This is the article's
// client: if it is paused between acquire and write, its write carries a stale token. Key
// i rotates through generations so that its list stays bounded (see LockAppendWorkload).
// `cas`: no lock at all: read resource key i, then compare-and-set it from the value read
// to a value unique in the run — the version check the resource makes itself, the
// alternative to a lock the article's discussion names. Safe under every fault.
#include <algorithm>
#include <atomic>
#include <stdexcept>
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

// How long this hold lasts: from the shortest to the longest, uniformly.
milliseconds hold_time(ClientSession& s, const WorkloadOptions& o) {
  return std::min(o.hold_min, o.hold) + random_upto(s, o.hold - std::min(o.hold_min, o.hold));
}

int random_key(ClientSession& s, int keys) {
  return static_cast<int>(s.rng()() % static_cast<std::uint64_t>(keys));
}

// Backs off after a refused op so that clients do not spin on a held lock: 5–25 ms, but
// never longer than a hold may last. With --hold-ms 0 (the harness measured at full
// speed) a lock is held for one op's round trip, so a refused acquire is retried at once:
// a 15 ms nap per refusal would otherwise be most of the run's time.
void back_off(ClientSession& s, milliseconds hold) {
  s.sleep(std::min(hold, milliseconds(5)) + random_upto(s, std::min(hold, milliseconds(20))));
}

class LockWorkload : public Workload {
 public:
  explicit LockWorkload(const WorkloadOptions& o) : o_(o) {}
  void run_client(ClientSession& s) const override {
    while (s.running()) {
      std::string lock = lock_name(random_key(s, o_.keys));
      OpResult got = s.invoke(OpFn::kAcquire, lock, nullptr);
      if (got.type != OpType::kOk) {
        if (got.type == OpType::kFail) back_off(s, o_.hold);
        continue;
      }
      s.sleep(hold_time(s, o_));
      s.invoke(OpFn::kRelease, lock, {{"token", got.value.value("token", nlohmann::json())}});
    }
  }
  std::vector<std::string> final_read_keys() const override { return {}; }

 private:
  WorkloadOptions o_;
};

// lock-append keeps each key's list bounded, so that a run's history and resource log grow
// linearly with its length (each write carries the whole list: unbounded, a 300 s default
// run wrote 130 MB of history with lines of 19 kB). Lock i protects the generations
// k<i>, k<i>.1, k<i>.2 … of its key (Jepsen's independent keys, made one after another): a
// client that reads a full generation (appends_per_key elements) reads the next one, and
// writes only to the first it finds not full, so a write holds at most appends_per_key
// elements. Each client remembers the generation it last found open, per lock; it only
// moves forward, so the choice depends on nothing but what the client read.
//
// Rotation never hides a lost update: a stale writer that read generation g while it held
// fewer than appends_per_key elements writes g back, and nobody moves past g until writes
// made after that read filled it — exactly the writes the stale one overwrites, which the
// final read of g (every generation used is read finally) shows missing.
//
// Fencing still holds on every generation, as it did on one key: tokens rise per lock,
// every generation of key i is only touched under lock i, with the holder's token on the
// read and on the write, and under the fence a list only grows (a read raises the key's
// fence to the reader's token, so no other grant's write lands between it and the write).
// Say a holder with token T read generation g while g was not full, then was paused. A
// later holder either reads g itself (it remembers g or an earlier, full generation and
// walks up to g), which raises g's fence above T, or has moved past g: it read g full,
// so writes accepted after T's read filled g, with tokens >= T and, one write per grant,
// above T. Either way, once a later holder has touched any generation of key i, g refuses
// the stale write — the guarantee one fenced key gives.
//
// The bound, kAppendsPerKey = 100: elements are the run's counter (at most 6 digits in an
// hour's run), so the longest history or resource line stays near 500 bytes however long
// the run, against 19 kB after 300 s unbounded. The default test makes ~14 appends a second
// (422 in 30 s), so a generation lives ~7 s, longer than the 1.5–3 s pauses of the
// Kleppmann scenarios: most stale writes land on the key the others still use (detection
// does not need it, see above). Five clients on one lock, a client misses ~4 appends
// between its holds, so ~1 hold in 20 reads one extra, full generation. A much smaller
// bound multiplies those extra reads and the keys (each one more final read, one more lane
// in the report); a larger one, the bytes of every list-carrying line.
class LockAppendWorkload : public Workload {
 public:
  explicit LockAppendWorkload(const WorkloadOptions& o)
      : o_(o), highest_generation_(static_cast<std::size_t>(std::max(o.keys, 0))) {
    if (o.appends_per_key < 1) {
      throw std::invalid_argument("lock-append: appends per key must be at least 1, not " +
                                  std::to_string(o.appends_per_key));
    }
  }
  void run_client(ClientSession& s) const override {
    std::vector<int> generation(highest_generation_.size(), 0);  // per lock: the last found open
    while (s.running()) {
      int i = random_key(s, o_.keys);
      OpResult got = s.invoke(OpFn::kAcquire, lock_name(i), nullptr);
      if (got.type != OpType::kOk) {
        if (got.type == OpType::kFail) back_off(s, o_.hold);
        continue;
      }
      nlohmann::json token = got.value.value("token", nlohmann::json());
      if (!append_once(s, i, generation[i], token)) continue;  // an info: the grant is abandoned
      s.invoke(OpFn::kRelease, lock_name(i), {{"token", token}});
    }
  }
  std::vector<std::string> final_read_keys() const override {
    std::vector<std::string> keys;
    for (int i = 0; i < o_.keys; ++i) {
      int highest = highest_generation_[i].load();
      for (int g = 0; g <= highest; ++g) keys.push_back(resource_key(i, g));
    }
    return keys;
  }

 private:
  // Read (moving past full generations), hold, write. False when an op ended in `info`
  // (the process was retired).
  bool append_once(ClientSession& s, int i, int& generation, const nlohmann::json& token) const {
    std::optional<std::int64_t> fence;
    if (token.is_number_integer()) fence = token.get<std::int64_t>();
    nlohmann::json list;
    for (;;) {
      note_used(i, generation);  // before the read, so a write to it is always read finally
      OpResult read = s.invoke(OpFn::kRead, resource_key(i, generation), nullptr, fence);
      if (read.type == OpType::kInfo) return false;
      if (read.type != OpType::kOk) return true;
      list = read.value.is_array() ? read.value : nlohmann::json::array();
      if (list.size() < static_cast<std::size_t>(o_.appends_per_key)) break;
      ++generation;
      if (!s.running()) return true;  // the test is ending: release, do not walk on
    }
    s.sleep(hold_time(s, o_));
    if (s.lost(lock_name(i))) return true;  // the library said the lock is gone: no write
    list.push_back(s.unique_element());
    OpResult wrote =
        s.invoke(OpFn::kWrite, resource_key(i, generation), {{"token", token}, {"value", list}});
    return wrote.type != OpType::kInfo;
  }
  void note_used(int i, int generation) const {
    std::atomic<int>& highest = highest_generation_[i];
    int seen = highest.load();
    while (seen < generation && !highest.compare_exchange_weak(seen, generation)) {
    }
  }

  WorkloadOptions o_;
  // Per lock, the highest generation any client has used: what the final reads cover.
  mutable std::vector<std::atomic<int>> highest_generation_;
};

class CasWorkload : public Workload {
 public:
  explicit CasWorkload(const WorkloadOptions& o) : o_(o) {}
  void run_client(ClientSession& s) const override {
    while (s.running()) {
      std::string key = resource_key(random_key(s, o_.keys));
      OpResult read = s.invoke(OpFn::kRead, key, nullptr);
      if (read.type != OpType::kOk) {
        if (read.type == OpType::kFail) back_off(s, o_.hold);
        continue;
      }
      s.sleep(hold_time(s, o_));
      nlohmann::json next = s.unique_element();
      OpResult set = s.invoke(OpFn::kCas, key, {{"expect", read.value}, {"value", next}});
      if (set.type == OpType::kFail) back_off(s, o_.hold);
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
std::string resource_key(int i, int generation) {
  std::string key = "k" + std::to_string(i);
  return generation == 0 ? key : key + "." + std::to_string(generation);
}

const std::vector<WorkloadInfo>& workload_registry() {
  static const std::vector<WorkloadInfo> registry = {
      {"lock", "acquire a lock, hold it, release it", {OpFn::kAcquire, OpFn::kRelease},
       [](const WorkloadOptions& o) { return std::make_unique<LockWorkload>(o); }},
      {"lock-append", "under a lock: read a list, append a unique element, write it with the token",
       {OpFn::kAcquire, OpFn::kRelease, OpFn::kRead, OpFn::kWrite},
       [](const WorkloadOptions& o) { return std::make_unique<LockAppendWorkload>(o); }},
      {"cas", "no lock: read a register, then compare-and-set it from that value to a unique one",
       {OpFn::kRead, OpFn::kCas},
       [](const WorkloadOptions& o) { return std::make_unique<CasWorkload>(o); }},
  };
  return registry;
}

const WorkloadInfo* find_workload(std::string_view name) { return find_by_name(workload_registry(), name); }
std::string workload_names() { return names_of(workload_registry()); }

}  // namespace fencecheck
