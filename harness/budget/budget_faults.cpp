#include "harness/budget/budget_faults.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "backends/registry.h"
#include "platform/atomic_file.h"
#include "platform/json_text.h"
#include "platform/named_registry.h"

namespace fencecheck {
namespace {

using nlohmann::json;

// The step every probe starts with: the first grant, whoever gets it.
json on_first_grant(json action) {
  json step = {{"on", "acquire-ok"}, {"client", "holder"}};
  step.update(action);
  return json::array({step});
}

json nodes_to(const std::vector<std::string>& nodes, std::int64_t x) {
  json o = json::object();
  for (const auto& n : nodes) o[n] = x;
  return o;
}

// The violation of a fault that lasts x comes as it ends (the holder resumes and writes):
// x, and two seconds for the writes and checks of the others.
std::int64_t while_it_lasts(std::int64_t x, std::int64_t) { return x + 2000; }
// A fault that takes the lock from a holder within its lease shows while that lease lasts.
std::int64_t within_the_lease(std::int64_t, std::int64_t lease) { return lease + 2000; }

// How long a holder that works through a fault goes on after it (Hold::kThroughTheFault).
constexpr std::int64_t kWorksPastTheFault = 200;

}  // namespace

const std::vector<BudgetFault>& budget_faults() {
  static const std::vector<BudgetFault> faults = {
      {.name = "pause-holder",
       .magnitude = "pause",
       .description = "the first holder is stopped (SIGSTOP) right after its grant for X ms, then goes on: a GC pause",
       .breaks = BreaksWhere::kAbove,
       .plan = [](std::int64_t x, const ProbeNodes&) {
         return on_first_grant({{"do", "pause"}, {"node", "holder"}, {"for_ms", x}});
       },
       .length_ms = while_it_lasts,
       .took_effect = "pause"},
      {.name = "pause-after-send",
       .magnitude = "pause",
       .description = "the first acquire's lock library stops its own thread for X ms right after it sent the lock "
                      "commands, before it reads a reply (adapters that can)",
       .breaks = BreaksWhere::kAbove,
       .plan = [](std::int64_t x, const ProbeNodes&) {
         return json::array({{{"at_ms", 0}, {"do", "replay"}, {"f", "arm"},
                              {"value", {{"fault", "pause-after-send"}, {"ms", std::max<std::int64_t>(1, x)}}}}});
       },
       .length_ms = while_it_lasts,
       .took_effect = "pause"},
      {.name = "partition-holder",
       .magnitude = "cut",
       .description = "the first holder is cut off from every server (not from the resource) right after its grant, "
                      "for X ms; it holds for X + 200 ms, working through the cut",
       .breaks = BreaksWhere::kAbove,
       .plan = [](std::int64_t x, const ProbeNodes& n) {
         return on_first_grant({{"do", "cut"}, {"grudge", {{"holder", n.servers}}}, {"for_ms", x}});
       },
       .hold = BudgetFault::Hold::kThroughTheFault,
       .length_ms = while_it_lasts,
       .took_effect = "partition"},
      {.name = "clock-bump-server",
       .magnitude = "forward clock jump",
       .description = "the first server's wall clock jumps X ms forward right after the first grant; the holder uses "
                      "up to 4/5 of its lease",
       .breaks = BreaksWhere::kAbove,
       .plan = [](std::int64_t x, const ProbeNodes& n) {
         return on_first_grant({{"do", "clock"}, {"offsets", nodes_to({n.servers.front()}, x)}});
       },
       .hold = BudgetFault::Hold::kMostOfLease,
       .length_ms = within_the_lease,
       .took_effect = "clock-bump"},
      {.name = "clock-bump-clients",
       .magnitude = "forward clock jump",
       .description = "every client's wall clock jumps X ms forward right after the first grant; the holder holds "
                      "for up to 4/5 of its lease",
       .breaks = BreaksWhere::kAbove,
       .plan = [](std::int64_t x, const ProbeNodes& n) {
         return on_first_grant({{"do", "clock"}, {"offsets", nodes_to(n.clients, x)}});
       },
       .hold = BudgetFault::Hold::kMostOfLease,
       .length_ms = within_the_lease,
       .took_effect = "clock-bump"},
      {.name = "kill-server",
       .magnitude = "restart delay",
       .description = "every server is killed (SIGKILL: what it had not written down is lost) right after the first "
                      "grant and started again X ms later; the holder holds for up to 4/5 of its lease",
       .breaks = BreaksWhere::kBelow,
       .plan = [](std::int64_t x, const ProbeNodes& n) {
         // At least 1 ms: a kill with no delay brings its nodes back on the thread that applied
         // it, here the holder's, which would pause the holder for the whole restart.
         return on_first_grant({{"do", "kill"}, {"nodes", n.servers}, {"for_ms", std::max<std::int64_t>(1, x)}});
       },
       .hold = BudgetFault::Hold::kMostOfLease,
       .length_ms = [](std::int64_t x, std::int64_t lease) { return x + lease + 2000; },
       .kills_every_server = true,
       .took_effect = "kill"},
  };
  return faults;
}

const BudgetFault* find_budget_fault(std::string_view name) { return find_by_name(budget_faults(), name); }

std::string budget_fault_names() { return names_of(budget_faults()); }

std::int64_t lease_ms(const RunConfig& c) {
  const BackendInfo* b = find_backend(c.backend);
  const std::int64_t ttl = c.opts.integer("ttl-ms");
  return b != nullptr && b->lease_ms ? b->lease_ms(c.backend_options, ttl) : ttl;
}

ProbeNodes probe_nodes(const RunConfig& c) {
  auto [servers, clients] = plan_nodes(c);
  return {servers, clients};
}

RunConfig probe_config(const RunConfig& base, const BudgetFault& fault, std::int64_t x, const std::string& plan_file) {
  RunConfig c = base;
  const std::int64_t lease = lease_ms(base);
  write_file_atomically(plan_file, dump_json(fault.plan(x, probe_nodes(base)), 2) + "\n");
  c.plan = plan_file;
  c.nemesis.clear();
  c.replay.clear();
  // The first grant comes within a second of the start; the checks need a second after.
  const double length_s = static_cast<double>(1000 + fault.length_ms(x, lease) + 1000) / 1000;
  c.opts.set("time-limit", length_s);
  // A pause shorter than the test, and op deadlines derived from it that outlast it.
  c.opts.set("pause-ms", std::clamp<std::int64_t>(x, 1, static_cast<std::int64_t>(length_s * 1000) - 1));
  const std::int64_t op_timeout = std::max(c.opts.integer("op-timeout-ms"), c.opts.integer("pause-ms") + 2000);
  c.opts.set("op-timeout-ms", op_timeout);
  c.opts.set("stall-ms", std::max(c.opts.integer("stall-ms"), 2 * op_timeout));
  switch (fault.hold) {
    case BudgetFault::Hold::kAsGiven:
      break;
    case BudgetFault::Hold::kMostOfLease:
      c.opts.set("hold-ms", lease * 4 / 5);
      c.opts.set("hold-min-ms", lease * 4 / 5);
      break;
    case BudgetFault::Hold::kThroughTheFault:
      c.opts.set("hold-ms", x + kWorksPastTheFault);
      c.opts.set("hold-min-ms", x + kWorksPastTheFault);
      break;
  }
  c.name = base.name.empty() ? base.backend + "-budget-" + fault.name : base.name;
  c.resolve();
  return c;
}

bool fault_took_effect(const BudgetFault& fault, const std::filesystem::path& run_dir) {
  std::ifstream in(run_dir / "history.jsonl");
  for (std::string line; std::getline(in, line);) {
    if (line.find("\"nemesis\"") == std::string::npos) continue;  // most lines are the clients'
    const json j = json::parse(line, nullptr, false);
    if (!j.is_object() || j.value("process", json()) != "nemesis" || j.value("f", json()) != fault.took_effect) continue;
    const json& v = j.contains("value") ? j["value"] : json();
    if (v.is_object() && !v.contains("not_applied") && !v.contains("not_cut")) return true;
  }
  return false;
}

std::optional<std::string> budget_fault_problem(const RunConfig& base, const BudgetFault& fault, std::int64_t x) {
  const std::filesystem::path scratch = std::filesystem::temp_directory_path() /
                                        ("fc-budget-" + std::to_string(::getpid()) + "-" + fault.name + ".json");
  std::optional<std::string> why;
  try {
    why = probe_config(base, fault, x, scratch.string()).problem();
  } catch (const std::exception& e) {
    why = e.what();
  }
  std::error_code ignored;
  std::filesystem::remove(scratch, ignored);
  return why;
}

}  // namespace fencecheck
