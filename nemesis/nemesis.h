// The Nemesis role: faults injected into a running test. A nemesis owns the faults it
// names in the fault registry; the schedule (schedule.h) decides when each starts.
//
// A nemesis touches the test only through NemesisEnv, which the runner implements: which
// nodes exist, a signal to every process of a node, and the nemesis lines of the history.
// Every start and end of a fault is recorded there. Implementations are thread-safe:
// the schedule thread calls start/tick/heal while client threads call on_acquired.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace fencecheck {

class NemesisEnv {
 public:
  virtual ~NemesisEnv() = default;
  virtual std::vector<std::string> client_nodes() const = 0;
  virtual std::vector<std::string> server_nodes() const = 0;
  // Sends sig to every process group the run started on `node`.
  virtual void signal_node(const std::string& node, int sig) = 0;
  // Appends a nemesis event (type info, process "nemesis") to the history.
  virtual void record(const std::string& f, const nlohmann::json& value) = 0;
};

struct NemesisOptions {
  std::chrono::milliseconds pause{3000};  // how long a pause lasts
};

class Nemesis {
 public:
  virtual ~Nemesis() = default;
  // Begins `fault`, one of the names this nemesis registered. rng is the schedule's.
  virtual void start(const std::string& fault, std::mt19937_64& rng) = 0;
  // A client's acquire just completed ok; called before that client's next op.
  virtual void on_acquired(const std::string& client_node) { (void)client_node; }
  // Ends faults whose time is up.
  virtual void tick() = 0;
  // True while a fault is armed or in force.
  virtual bool active() const = 0;
  // Human descriptions of what is in force now, e.g. "pause-holder c3".
  virtual std::vector<std::string> describe_active() const = 0;
  // Ends every fault now. Idempotent.
  virtual void heal() = 0;
};

struct FaultInfo {
  std::string name;         // "pause-holder"
  std::string nemesis;      // which Nemesis implements it: "pause"
  std::string description;
  bool needs_partitions = false;  // impossible under the local runtime
};

const std::vector<FaultInfo>& fault_registry();
const FaultInfo* find_fault(std::string_view name);  // nullptr when unknown
std::string fault_names();
// The nemesis that implements `nemesis_name` ("pause"), bound to env.
std::unique_ptr<Nemesis> make_nemesis(const std::string& nemesis_name, NemesisEnv& env,
                                      const NemesisOptions& options);

}  // namespace fencecheck
