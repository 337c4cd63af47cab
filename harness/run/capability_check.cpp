#include "harness/run/capability_check.h"

#include <algorithm>

#include "adapters/registry.h"
#include "backends/registry.h"
#include "nemesis/fault_registry.h"
#include "nemesis/targets.h"
#include "platform/runtime_registry.h"

namespace fencecheck {
namespace {

// "a", "a or b", "a, b or c" (or "and"); in the order given.
std::string join_words(const std::vector<std::string>& words, const char* last) {
  std::string out;
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (i > 0) out += i + 1 == words.size() ? std::string(" ") + last + " " : ", ";
    out += words[i];
  }
  return out;
}

// One provider as the check sees it.
struct Offer {
  std::string name;  // "local", "etcd", "native"
  Capabilities offers;
  std::vector<CapabilityReason> reasons;
};

// Every provider of kind p, from its registry.
std::vector<Offer> providers_of(Provider p) {
  std::vector<Offer> out;
  switch (p) {
    case Provider::kRuntime:
      for (const RuntimeInfo& r : runtime_registry()) out.push_back({r.name, r.offers, r.reasons});
      break;
    case Provider::kBackend:
      for (const BackendInfo& b : backend_registry()) out.push_back({b.name, b.offers, b.reasons});
      break;
    case Provider::kClient:
      for (const std::string& c : client_names()) out.push_back({c, client_offers(c), {}});
      break;
  }
  return out;
}

// The run's provider of kind p; nullopt when the run leaves it open.
std::optional<Offer> chosen(Provider p, const RunProviders& run) {
  switch (p) {
    case Provider::kRuntime:
      if (run.runtime == nullptr) return std::nullopt;
      return Offer{run.runtime->name, run.runtime->offers, run.runtime->reasons};
    case Provider::kBackend:
      if (run.backend == nullptr) return std::nullopt;
      if (run.backend_options != nullptr) {
        return Offer{run.backend->name, backend_offers(*run.backend, *run.backend_options),
                     backend_reasons(*run.backend, *run.backend_options)};
      }
      return Offer{run.backend->name, run.backend->offers, run.backend->reasons};
    case Provider::kClient:
      if (!run.client) return std::nullopt;
      return Offer{*run.client, client_offers(*run.client), {}};
  }
  return std::nullopt;
}

// The other providers of c's kind that offer every need of that kind, else those that
// offer c; by name.
std::vector<std::string> who_offers(Capability c, const Capabilities& needs, const std::string& lacking) {
  const Provider kind = capability_info(c).provider;
  const Capabilities wanted = needs.of(kind);
  std::vector<std::string> all, some;
  for (const Offer& o : providers_of(kind)) {
    if (o.name == lacking) continue;
    if ((wanted - o.offers).empty()) all.push_back(o.name);
    if (o.offers.has(c)) some.push_back(o.name);
  }
  std::vector<std::string> out = all.empty() ? some : all;
  std::sort(out.begin(), out.end());
  return out;
}

std::string refusal(const CapabilityNeeds& n, Capability c, const Offer& lacking) {
  const CapabilityInfo& info = capability_info(c);
  std::string s = (n.who.empty() ? "" : n.who + " ") + "needs a " + std::string(provider_info(info.provider).noun) + " that " +
                  std::string(info.phrase);
  if (auto why = reason_for(n.reasons, c); !why.empty()) s += " (" + std::string(why) + ")";
  s += ", which " + std::string(provider_info(info.provider).option) + " " + lacking.name + " cannot";
  if (auto why = reason_for(lacking.reasons, c); !why.empty()) s += " (" + std::string(why) + ")";
  std::vector<std::string> ways;
  if (auto names = who_offers(c, n.needs, lacking.name); !names.empty()) {
    ways.push_back(std::string(provider_info(info.provider).option) + " " + join_words(names, "or"));
  }
  if (n.instead && !n.instead->has(c)) ways.push_back(n.instead_how);
  for (std::size_t i = 0; i < ways.size(); ++i) s += (i == 0 ? ": use " : ", or ") + ways[i];
  return s;
}

}  // namespace

CapabilityNeeds fault_needs(const FaultInfo& fault, bool aimed_at_clients) {
  CapabilityNeeds n{.who = "fault \"" + fault.name + "\"", .needs = fault.needs};
  if (!fault.needs_aimed_at_clients) return n;
  if (aimed_at_clients) {
    n.needs = *fault.needs_aimed_at_clients;
  } else {
    n.instead = fault.needs_aimed_at_clients;
    n.instead_how = std::string("--nemesis-targets ") + kClientTargets + " to aim it at the clients instead";
  }
  return n;
}

CapabilityNeeds backend_needs(const BackendInfo& backend) {
  return {.who = "backend " + backend.name, .needs = backend.needs, .reasons = backend.reasons};
}

CapabilityNeeds client_needs(const std::string& client) {
  const AdapterInfo* a = find_adapter(client);
  return {.who = "--client " + client, .needs = a == nullptr ? Capabilities{} : a->needs};
}

std::optional<std::string> missing_capability(const CapabilityNeeds& needs, const RunProviders& run) {
  for (Capability c : needs.needs.list()) {
    std::optional<Offer> provider = chosen(capability_info(c).provider, run);
    if (provider && !provider->offers.has(c)) return refusal(needs, c, *provider);
  }
  return std::nullopt;
}

std::map<std::string, std::string> faults_unavailable_under(const RuntimeInfo& rt, bool aimed_at_clients) {
  std::map<std::string, std::string> out;
  for (const FaultInfo& f : fault_registry()) {
    CapabilityNeeds needs = fault_needs(f, aimed_at_clients);
    needs.who.clear();  // the map names the fault: "needs a runtime that …", alike for alike faults
    if (auto why = missing_capability(needs, {.runtime = &rt})) out[f.name] = *why;
  }
  return out;
}

std::string faults_available_under(const RuntimeInfo& rt) {
  std::vector<std::string> can, aimed;
  for (const FaultInfo& f : fault_registry()) {
    if (!missing_capability(fault_needs(f, false), {.runtime = &rt})) {
      can.push_back(f.name);
    } else if (!missing_capability(fault_needs(f, true), {.runtime = &rt})) {
      aimed.push_back(f.name);
    }
  }
  auto list = [](const std::vector<std::string>& names) {
    std::string out;
    for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
    return out;
  };
  std::string out = list(can);
  if (!aimed.empty()) out += std::string("; with --nemesis-targets ") + kClientTargets + ": " + list(aimed);
  return out;
}

std::string faults_aimed_by_client_targets() {
  std::vector<std::string> names;
  for (const FaultInfo& f : fault_registry()) {
    if (f.targets_clients) names.push_back(f.name);
  }
  return join_words(names, "and");
}

}  // namespace fencecheck
