// The one check of what a run's providers — its runtime, backend and client — offer against
// what its faults, its backend and its client need (platform/capabilities.h). It reads
// only the registries' rows (runtime_registry.h, backends/registry.h, adapters/registry.h,
// nemesis/fault_registry.h): a fault, runtime, backend or adapter whose row says what it
// needs or offers is checked with no code of its own.
//
// A refusal is one sentence naming the needer, the capability, the provider that lacks it
// (and why, when its row says) and who offers it, e.g.
//   fault "partition-one" needs a runtime that cuts the network between nodes, which
//   --runtime local cannot (every node is 127.0.0.1): use --runtime docker, netns or ssh
// Pure functions of the immutable registries: thread-safe, never block.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "platform/capabilities.h"

namespace fencecheck {

struct BackendInfo;
struct FaultInfo;
struct RuntimeInfo;

// The providers a run chose. One left empty is not asked: what is needed of it counts as
// offered (a check of the runtime alone leaves backend and client empty).
struct RunProviders {
  const RuntimeInfo* runtime = nullptr;
  const BackendInfo* backend = nullptr;
  std::optional<std::string> client = std::nullopt;  // a --client value: native or an adapter's name
  // The backend's resolved options, when the run chose them: what it offers may depend on
  // them (BackendInfo::withheld). nullptr: its `offers` as declared.
  const std::map<std::string, std::string>* backend_options = nullptr;
};

// What one needer needs, as a message names it.
struct CapabilityNeeds {
  // `fault "partition-one"`, `backend postgres`, `--client redis-py`; empty: the sentence
  // starts at "needs".
  std::string who;
  Capabilities needs;
  std::vector<CapabilityReason> reasons = {};  // why it needs some of them
  // Another way out, named when what is missing is not among `instead`'s needs:
  // `--nemesis-targets clients`, which makes a clock fault need only the runtime's clocks.
  std::optional<Capabilities> instead = std::nullopt;
  std::string instead_how = {};
};

// What a fault needs; aimed_at_clients: --nemesis-targets clients.
CapabilityNeeds fault_needs(const FaultInfo& fault, bool aimed_at_clients);
// What a backend needs of the runtime (postgres: the controller's files).
CapabilityNeeds backend_needs(const BackendInfo& backend);
// What a --client value needs of the runtime (an adapter: its interpreters and files).
CapabilityNeeds client_needs(const std::string& client);

// The first capability of needs.needs (in declaration order) the run's providers lack, as
// one sentence saying who offers it: the providers of that kind offering every need of
// that kind (or, when none does, the missing one), by name. nullopt when nothing is missing.
std::optional<std::string> missing_capability(const CapabilityNeeds& needs, const RunProviders& run);

// Every registered fault `rt` cannot inject, with why ("needs a runtime that …"; config.json's
// "unavailable_faults": the runtime's verdict alone, whatever the backend and client).
std::map<std::string, std::string> faults_unavailable_under(const RuntimeInfo& rt, bool aimed_at_clients);
// "pause-holder, …; with --nemesis-targets clients: clock-bump, …": what rt can inject.
std::string faults_available_under(const RuntimeInfo& rt);
// "clock-bump and clock-strobe": the faults `--nemesis-targets clients` aims at the clients.
std::string faults_aimed_by_client_targets();

}  // namespace fencecheck
