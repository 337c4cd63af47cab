#include <set>
#include <stdexcept>

#include "nemesis/clock_nemesis.h"
#include "nemesis/crash_nemesis.h"
#include "nemesis/nemesis.h"
#include "nemesis/partition_nemesis.h"
#include "nemesis/pause_nemesis.h"
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
      fault_option("pause-ms", 3000, 1, "how long a pause, or a partition-holder cut, lasts"),
      fault_option("restart-ms", 0, 0, "how long a killed process stays down (0: restart at once)"),
      fault_option("clock-max-ms", 30000, 1, "largest wall-clock offset a clock fault sets"),
      fault_option("clock-min-ms", 0, 0, "smallest magnitude of a clock-bump"),
      targets,
  };
}

}  // namespace

const std::vector<FaultInfo>& fault_registry() {
  // name, family, description, needs_net, needs_clocks, needs_leader, self_timed, factory,
  // the options it reads (each declared once in declared_fault_options() above),
  // needs_freeze, targets_clients, pauses_inside_client, client_side, planned_only
  static const std::vector<FaultInfo> registry = {
      {"pause-holder", "pause", "SIGSTOP the client whose acquire just completed, for --pause-ms (a GC pause)",
       false, false, false, true, make_pause_nemesis, {"pause-ms"}, false, false, false, true},
      {"pause-acquirer", "pause",
       "SIGSTOP a client whose acquire is in flight (sent, not yet answered) for --pause-ms",
       false, false, false, true, make_pause_nemesis, {"pause-ms"}, false, false, false, true},
      {"pause-after-send", "pause",
       "the next acquire's lock library stops its own thread for --pause-ms right after it sent the lock "
       "commands, before it reads a reply (a GC pause where a validity check guards; adapters that can)",
       false, false, false, true, make_pause_nemesis, {"pause-ms"}, false, false, true, true},
      {"pause-client", "pause", "SIGSTOP a random client for --pause-ms", false, false, false, true,
       make_pause_nemesis, {"pause-ms"}, false, false, false, true},
      {"pause-server", "pause", "SIGSTOP a random server for --pause-ms", false, false, false, true,
       make_pause_nemesis, {"pause-ms"}},
      {"freeze-client", "pause", "docker pause a random client's container for --pause-ms (docker runtime)",
       false, false, false, true, make_pause_nemesis, {"pause-ms"}, true, false, false, true},
      {"freeze-server", "pause", "docker pause a random server's container for --pause-ms (docker runtime)",
       false, false, false, true, make_pause_nemesis, {"pause-ms"}, true},
      {"partition-halves", "partition", "cut the servers and clients into two random halves",
       true, false, false, false, make_partition_nemesis},
      {"partition-one", "partition", "cut one random server or client off from all the others",
       true, false, false, false, make_partition_nemesis},
      {"partition-majorities-ring", "partition", "every node sees a majority, no two nodes the same one",
       true, false, false, false, make_partition_nemesis},
      {"partition-bridge", "partition", "two halves joined only through one bridge node",
       true, false, false, false, make_partition_nemesis},
      {"partition-leader", "partition", "cut off the server the backend names as leader",
       true, false, true, false, make_partition_nemesis},
      {"partition-holder", "partition",
       "cut the client whose acquire just completed off from every server (not the resource) for --pause-ms",
       true, false, false, true, make_partition_nemesis, {"pause-ms"}, false, false, false, true},
      {"partition-nodes", "partition", "cut the links a --plan step names (a plan's \"cut\"; never drawn)",
       true, false, false, false, make_partition_nemesis, {}, false, false, false, false, true},
      {"clock-bump", "clock", "jump the wall clocks of random servers (or clients) by up to ±--clock-max-ms",
       false, true, false, false, make_clock_nemesis, {"clock-max-ms", "clock-min-ms", "nemesis-targets"}, false,
       true},
      {"clock-strobe", "clock", "flip random servers' (or clients') wall clocks back and forth for up to 32 s",
       false, true, false, true, make_clock_nemesis, {"clock-max-ms", "nemesis-targets"}, false, true},
      {"clock-reset", "clock", "set every server's and client's wall clock back to the host's", false, true, false, true,
       make_clock_nemesis},
      {"kill-server", "crash",
       "SIGKILL one, a minority, a majority or all servers; start them again after --restart-ms",
       false, false, false, true, make_crash_nemesis, {"restart-ms", "nemesis-targets"}},
      {"restart-server", "crash", "stop a random server gracefully and start it again",
       false, false, false, true, make_crash_nemesis},
      {"kill-client", "crash", "SIGKILL a random client's worker; a new one starts after --restart-ms",
       false, false, false, true, make_crash_nemesis, {"restart-ms"}, false, false, false, true},
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
