#include <set>
#include <stdexcept>

#include "nemesis/clock_nemesis.h"
#include "nemesis/crash_nemesis.h"
#include "nemesis/memory_nemesis.h"
#include "nemesis/fault_registry.h"
#include "nemesis/partition_nemesis.h"
#include "nemesis/pause_nemesis.h"
#include "nemesis/session_nemesis.h"
#include "nemesis/targets.h"
#include "platform/named_registry.h"

namespace fencecheck {

namespace {

OptionSpec fault_option(std::string name, std::int64_t default_ms, double min, std::string help) {
  OptionSpec s = declare_option(std::move(name), OptionReader::kNemesis, OptionType::kInteger, default_ms, "ms",
                                std::move(help));
  s.min = min;
  return s;
}

// Every fault option, once; which faults read it is each registry entry's `options`.
std::vector<OptionSpec> declared_fault_options() {
  OptionSpec targets;
  targets.name = "nemesis-targets";
  targets.type = OptionType::kText;
  targets.reader = OptionReader::kNemesis;
  targets.default_value = "";
  targets.allowed = target_specs();
  targets.allowed.push_back(kClientTargets);
  targets.help = "which servers a fault hits (default: each fault's own draw; kill-server: one of "
                 "one/minority/majority/all, clock faults: random); clients: clock faults hit a random "
                 "subset of the clients instead (a lock library reads its own wall clock)";
  return {
      fault_option("pause-ms", 3000, 1, "how long a pause, a partition-holder cut or a memory-pressure fill lasts"),
      fault_option("restart-ms", 0, 0, "how long a killed process stays down (0: restart at once)"),
      fault_option("clock-max-ms", 30000, 1, "largest wall-clock offset a clock fault sets"),
      fault_option("clock-min-ms", 0, 0, "smallest magnitude of a clock-bump"),
      targets,
  };
}

}  // namespace

const std::vector<FaultInfo>& fault_registry() {
  using C = Capability;
  // The clock faults shift the servers' clocks; aimed at the clients (--nemesis-targets
  // clients), only theirs.
  const Capabilities clients_clocks = {C::kShiftsClocks};
  const Capabilities server_clocks = {C::kShiftsClocks, C::kRunsServers, C::kServerClocksReachable};
  static const std::vector<FaultInfo> registry = {
      {.name = "pause-holder",
       .family = "pause",
       .description = "SIGSTOP the client whose acquire just completed, for --pause-ms (a GC pause)",
       .make = make_pause_nemesis,
       .options = {"pause-ms"},
       .self_timed = true},
      {.name = "pause-acquirer",
       .family = "pause",
       .description = "SIGSTOP a client whose acquire is in flight (sent, not yet answered) for --pause-ms",
       .make = make_pause_nemesis,
       .options = {"pause-ms"},
       .self_timed = true},
      {.name = "pause-after-send",
       .family = "pause",
       .description = "the next acquire's lock library stops its own thread for --pause-ms right after it sent the "
                      "lock commands, before it reads a reply (a GC pause where a validity check guards; adapters "
                      "that can)",
       .make = make_pause_nemesis,
       .options = {"pause-ms"},
       .needs = {C::kPausesInsideClient},
       .self_timed = true},
      {.name = "pause-client",
       .family = "pause",
       .description = "SIGSTOP a random client for --pause-ms",
       .make = make_pause_nemesis,
       .options = {"pause-ms"},
       .self_timed = true},
      {.name = "pause-server",
       .family = "pause",
       .description = "SIGSTOP a random server for --pause-ms",
       .make = make_pause_nemesis,
       .options = {"pause-ms"},
       .needs = {C::kRunsServers},
       .self_timed = true},
      {.name = "freeze-client",
       .family = "pause",
       .description = "docker pause a random client's container for --pause-ms (docker runtime)",
       .make = make_pause_nemesis,
       .options = {"pause-ms"},
       .needs = {C::kFreezesNodes},
       .self_timed = true},
      {.name = "freeze-server",
       .family = "pause",
       .description = "docker pause a random server's container for --pause-ms (docker runtime)",
       .make = make_pause_nemesis,
       .options = {"pause-ms"},
       .needs = {C::kFreezesNodes, C::kRunsServers},
       .self_timed = true},
      {.name = "partition-halves",
       .family = "partition",
       .description = "cut the servers and clients into two random halves",
       .make = make_partition_nemesis,
       .needs = {C::kCutsNetwork, C::kRunsServers}},
      {.name = "partition-one",
       .family = "partition",
       .description = "cut one random server or client off from all the others",
       .make = make_partition_nemesis,
       .needs = {C::kCutsNetwork, C::kRunsServers}},
      {.name = "partition-majorities-ring",
       .family = "partition",
       .description = "every node sees a majority, no two nodes the same one",
       .make = make_partition_nemesis,
       .needs = {C::kCutsNetwork, C::kRunsServers}},
      {.name = "partition-bridge",
       .family = "partition",
       .description = "two halves joined only through one bridge node",
       .make = make_partition_nemesis,
       .needs = {C::kCutsNetwork, C::kRunsServers}},
      {.name = "partition-leader",
       .family = "partition",
       .description = "cut off the server the backend names as leader",
       .make = make_partition_nemesis,
       .needs = {C::kCutsNetwork, C::kRunsServers, C::kNamesLeader}},
      {.name = "partition-holder",
       .family = "partition",
       .description = "cut the client whose acquire just completed off from every server (not the resource) for "
                      "--pause-ms",
       .make = make_partition_nemesis,
       .options = {"pause-ms"},
       .needs = {C::kCutsNetwork},
       .self_timed = true},
      {.name = "partition-nodes",
       .family = "partition",
       .description = "cut the links a --plan step names (a plan's \"cut\"; never drawn)",
       .make = make_partition_nemesis,
       .needs = {C::kCutsNetwork, C::kRunsServers},
       .planned_only = true},
      {.name = "clock-bump",
       .family = "clock",
       .description = "jump the wall clocks of random servers (or clients) by up to ±--clock-max-ms",
       .make = make_clock_nemesis,
       .options = {"clock-max-ms", "clock-min-ms", "nemesis-targets"},
       .needs = server_clocks,
       .needs_aimed_at_clients = clients_clocks,
       .targets_clients = true},
      {.name = "clock-strobe",
       .family = "clock",
       .description = "flip random servers' (or clients') wall clocks back and forth for up to 32 s",
       .make = make_clock_nemesis,
       .options = {"clock-max-ms", "nemesis-targets"},
       .needs = server_clocks,
       .needs_aimed_at_clients = clients_clocks,
       .targets_clients = true,
       .self_timed = true},
      {.name = "clock-reset",
       .family = "clock",
       .description = "set every server's and client's wall clock back to the host's",
       .make = make_clock_nemesis,
       .needs = server_clocks,
       // Aimed at the clients it still sets the servers' clocks back (nothing to do where
       // the library cannot reach them), so they must be the run's.
       .needs_aimed_at_clients = Capabilities{C::kShiftsClocks, C::kRunsServers},
       .self_timed = true},
      {.name = "kill-server",
       .family = "crash",
       .description = "SIGKILL one, a minority, a majority or all servers; start them again after --restart-ms",
       .make = make_crash_nemesis,
       .options = {"restart-ms", "nemesis-targets"},
       .needs = {C::kRunsServers},
       .self_timed = true},
      {.name = "restart-server",
       .family = "crash",
       .description = "stop a random server gracefully and start it again",
       .make = make_crash_nemesis,
       .needs = {C::kRunsServers},
       .self_timed = true},
      {.name = "kill-client",
       .family = "crash",
       .description = "SIGKILL a random client's worker; a new one starts after --restart-ms",
       .make = make_crash_nemesis,
       .options = {"restart-ms"},
       .self_timed = true},
      {.name = "kill-session",
       .family = "session",
       .description = "the server ends every session of the client whose acquire just completed (PostgreSQL's "
                      "pg_terminate_backend), its session-bound locks with them",
       .make = make_session_nemesis,
       .needs = {C::kRunsServers, C::kKillsSessions},
       .self_timed = true},
      {.name = "memory-pressure",
       .family = "memory",
       .description = "fill a server's memory with filler items for --pause-ms, so that its LRU evicts held lock keys "
                      "(memcached with evict=on)",
       .make = make_memory_nemesis,
       .options = {"pause-ms"},
       .needs = {C::kRunsServers, C::kEvictsKeys},
       .self_timed = true},
  };
  return registry;
}

const FaultInfo* find_fault(std::string_view name) { return find_by_name(fault_registry(), name); }
std::string fault_names() { return names_of(fault_registry()); }

const std::vector<OptionSpec>& fault_option_specs() {
  static const std::vector<OptionSpec> specs = [] {
    std::vector<OptionSpec> out = declared_fault_options();
    for (OptionSpec& spec : out) {
      std::string readers;
      for (const FaultInfo& f : fault_registry()) {
        for (const auto& o : f.options) {
          if (o == spec.name) readers += (readers.empty() ? "" : ", ") + f.name;
        }
      }
      spec.help += " (read by " + readers + ")";
    }
    return out;
  }();
  return specs;
}

FaultOptions default_fault_options() { return defaults_of(fault_option_specs()); }

std::vector<std::string> families_of(const std::vector<std::string>& faults) {
  std::set<std::string> wanted;
  for (const auto& f : faults) {
    if (const FaultInfo* info = find_fault(f)) wanted.insert(info->family);
  }
  std::vector<std::string> out;
  for (const auto& info : fault_registry()) {
    if (wanted.erase(info.family)) out.push_back(info.family);
  }
  return out;
}

}  // namespace fencecheck
