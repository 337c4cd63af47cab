// The generic capability check (harness/run/capability_check.h) against the hand-written
// rules it replaced: every fault × runtime × backend × client × --nemesis-targets
// combination is refused exactly when the old rules refused it, naming a capability the
// old rules found missing. The old rules are kept here as data (the registries' former
// positional flags) and code (the former checks of run_config.cpp).
#include "harness/run/capability_check.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "adapters/registry.h"
#include "backends/registry.h"
#include "nemesis/fault_registry.h"
#include "nemesis/partition_nemesis.h"
#include "platform/runtime_registry.h"

namespace fencecheck::testing {
namespace {

using C = Capability;

// The former FaultInfo flags.
struct OldFault {
  const char* name;
  bool net, clocks, leader, freeze, targets_clients, pauses_inside_client, client_side;
};
const std::vector<OldFault> kOldFaults = {
    {"pause-holder", false, false, false, false, false, false, true},
    {"pause-acquirer", false, false, false, false, false, false, true},
    {"pause-after-send", false, false, false, false, false, true, true},
    {"pause-client", false, false, false, false, false, false, true},
    {"pause-server", false, false, false, false, false, false, false},
    {"freeze-client", false, false, false, true, false, false, true},
    {"freeze-server", false, false, false, true, false, false, false},
    {"partition-halves", true, false, false, false, false, false, false},
    {"partition-one", true, false, false, false, false, false, false},
    {"partition-majorities-ring", true, false, false, false, false, false, false},
    {"partition-bridge", true, false, false, false, false, false, false},
    {"partition-leader", true, false, true, false, false, false, false},
    {"partition-holder", true, false, false, false, false, false, true},
    {"partition-nodes", true, false, false, false, false, false, false},
    {"clock-bump", false, true, false, false, true, false, false},
    {"clock-strobe", false, true, false, false, true, false, false},
    {"clock-reset", false, true, false, false, false, false, false},
    {"kill-server", false, false, false, false, false, false, false},
    {"restart-server", false, false, false, false, false, false, false},
    {"kill-client", false, false, false, false, false, false, true},
};

// The former RuntimeInfo flags; "bare" (offering nothing) is this test's own, so that a
// need every real runtime meets (the clock library) is still seen.
struct OldRuntime {
  const char* name;
  bool cuts_network, freezes_nodes, shifts_clocks, runs_adapters, shares_files, manages_servers;
};
const std::vector<OldRuntime> kOldRuntimes = {
    {"docker", true, true, true, false, true, true}, {"local", false, false, true, true, true, true},
    {"netns", true, false, true, true, true, true},  {"ssh", true, false, true, false, false, true},
    {"external", true, false, true, true, true, false}, {"bare", false, false, false, false, false, false},
};

// The former BackendInfo fields (has_leader, clock_unreachable and needs_shared_files not
// empty); "bare" is this test's own, lacking everything and needing the shared files.
struct OldBackend {
  const char* name;
  bool has_leader, clock_unreachable, needs_shared_files;
};
const std::vector<OldBackend> kOldBackends = {
    {"redis", false, false, false}, {"postgres", false, false, true}, {"redlock", false, false, false},
    {"zookeeper", true, false, false}, {"etcd", true, true, false},  {"bare", false, true, true},
};

// The former AdapterInfo::pauses_after_send, native first.
const std::map<std::string, bool> kOldClients = {{"native", false},        {"node-redlock", true},
                                                 {"node-redlock-5", true}, {"redis-semaphore", false},
                                                 {"curator", false},       {"redis-py", false}};

// What the old rules found missing (every rule, not only the first), as capabilities.
std::set<Capability> old_fault_missing(const OldFault& f, const OldRuntime& rt, const OldBackend& b,
                                       bool client_pauses, bool aims) {
  std::set<Capability> out;
  if (f.freeze && !rt.freezes_nodes) out.insert(C::kFreezesNodes);
  if (f.net && !rt.cuts_network) out.insert(C::kCutsNetwork);
  if (f.clocks && !rt.shifts_clocks) out.insert(C::kShiftsClocks);
  if (!rt.manages_servers && !f.client_side && !(f.targets_clients && aims)) out.insert(C::kRunsServers);
  if (f.pauses_inside_client && !client_pauses) out.insert(C::kPausesInsideClient);
  if (f.clocks && b.clock_unreachable && !aims) out.insert(C::kServerClocksReachable);
  if (f.leader && !b.has_leader) out.insert(C::kNamesLeader);
  return out;
}

// The new rows for the test's own "bare" providers.
const RuntimeInfo& bare_runtime() {
  static const RuntimeInfo bare{.name = "bare", .description = "offers nothing", .offers = {}, .unavailable = {}, .make = {}};
  return bare;
}
const BackendInfo& bare_backend() {
  static const BackendInfo bare = [] {
    BackendInfo b;
    b.name = "bare";
    b.needs = {C::kSharesFiles};
    return b;
  }();
  return bare;
}
const RuntimeInfo* runtime_named(const std::string& name) {
  return name == "bare" ? &bare_runtime() : find_runtime(name);
}
const BackendInfo* backend_named(const std::string& name) {
  return name == "bare" ? &bare_backend() : find_backend(name);
}

// Asserts that `message` is refused exactly when `missing` is not empty, naming one of them.
void expect_refusal(const std::optional<std::string>& message, const std::set<Capability>& missing,
                    const std::string& what) {
  if (missing.empty()) {
    EXPECT_FALSE(message.has_value()) << what << " was refused: " << *message;
    return;
  }
  ASSERT_TRUE(message.has_value()) << what << " was accepted; the old rules refused it";
  bool named = false;
  for (Capability c : missing) named = named || message->find(capability_info(c).phrase) != std::string::npos;
  EXPECT_TRUE(named) << what << ": " << *message;
}

TEST(CapabilityCheck, RefusesExactlyWhatTheOldRulesRefused) {
  int combinations = 0, refused = 0;
  for (const OldFault& old : kOldFaults) {
    const FaultInfo* fault = find_fault(old.name);
    ASSERT_NE(fault, nullptr) << old.name;
    for (const OldRuntime& rt : kOldRuntimes) {
      ASSERT_NE(runtime_named(rt.name), nullptr) << rt.name;
      for (const OldBackend& b : kOldBackends) {
        ASSERT_NE(backend_named(b.name), nullptr) << b.name;
        for (const auto& [client, pauses] : kOldClients) {
          for (bool aims : {false, true}) {
            const RunProviders run{runtime_named(rt.name), backend_named(b.name), client};
            const auto missing = old_fault_missing(old, rt, b, pauses, aims);
            expect_refusal(missing_capability(fault_needs(*fault, aims), run), missing,
                           std::string(old.name) + " under " + rt.name + ", " + b.name + ", " + client +
                               (aims ? ", aimed at the clients" : ""));
            ++combinations;
            refused += missing.empty() ? 0 : 1;
          }
        }
      }
    }
  }
  EXPECT_EQ(combinations, 20 * 6 * 6 * 6 * 2);
  EXPECT_GT(refused, 0);
}

TEST(CapabilityCheck, BackendsAndClientsNeedOfTheRuntimeWhatTheOldRulesAsked) {
  for (const OldRuntime& rt : kOldRuntimes) {
    for (const OldBackend& b : kOldBackends) {
      std::set<Capability> missing;
      if (b.needs_shared_files && !rt.shares_files) missing.insert(C::kSharesFiles);
      expect_refusal(missing_capability(backend_needs(*backend_named(b.name)), {.runtime = runtime_named(rt.name)}),
                     missing, std::string("backend ") + b.name + " under " + rt.name);
    }
    for (const auto& [client, pauses] : kOldClients) {
      std::set<Capability> missing;
      if (client != kNativeClient && !rt.runs_adapters) missing.insert(C::kRunsAdapters);
      expect_refusal(missing_capability(client_needs(client), {.runtime = runtime_named(rt.name)}), missing,
                     "--client " + client + " under " + rt.name);
    }
  }
}

// Each sentence names the needer, the capability, who lacks it and why, and who offers it.
TEST(CapabilityCheck, SaysWhatIsMissingAndWhoOffersItInOneSentence) {
  auto fault = [](const char* name, const char* runtime, const char* backend, const char* client, bool aims) {
    return missing_capability(fault_needs(*find_fault(name), aims),
                              {find_runtime(runtime), find_backend(backend), std::string(client)})
        .value_or("(accepted)");
  };
  EXPECT_EQ(fault("partition-one", "local", "redis", "native", false),
            "fault \"partition-one\" needs a runtime that cuts the network between nodes, which --runtime local "
            "cannot (every node is 127.0.0.1): use --runtime docker, netns or ssh");
  EXPECT_EQ(fault("partition-holder", "local", "redis", "native", false),
            "fault \"partition-holder\" needs a runtime that cuts the network between nodes, which --runtime local "
            "cannot (every node is 127.0.0.1): use --runtime docker, external, netns or ssh");
  EXPECT_EQ(fault("freeze-server", "netns", "redis", "native", false),
            "fault \"freeze-server\" needs a runtime that freezes a whole node (every process at once, by the cgroup "
            "freezer), which --runtime netns cannot: use --runtime docker");
  EXPECT_EQ(fault("clock-bump", "netns", "etcd", "native", false),
            "fault \"clock-bump\" needs a backend that lets the clock library reach its servers' wall clocks, which "
            "--backend etcd cannot (etcd is a static Go binary that reads the time through the vDSO, where "
            "libfcclock's LD_PRELOAD cannot reach): use --backend mariadb, postgres, redis, redlock or zookeeper, or "
            "--nemesis-targets clients to aim it at the clients instead");
  EXPECT_EQ(fault("clock-bump", "netns", "etcd", "native", true), "(accepted)");
  EXPECT_EQ(fault("kill-server", "external", "redis", "native", false),
            "fault \"kill-server\" needs a runtime that runs the backend's servers, which --runtime external cannot "
            "(you run them; it drives the clients only): use --runtime docker, local, netns or ssh");
  EXPECT_EQ(fault("partition-leader", "netns", "redis", "native", false),
            "fault \"partition-leader\" needs a backend that names a leader, which --backend redis cannot: use "
            "--backend etcd, nats or zookeeper");
  EXPECT_EQ(fault("pause-after-send", "netns", "redlock", "native", false),
            "fault \"pause-after-send\" needs a client that pauses inside its lock library right after it sent the "
            "lock commands, which --client native cannot: use --client node-redlock or node-redlock-5");
  EXPECT_EQ(missing_capability(backend_needs(*find_backend("postgres")), {.runtime = find_runtime("ssh")}),
            "backend postgres needs a runtime that shows its nodes the controller's own files, not copies (its setup "
            "edits the data directory initdb made on the node from the controller), which --runtime ssh cannot "
            "(each host holds copies of the controller's files): use --runtime docker, external, local or netns");
  EXPECT_EQ(missing_capability(client_needs("redis-py"), {.runtime = find_runtime("docker")}),
            "--client redis-py needs a runtime that has the lock libraries' interpreters (Node, Java, Python) and "
            "adapter files on its nodes, which --runtime docker cannot (its image carries the servers, not "
            "the adapters): use --runtime external, local or netns");
}

// kill-session needs a backend whose server can end a client's sessions: refused for redis
// (its locks are keys with an expiry) in one sentence naming the capability and who offers
// it, accepted for postgres; and a runtime that runs the servers it would ask.
TEST(CapabilityCheck, KillSessionNeedsABackendThatEndsSessions) {
  const FaultInfo& kill_session = *find_fault("kill-session");
  auto check = [&](const char* runtime, const char* backend) {
    return missing_capability(fault_needs(kill_session, false),
                              {find_runtime(runtime), find_backend(backend), std::string(kNativeClient)})
        .value_or("(accepted)");
  };
  EXPECT_EQ(check("netns", "redis"),
            "fault \"kill-session\" needs a backend that ends a client's sessions on its servers (its session-bound "
            "locks with them), which --backend redis cannot (a lock is a key with an expiry, not bound to a "
            "connection): use --backend mariadb or postgres");
  EXPECT_EQ(check("netns", "postgres"), "(accepted)");
  EXPECT_EQ(check("netns", "mariadb"), "(accepted)");
  EXPECT_EQ(check("docker", "postgres"), "(accepted)");
  for (const char* backend : {"redlock", "zookeeper", "etcd"}) {
    const std::string refused = check("netns", backend);
    EXPECT_NE(refused.find(std::string("--backend ") + backend + " cannot ("), std::string::npos)
        << "each backend without sessions to end says why: " << refused;
  }
  EXPECT_EQ(check("external", "postgres"),
            "fault \"kill-session\" needs a runtime that runs the backend's servers, which --runtime external cannot "
            "(you run them; it drives the clients only): use --runtime docker, local, netns or ssh");
}

// memory-pressure needs a backend whose servers evict, with the run's options: memcached
// with evict=on; refused for redis, and for memcached with evict=off, saying why.
TEST(CapabilityCheck, MemoryPressureNeedsABackendThatEvictsWithTheRunsOptions) {
  const FaultInfo& pressure = *find_fault("memory-pressure");
  auto check = [&](const char* backend, const std::vector<std::string>& opts) {
    const BackendInfo* b = find_backend(backend);
    const BackendOptions options = resolve_backend_options(*b, opts);
    return missing_capability(fault_needs(pressure, false),
                              {find_runtime("netns"), b, std::string(kNativeClient), &options})
        .value_or("(accepted)");
  };
  EXPECT_EQ(check("redis", {}),
            "fault \"memory-pressure\" needs a backend that evicts held lock keys when its servers' memory fills (a "
            "cache's LRU), which --backend redis cannot: use --backend memcached");
  EXPECT_EQ(check("memcached", {}), "(accepted)");
  EXPECT_EQ(check("memcached", {"evict=on", "memory_mb=8"}), "(accepted)");
  EXPECT_EQ(check("memcached", {"evict=off"}),
            "fault \"memory-pressure\" needs a backend that evicts held lock keys when its servers' memory fills (a "
            "cache's LRU), which --backend memcached cannot (evict=off is -M: memcached refuses to evict; the fault "
            "would only fill the cache)");
  EXPECT_EQ(pressure.needs, (Capabilities{C::kRunsServers, C::kEvictsKeys}));
  EXPECT_EQ(pressure.options, std::vector<std::string>{"pause-ms"}) << "its length is --pause-ms";
}

// A fault that is only a row (no code in the check) is checked from its needs alone: a new
// fault needing capabilities that exist is its registry row plus its family's code.
TEST(CapabilityCheck, ANewFaultIsCheckedFromItsRowAlone) {
  const FaultInfo isolate_resource{.name = "partition-resource",
                                   .family = "partition",
                                   .description = "cut the resource off from every client",
                                   .make = make_partition_nemesis,
                                   .needs = {C::kCutsNetwork, C::kRunsServers}};
  ASSERT_EQ(find_fault(isolate_resource.name), nullptr) << "the example must not be a registered fault";
  const RunProviders local{find_runtime("local"), find_backend("redis"), std::string(kNativeClient)};
  EXPECT_EQ(missing_capability(fault_needs(isolate_resource, false), local),
            "fault \"partition-resource\" needs a runtime that cuts the network between nodes, which --runtime "
            "local cannot (every node is 127.0.0.1): use --runtime docker, netns or ssh");
  const RunProviders netns{find_runtime("netns"), find_backend("redis"), std::string(kNativeClient)};
  EXPECT_EQ(missing_capability(fault_needs(isolate_resource, false), netns), std::nullopt);
}

TEST(CapabilityCheck, ListsWhatARuntimeCanInject) {
  EXPECT_EQ(faults_available_under(*find_runtime("external")),
            "pause-holder, pause-acquirer, pause-after-send, pause-client, partition-holder, kill-client; with "
            "--nemesis-targets clients: clock-bump, clock-strobe");
  const auto unavailable = faults_unavailable_under(*find_runtime("netns"), false);
  EXPECT_EQ(unavailable.size(), 2u);
  EXPECT_EQ(unavailable.at("freeze-client"),
            "needs a runtime that freezes a whole node (every process at once, by the cgroup freezer), which "
            "--runtime netns cannot: use --runtime docker");
  EXPECT_EQ(unavailable.at("freeze-server"), unavailable.at("freeze-client")) << "the report groups faults by why";
  EXPECT_TRUE(faults_unavailable_under(*find_runtime("docker"), false).empty())
      << "the runtime's verdict alone: a backend without a leader is not the runtime's";
  EXPECT_EQ(faults_aimed_by_client_targets(), "clock-bump and clock-strobe");
}

// The vocabulary: one row per capability, each phrase naming exactly one.
TEST(CapabilityVocabulary, EachCapabilityHasOneDistinctRow) {
  for (const CapabilityInfo& a : kCapabilityTable) {
    EXPECT_FALSE(a.name.empty());
    for (const CapabilityInfo& b : kCapabilityTable) {
      if (a.capability == b.capability) continue;
      EXPECT_NE(a.name, b.name);
      EXPECT_EQ(a.phrase.find(b.phrase), std::string_view::npos) << a.name << "'s phrase contains " << b.name << "'s";
    }
  }
  constexpr Capabilities set = {C::kCutsNetwork, C::kNamesLeader};
  static_assert(set.has(C::kCutsNetwork) && !set.has(C::kFreezesNodes));
  static_assert((set - Capabilities{C::kCutsNetwork}) == Capabilities{C::kNamesLeader});
  static_assert(set.of(Provider::kBackend) == Capabilities{C::kNamesLeader});
  EXPECT_EQ(set.names(), "cuts-network, names-leader");
  EXPECT_EQ(Capabilities{}.names(), "none");
}

// A provider offers, and says why it lacks, only capabilities of its own kind; a needer
// gives reasons only for what it needs.
TEST(CapabilityVocabulary, RowsOfferOnlyTheirOwnKind) {
  for (const BackendInfo& b : backend_registry()) {
    EXPECT_EQ(b.offers.of(Provider::kBackend), b.offers) << b.name;
    EXPECT_EQ(b.needs.of(Provider::kRuntime), b.needs) << b.name;
    for (const CapabilityReason& r : b.reasons) {
      EXPECT_TRUE(b.needs.has(r.capability) ||
                  (capability_info(r.capability).provider == Provider::kBackend && !b.offers.has(r.capability)))
          << b.name << ": a reason for " << capability_info(r.capability).name;
    }
  }
  for (const AdapterInfo& a : adapter_registry()) {
    EXPECT_EQ(a.offers.of(Provider::kClient), a.offers) << a.name;
    EXPECT_TRUE(a.needs.has(C::kRunsAdapters)) << a.name;
  }
}

}  // namespace
}  // namespace fencecheck::testing
