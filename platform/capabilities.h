// The capability vocabulary, declared once: what a fault, a backend or a lock client may
// need of the run's three providers — its runtime, its backend and its client. Each
// provider's registry row says what it OFFERS as a Capabilities set, each fault's row what
// it NEEDS; harness/run/capability_check.h compares them and says, in one sentence, what is
// missing and who offers it. A provider may say why it lacks a capability, a needer why it
// needs one (CapabilityReason): the sentence quotes it.
//
// Adding a capability: one enumerator and one row of kCapabilityTable (its name, its
// provider and the phrase a message uses); the providers that offer it list it in their
// rows. Everything here is a constexpr value: thread-safe, nothing blocks.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace fencecheck {

enum class Capability : std::uint8_t {
  // of the runtime
  kCutsNetwork,
  kFreezesNodes,
  kShiftsClocks,
  kRunsServers,
  kRunsAdapters,
  kSharesFiles,
  // of the backend
  kNamesLeader,
  kServerClocksReachable,
  kClientRenews,
  kKillsSessions,
  kEvictsKeys,
  // of the client
  kPausesInsideClient,
};
inline constexpr std::size_t kCapabilityCount = 12;

// Who offers a capability: the one provider of each kind a run has.
enum class Provider : std::uint8_t { kRuntime, kBackend, kClient };

struct ProviderInfo {
  std::string_view noun;    // "runtime"
  std::string_view option;  // the run option that chooses one: "--runtime"
};
constexpr ProviderInfo provider_info(Provider p) {
  constexpr std::array<ProviderInfo, 3> kProviders = {{
      {"runtime", "--runtime"},
      {"backend", "--backend"},
      {"client", "--client"},
  }};
  return kProviders[static_cast<std::size_t>(p)];
}

struct CapabilityInfo {
  Capability capability;
  std::string_view name;  // "cuts-network"
  Provider provider;
  // Completes "a runtime that …" / "a backend that …" / "a client that …"; distinct for
  // each capability, so that a message names exactly one.
  std::string_view phrase;
};

inline constexpr std::array<CapabilityInfo, kCapabilityCount> kCapabilityTable = {{
    {Capability::kCutsNetwork, "cuts-network", Provider::kRuntime, "cuts the network between nodes"},
    {Capability::kFreezesNodes, "freezes-nodes", Provider::kRuntime,
     "freezes a whole node (every process at once, by the cgroup freezer)"},
    {Capability::kShiftsClocks, "shifts-clocks", Provider::kRuntime,
     "shifts its nodes' wall clocks through the clock library (libfcclock, LD_PRELOAD)"},
    {Capability::kRunsServers, "runs-servers", Provider::kRuntime, "runs the backend's servers"},
    {Capability::kRunsAdapters, "runs-adapters", Provider::kRuntime,
     "has the lock libraries' interpreters (Node, Java, Python) and adapter files on its nodes"},
    {Capability::kSharesFiles, "shares-files", Provider::kRuntime,
     "shows its nodes the controller's own files, not copies"},
    {Capability::kNamesLeader, "names-leader", Provider::kBackend, "names a leader"},
    {Capability::kServerClocksReachable, "server-clocks-reachable", Provider::kBackend,
     "lets the clock library reach its servers' wall clocks"},
    {Capability::kClientRenews, "client-renews", Provider::kBackend,
     "has a client that renews its grants on its own and says so (renewed notices)"},
    {Capability::kKillsSessions, "kills-sessions", Provider::kBackend,
     "ends a client's sessions on its servers (its session-bound locks with them)"},
    {Capability::kEvictsKeys, "evicts-keys", Provider::kBackend,
     "evicts held lock keys when its servers' memory fills (a cache's LRU)"},
    {Capability::kPausesInsideClient, "pauses-inside-client", Provider::kClient,
     "pauses inside its lock library right after it sent the lock commands"},
}};

constexpr const CapabilityInfo& capability_info(Capability c) {
  return kCapabilityTable[static_cast<std::size_t>(c)];
}

constexpr bool capability_table_in_order() {
  for (std::size_t i = 0; i < kCapabilityCount; ++i) {
    if (static_cast<std::size_t>(kCapabilityTable[i].capability) != i) return false;
  }
  return true;
}
static_assert(capability_table_in_order(), "kCapabilityTable has one row per Capability, in declaration order");

// A set of capabilities: `{Capability::kCutsNetwork, Capability::kRunsServers}`.
class Capabilities {
 public:
  constexpr Capabilities() = default;
  constexpr Capabilities(std::initializer_list<Capability> caps) {
    for (Capability c : caps) bits_ |= bit(c);
  }
  constexpr bool has(Capability c) const { return (bits_ & bit(c)) != 0; }
  constexpr bool empty() const { return bits_ == 0; }
  // Every capability of both.
  constexpr Capabilities operator|(Capabilities o) const { return from_bits(bits_ | o.bits_); }
  // Those of this set that o lacks.
  constexpr Capabilities operator-(Capabilities o) const { return from_bits(bits_ & ~o.bits_); }
  // Those that `p` provides.
  constexpr Capabilities of(Provider p) const {
    Capabilities out;
    for (const CapabilityInfo& c : kCapabilityTable) {
      if (c.provider == p && has(c.capability)) out.bits_ |= bit(c.capability);
    }
    return out;
  }
  constexpr bool operator==(const Capabilities&) const = default;
  // In declaration order.
  std::vector<Capability> list() const;
  // "cuts-network, runs-servers"; "none" for an empty set.
  std::string names() const;

 private:
  static constexpr std::uint32_t bit(Capability c) { return std::uint32_t{1} << static_cast<unsigned>(c); }
  static constexpr Capabilities from_bits(std::uint32_t bits) {
    Capabilities out;
    out.bits_ = bits;
    return out;
  }
  std::uint32_t bits_ = 0;
};
static_assert(kCapabilityCount <= 32, "Capabilities keeps one bit per capability in 32 bits");

// Why a provider lacks a capability of its own kind ("etcd is a static Go binary …"), or
// why a needer needs one of another kind ("its setup edits the data directory …").
struct CapabilityReason {
  Capability capability;
  std::string why;
};
// The reason `reasons` gives for c; empty when none.
std::string_view reason_for(const std::vector<CapabilityReason>& reasons, Capability c);

}  // namespace fencecheck
