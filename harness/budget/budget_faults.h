// The faults `fencecheck budget` and `fencecheck datasheet` measure a boundary of, each
// declared once in budget_faults.cpp: what its magnitude X is, which side of the boundary
// its violations lie on, the probe's one-step fault plan (nemesis/plan.h) for a given X and
// how a probe's run is set up around it (its length, how long its holders hold, the options
// it sets: --pause-ms X, --op-timeout-ms and --stall-ms that outlast it, --hold-ms and
// --hold-min-ms, --time-limit), and the history line that shows it took effect.
// --fault, its help, validation, the datasheet's rows and budget.json follow from the rows.
//
// Every probe is a deterministic plan: one fault of magnitude X, placed by the first grant
// (the holder's acquire-ok), as `--plan` places it. Whether a run can inject it at all is
// the run's own check (RunConfig::problem(), capability_check.h) on the probe's plan: a
// refusal there is the datasheet's "refused, because …". The registry is immutable and
// thread-safe. probe_config() and budget_fault_problem() write (and the latter removes) a
// plan file and block only for that; call them from one thread at a time.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/budget/budget_search.h"
#include "harness/run/run_config.h"

namespace fencecheck {

// What a probe's plan names: the run's servers and clients (c1…cN).
struct ProbeNodes {
  std::vector<std::string> servers, clients;
};

struct BudgetFault {
  std::string name;       // "pause-holder"
  std::string magnitude;  // what X is: "pause"
  std::string description;
  BreaksWhere breaks = BreaksWhere::kAbove;
  // The probe's plan for magnitude x (ms): a JSON list of steps.
  std::function<nlohmann::json(std::int64_t x, const ProbeNodes& nodes)> plan;
  // How long the probe's holders hold. kAsGiven: --hold-ms (a paused holder's hold spans
  // its pause anyway). kMostOfLease: exactly 4/5 of the lease, never past it by itself — a
  // fault that takes the lock from a holder within its lease (a server's clock jump, a
  // restart without data) shows only while the holder still holds, and a fixed hold makes
  // its boundary sharp. kThroughTheFault: exactly X + 200 ms — a holder that goes on
  // working through a whole cut and a little after, as a cut holder that does not know it
  // is cut does.
  enum class Hold { kAsGiven, kMostOfLease, kThroughTheFault };
  Hold hold = Hold::kAsGiven;
  // How long after the first grant a probe at x goes on: the violation comes within it.
  std::function<std::int64_t(std::int64_t x, std::int64_t lease_ms)> length_ms;
  // It kills every server at once: its tries say whether the token survives that (the
  // datasheet's token line).
  bool kills_every_server = false;
  // The nemesis line (history.md: its `f`) that shows the fault took effect: a probe whose
  // history lacks one, or has it only with `not_applied` / `not_cut` (an acquire that did
  // not pause, a node already down), says nothing about the lock.
  std::string took_effect;
};

// Whether a run's history shows the fault took effect (BudgetFault::took_effect). Reads
// <run_dir>/history.jsonl; false when it cannot be read.
bool fault_took_effect(const BudgetFault& fault, const std::filesystem::path& run_dir);

const std::vector<BudgetFault>& budget_faults();
const BudgetFault* find_budget_fault(std::string_view name);  // nullptr when unknown
std::string budget_fault_names();                            // "pause-holder, …"

// How long a silent holder keeps a grant in this configuration: the backend option that
// bounds it (BackendInfo::lease_ms: ZooKeeper's session_timeout_ms, etcd's lease_ttl_s),
// else --ttl-ms. Throws std::invalid_argument when the backend's options do not resolve.
std::int64_t lease_ms(const RunConfig& c);

// The servers and clients a probe's plan may name. Throws std::invalid_argument when the
// backend or its options do not resolve.
ProbeNodes probe_nodes(const RunConfig& c);

// The run a probe at x makes: `base` (the user's options, resolved) with the fault's plan
// (written to plan_file, which the caller owns) instead of any --nemesis, its length, and
// the options the fault sets (--pause-ms x, op deadlines and --stall-ms that outlast it,
// the holds of BudgetFault::hold). Throws std::invalid_argument as probe_nodes(), HarnessError when
// plan_file cannot be written.
RunConfig probe_config(const RunConfig& base, const BudgetFault& fault, std::int64_t x, const std::string& plan_file);

// Why this configuration cannot take the fault at magnitude x (the run's own refusal of a
// probe, e.g. "fault \"partition-nodes\" needs a runtime that cuts links", or a magnitude a
// plan cannot say), or nullopt. Writes a probe plan to a temporary file, and removes it.
std::optional<std::string> budget_fault_problem(const RunConfig& base, const BudgetFault& fault, std::int64_t x = 1000);

}  // namespace fencecheck
