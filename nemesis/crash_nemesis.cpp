#include "nemesis/crash_nemesis.h"

#include "nemesis/targets.h"

#include <algorithm>
#include <exception>
#include <functional>
#include <future>
#include <stdexcept>

namespace fencecheck {

using std::chrono::milliseconds;

namespace {

std::string joined(const std::string& head, const std::vector<std::string>& nodes) {
  std::string s = head;
  for (const auto& n : nodes) s += " " + n;
  return s;
}

}  // namespace

NodeProcesses& CrashNemesis::role_of(const std::string& fault) {
  if (fault == "kill-client") return ctx_.clients;
  if (fault == "kill-server" || fault == "restart-server") return ctx_.servers;
  throw std::invalid_argument("the crash family has no fault \"" + fault + "\"");
}

void CrashNemesis::start(const std::string& fault, std::mt19937_64& rng) {
  if (down_) return;
  if (fault == "kill-server") {
    static const char* kSpecs[] = {"one", "minority", "majority", "all"};
    std::string spec = options_.text("nemesis-targets");
    if (spec.empty()) spec = kSpecs[rng() % 4];
    kill(fault, ctx_.servers, pick_targets(ctx_.servers.nodes(), spec, rng), options_.ms("restart-ms"));
  } else if (fault == "kill-client") {
    kill(fault, ctx_.clients, pick_targets(ctx_.clients.nodes(), "one", rng), options_.ms("restart-ms"));
  } else if (fault == "restart-server") {
    restart_server(fault, pick_targets(ctx_.servers.nodes(), "one", rng));
  } else {
    throw std::invalid_argument("CrashNemesis cannot start fault \"" + fault + "\"");
  }
}

void CrashNemesis::kill(const std::string& fault, NodeProcesses& role, const std::vector<std::string>& nodes,
                        milliseconds restart) {
  if (nodes.empty()) return;
  std::vector<std::string> killed;
  auto record = [&] {
    nlohmann::json value = {{"fault", fault}, {"targets", killed}, {"restart_ms", restart.count()}};
    if (killed.empty()) value["not_applied"] = joined("already down:", nodes);
    ctx_.log.record("kill", value);
    if (killed.empty()) return;
    down_ = Down{fault, killed, &role, ctx_.time.now() + restart};
    status_.show({joined(fault, killed)});
  };
  // The targets die together, each kill on its own thread: a majority killed "at once"
  // must not be spread over one kill's latency per node (about 120 ms each over ssh).
  std::vector<std::future<bool>> kills;
  const Deadline deadline = ctx_.act(kSignalBound);
  for (const auto& n : nodes) {
    kills.push_back(std::async(std::launch::async, [&role, &deadline, n] { return role.kill(n, deadline); }));
  }
  std::exception_ptr failure;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    try {
      if (kills[i].get()) killed.push_back(nodes[i]);
    } catch (...) {
      if (!failure) failure = std::current_exception();
    }
  }
  if (failure) {
    if (!killed.empty()) record();  // what did die is down, on the record, and healed later
    std::rethrow_exception(failure);
  }
  record();
  if (down_ && restart.count() == 0) bring_back(true);
}

// Whatever fails part-way, what was done is on the record and no node stays stopped
// unrecorded: every node stopped is launched again (each tried), the "restart" line names
// the nodes stopped and any that failed, and then the first failure is thrown.
void CrashNemesis::restart_server(const std::string& fault, const std::vector<std::string>& nodes) {
  std::vector<std::string> stopped;
  nlohmann::json failed = nlohmann::json::object();
  std::exception_ptr failure;
  auto attempt = [&](const std::string& node, const std::function<void()>& step) {
    try {
      step();
    } catch (const std::exception& e) {
      failed[node] = e.what();
      if (!failure) failure = std::current_exception();
    }
  };
  for (const auto& n : nodes) {
    if (failure) break;  // a stop that failed ends the restart: the rest keep running
    attempt(n, [&] {
      if (ctx_.servers.stop(n, ctx_.act(kStopBound))) stopped.push_back(n);
    });
  }
  nlohmann::json value = {{"fault", fault}, {"targets", nodes}};
  if (stopped.empty() && !failure) {
    value["not_applied"] = joined("already down:", nodes);
    ctx_.log.record("restart", value);
    return;
  }
  std::vector<std::string> started;
  for (const auto& n : stopped) {
    attempt(n, [&] {
      ctx_.servers.launch(n, ctx_.act(kLaunchBound));
      started.push_back(n);
    });
  }
  if (stopped != nodes) value["stopped"] = stopped;
  if (!failed.empty()) value["failed"] = failed;
  ctx_.log.record("restart", value);
  if (failure) std::rethrow_exception(failure);
  await_all(ctx_.servers, fault, started);
}

void CrashNemesis::await_all(NodeProcesses& role, const std::string& fault, const std::vector<std::string>& nodes) {
  status_.show({joined(fault, nodes) + " (starting)"});
  const auto began = ctx_.time.now();
  std::vector<std::string> ready, not_ready;
  for (const auto& n : nodes) {
    // No bound of its own: the role's readiness timeout, or the run's end, ends it.
    (role.await_ready(n, ctx_.wait(std::chrono::hours(1))) == Readiness::kReady ? ready : not_ready).push_back(n);
  }
  nlohmann::json value = {{"fault", fault}, {"targets", ready}};
  if (!not_ready.empty()) value["not_ready"] = not_ready;
  value["waited_ms"] = std::chrono::duration_cast<milliseconds>(ctx_.time.now() - began).count();
  ctx_.log.record("ready", value);
  status_.clear();
}

void CrashNemesis::bring_back(bool wait) {
  if (!down_) return;
  const Down d = *down_;
  down_.reset();
  try {
    for (const auto& n : d.nodes) d.role->launch(n, ctx_.healing(kLaunchBound));  // all first: a quorum forms only then
  } catch (...) {
    status_.clear();
    throw;
  }
  ctx_.log.record("start", {{"fault", d.fault}, {"targets", d.nodes}}, d.until);
  if (wait && !ctx_.ending()) {
    await_all(*d.role, d.fault, d.nodes);
  } else {
    status_.clear();
  }
}

void CrashNemesis::replay(const std::string& f, const nlohmann::json& value) {
  const std::string fault = value.at("fault").get<std::string>();
  NodeProcesses& role = role_of(fault);
  if (f == "kill") {
    bring_back(true);
    kill(fault, role, value.at("targets").get<std::vector<std::string>>(),
         milliseconds(value.at("restart_ms").get<std::int64_t>()));
  } else if (f == "restart") {
    restart_server(fault, value.at("targets").get<std::vector<std::string>>());
  } else if (f != "start" && f != "ready") {  // a kill's start and ready follow by themselves
    throw std::invalid_argument("the crash family cannot replay \"" + f + "\"");
  }
}

void CrashNemesis::tick() {
  if (down_ && ctx_.time.now() >= down_->until) bring_back(true);
}

std::optional<TimeSource::Instant> CrashNemesis::due() const {
  return down_ ? std::optional(down_->until) : std::nullopt;
}

void CrashNemesis::heal() { bring_back(false); }

std::unique_ptr<Nemesis> make_crash_nemesis(NemesisContext& ctx, const FaultOptions& options) {
  return std::make_unique<CrashNemesis>(ctx, options);
}

}  // namespace fencecheck
