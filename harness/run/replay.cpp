#include "harness/run/replay.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>

#include "checkers/history_reader.h"
#include "nemesis/replay_check.h"
#include "platform/errors.h"

namespace fencecheck {

namespace fs = std::filesystem;

RunConfig replayed_config(const RunConfig& given) {
  fs::path file = fs::path(given.replay) / "config.json";
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) {
    throw HarnessError("cannot read " + file.string() + ": is " + given.replay + " a run directory?");
  }
  std::ifstream in(file);
  if (!in) throw HarnessError("cannot read " + file.string() + ": is " + given.replay + " a run directory?");
  nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded()) throw InputError(file.string(), 0, "", "not JSON");
  RunConfig c = RunConfig::from_json(j, file.string());
  c.replay = fs::absolute(given.replay).string();
  c.plan.clear();  // the stored run's lines are what it applies again, however they came
  c.store = given.store;
  if (!given.name.empty()) c.name = given.name;
  c.junit = given.junit;
  return c;
}

std::string replay_history_path(const std::string& run_dir) {
  return (fs::path(run_dir) / "history.jsonl").string();
}

std::vector<ReplayLine> read_replay_lines(const std::string& run_dir) {
  struct Recorded {
    std::int64_t time;
    ReplayLine line;
  };
  const std::string file = replay_history_path(run_dir);
  std::vector<Recorded> recorded;
  std::optional<std::int64_t> test_start;
  HistoryReader reader(file);
  Event e;
  while (reader.next(e)) {
    if (!e.is_nemesis()) {
      if (!test_start) test_start = e.time;
      continue;
    }
    nlohmann::json value = nlohmann::json::parse(e.value, nullptr, false);
    if (!value.is_object() || !value.contains("fault") || !value["fault"].is_string()) {
      throw InputError(file, e.line, "value.fault", "a nemesis line to replay must name its fault");
    }
    if (value.contains("not_applied")) continue;  // it changed nothing
    // Due when the stored run meant it to happen, which is when its action began: the
    // line was recorded once the action had taken effect (a cut: up to a few hundred ms).
    std::int64_t due = e.time;
    if (const auto& planned = value.value("planned_ns", nlohmann::json()); planned.is_number_integer()) {
      due = std::min(due, planned.get<std::int64_t>());
    }
    value.erase("planned_ns");  // the replaying run plans its own
    recorded.push_back({due, ReplayLine{{}, e.f_name, std::move(value), e.line}});
  }
  std::vector<ReplayLine> lines;
  for (auto& r : recorded) {
    std::int64_t after = std::max<std::int64_t>(0, r.time - test_start.value_or(0));
    r.line.after = std::chrono::nanoseconds(after);
    lines.push_back(std::move(r.line));
  }
  return lines;
}

std::vector<ReplayLine> load_replay(const RunConfig& c, const std::vector<std::string>& servers,
                                    const std::vector<std::string>& clients, const FaultOptions& options) {
  std::vector<ReplayLine> lines = read_replay_lines(c.replay);
  check_replay(c.nemesis, lines, servers, clients, options, replay_history_path(c.replay));
  return lines;
}

FaultSource load_fault_source(const RunConfig& c, const std::vector<std::string>& servers,
                              const std::vector<std::string>& clients, const FaultOptions& options) {
  FaultSource source;
  if (!c.replay.empty()) source.replay = load_replay(c, servers, clients, options);
  if (!c.plan.empty()) source.plan = read_plan(c.plan, servers, clients);
  return source;
}

std::unique_ptr<NemesisSchedule> FaultSource::make_schedule(const RunConfig& c, NemesisContext& ctx,
                                                            const FaultOptions& options) {
  if (plan) {
    auto schedule = std::make_unique<NemesisSchedule>(std::move(*plan), ctx, options);
    plan.reset();
    return schedule;
  }
  if (!c.replay.empty()) return std::make_unique<NemesisSchedule>(c.nemesis, std::move(replay), ctx, options);
  return std::make_unique<NemesisSchedule>(c.nemesis, c.opts.ms("nemesis-interval"), *c.seed, ctx, options);
}

std::chrono::nanoseconds FaultSource::must_last() const {
  if (replay.empty()) return std::chrono::nanoseconds(0);
  TimeSource::Duration last(0);  // planned instants need not come in file order
  for (const ReplayLine& l : replay) last = std::max(last, l.after);
  return last + std::chrono::milliseconds(100);
}

void FaultSource::note_progress(const NemesisSchedule& schedule, nlohmann::json& health) {
  auto progress = schedule.plan_progress();
  if (!progress) return;
  const auto [fired, steps] = *progress;
  health["plan"] = {{"steps", steps}, {"fired", fired}};
  if (fired < steps) {
    std::string waits;
    for (const auto& d : schedule.describe_active()) waits += d.rfind("plan: ", 0) == 0 ? d.substr(6) : "";
    if (!health.contains("warnings")) health["warnings"] = nlohmann::json::array();
    health["warnings"].push_back("the plan ended unfinished: " + std::to_string(fired) + " of " +
                                 std::to_string(steps) + " steps fired (" + waits + ")");
  }
}

std::string FaultSource::option_of(const RunConfig& c) {
  return !c.replay.empty() ? "--replay: " : !c.plan.empty() ? "--plan: " : "";
}

}  // namespace fencecheck
