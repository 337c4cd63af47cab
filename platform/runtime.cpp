// What every runtime shares (runtime.h, runtime_base.h): the node table, process start-up
// and readiness waits, and the default answers of Runtime.
#include <fstream>
#include <mutex>
#include <regex>
#include <set>

#include "platform/os_util.h"
#include "platform/run_state.h"
#include "platform/runtime_base.h"
#include "platform/tcp.h"

namespace fencecheck {

const Node& NodeTableRuntime::node(std::string_view name) const {
  for (const auto& n : nodes_) {
    if (n.name == name) return n;
  }
  std::string known;
  for (const auto& n : nodes_) known += (known.empty() ? "" : ", ") + n.name;
  throw HarnessError("unknown node '" + std::string(name) + "' (nodes: " + known + ")");
}

Grudge complete_grudge(const std::vector<std::vector<std::string>>& components) {
  Grudge g;
  for (std::size_t a = 0; a < components.size(); ++a) {
    for (const auto& node : components[a]) {
      auto& drops = g[node];
      for (std::size_t b = 0; b < components.size(); ++b) {
        if (b != a) drops.insert(components[b].begin(), components[b].end());
      }
    }
  }
  return g;
}

void NodeTableRuntime::set_spec_decorator(SpecDecorator decorator) {
  std::lock_guard lock(mu_);
  decorator_ = std::move(decorator);
}

Supervisor& NodeTableRuntime::supervisor() {
  std::lock_guard lock(mu_);
  if (!supervisor_) supervisor_ = std::make_unique<Supervisor>(state_);
  return *supervisor_;
}

Process& NodeTableRuntime::spawn(ProcessSpec spec) {
  SpecDecorator decorate;
  {
    std::lock_guard lock(mu_);
    decorate = decorator_;
  }
  if (decorate) decorate(spec);
  return start(std::move(spec));
}

Process& NodeTableRuntime::start(ProcessSpec spec) { return supervise(spec, entry(node(spec.node))); }

Process& NodeTableRuntime::supervise(const ProcessSpec& spec, const NodeEntry& how) {
  return supervisor().spawn(spec, how);
}

NodeEntry NodeTableRuntime::entry(const Node&) const { return {}; }

Readiness NodeTableRuntime::await_ready(Process& p, const std::function<bool()>& ready, const Deadline& deadline) {
  CancelCheck interrupted;
  {
    std::lock_guard lock(mu_);
    interrupted = interrupted_;
  }
  return supervisor().await_ready(p, ready, deadline.or_when(interrupted));
}

CancelCheck NodeTableRuntime::interrupt_check() const {
  std::lock_guard lock(mu_);
  CancelCheck check = interrupted_;
  if (!check) return [] { return false; };
  return check;
}

void NodeTableRuntime::set_interrupt_check(CancelCheck check) {
  std::lock_guard lock(mu_);
  interrupted_ = std::move(check);
}

void Runtime::freeze(std::string_view node, const Deadline&) {
  throw HarnessError("the " + std::string(kind()) + " runtime cannot freeze node " + std::string(node) +
                     " (use --runtime docker)");
}
void Runtime::thaw(std::string_view node, const Deadline& deadline) { freeze(node, deadline); }

void Runtime::run_to_end(ProcessSpec spec, std::chrono::milliseconds timeout) {
  Process& p = spawn(std::move(spec));
  p.expect_exit();
  auto ended = [&] { return !p.alive(); };
  Readiness r = Readiness::kReady;
  try {
    r = await_ready(p, ended, Deadline::after(timeout));
  } catch (const HarnessError&) {
    // await_ready throws when the process exits before it is "ready": here, that is the end.
  }
  const ProcessSpec& s = p.spec();
  if (r != Readiness::kReady || p.alive()) {
    p.stop(std::chrono::milliseconds(1000));
    if (r == Readiness::kGaveUp) throw Interrupted(s.name + " on node " + s.node + " was interrupted");
    throw HarnessError(s.name + " on node " + s.node + " did not finish within " + std::to_string(timeout.count()) +
                       " ms; last lines of " + s.log.string() + ":\n" + p.log_tail());
  }
  auto status = p.exit_status();
  std::string how = p.describe_exit();
  p.stop(std::chrono::milliseconds(0));
  if (!status || *status != 0) {
    throw HarnessError(s.name + " on node " + s.node + " " + how + "; last lines of " + s.log.string() + ":\n" +
                       p.log_tail());
  }
}

void Runtime::wait_ready(Process& p, const std::function<bool()>& ready, std::chrono::milliseconds timeout) {
  switch (await_ready(p, ready, Deadline::after(timeout))) {
    case Readiness::kReady:
      return;
    case Readiness::kGaveUp:
      throw Interrupted(p.spec().name + " on node " + p.spec().node + ": the wait for it to be ready was interrupted");
    case Readiness::kTimedOut:
      break;
  }
  throw HarnessError(p.spec().name + " on node " + p.spec().node + " was not ready after " +
                     std::to_string(timeout.count()) + " ms; last lines of " + p.spec().log.string() + ":\n" +
                     p.log_tail());
}

bool NodeTableRuntime::tcp_connects(std::string_view node_name, const std::string& address,
                                    std::uint16_t port, std::chrono::milliseconds timeout) const {
  bool ok = false;
  run_in(node_name, [&] { ok = tcp_connect_within(address, port, timeout); });
  return ok;
}

std::vector<Process*> NodeTableRuntime::processes() const {
  std::lock_guard lock(mu_);
  return supervisor_ ? supervisor_->processes() : std::vector<Process*>{};
}

void NodeTableRuntime::record_scratch(const std::filesystem::path& dir) { state_.add_path(dir); }
void NodeTableRuntime::forget_scratch(const std::filesystem::path& dir) { state_.remove_path(dir); }
void NodeTableRuntime::record_mount(const std::filesystem::path& dir) { state_.add_mount(dir); }
void NodeTableRuntime::forget_mount(const std::filesystem::path& dir) { state_.remove_mount(dir); }

void NodeTableRuntime::stop_all(std::chrono::milliseconds grace) {
  std::unique_lock lock(mu_);
  Supervisor* s = supervisor_.get();
  lock.unlock();
  if (s) s->stop_all(grace);
}

void NodeTableRuntime::stop_processes(const Deadline& deadline) noexcept {
  try {
    stop_all(std::min(std::chrono::milliseconds(2000), deadline.left()));
  } catch (...) {
    // Stopping is best effort here; the RunState's record lets `fencecheck clean` finish.
  }
}

void NodeTableRuntime::check_new_node_names(const std::vector<std::string>& names) const {
  static const std::regex pattern("^[a-z][a-z0-9]{0,15}$");
  if (!nodes_.empty()) throw HarnessError("Runtime::create called twice");
  if (names.empty()) throw HarnessError("Runtime::create: no nodes given");
  if (names.size() > 250) throw HarnessError("Runtime::create: more than 250 nodes");
  std::set<std::string> seen;
  for (const auto& n : names) {
    if (!std::regex_match(n, pattern) || n == "hub") {
      throw HarnessError("bad node name '" + n +
                         "': use a lowercase letter then up to 15 letters or digits, not 'hub'");
    }
    if (!seen.insert(n).second) throw HarnessError("node '" + n + "' named twice");
  }
}

bool Runtime::group_maps(Process& p, const std::filesystem::path& path, const Deadline&) {
  const std::string wanted = path.string();
  for (int pid : os::group_members(p.pid())) {
    std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
    for (std::string line; std::getline(maps, line);) {
      if (line.size() >= wanted.size() && line.compare(line.size() - wanted.size(), wanted.size(), wanted) == 0) {
        return true;
      }
    }
  }
  return false;
}

}  // namespace fencecheck
