// RunConfig: every option of `fencecheck run`, resolved. problem() checks it completely
// before anything starts, so that a bad option never leaves half a run behind; to_json()
// is config.json and from_json() reads it back (--replay); repro_args() is the command
// line that reruns the same test (seed included).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace fencecheck {

struct RunConfig {
  std::string backend = "redis";
  std::vector<std::string> backend_opts;  // "key=value" as typed (--backend-opt)
  std::map<std::string, std::string> backend_options;  // resolved: every option, defaults in
  std::string workload = "lock-append";
  std::vector<std::string> nemesis = {"pause-holder"};  // fault names; empty: none
  std::string resource = "unfenced";                   // fenced | unfenced
  std::string runtime;                                 // netns | local; empty: by privilege
  int concurrency = 5;
  int keys = 1;
  std::int64_t hold_ms = 100;
  std::int64_t ttl_ms = 1000;
  std::int64_t pause_ms = 3000;
  std::int64_t nemesis_interval_ms = 5000;
  std::int64_t restart_ms = 0;        // kill-server/kill-client: down this long (0: restart at once)
  std::int64_t clock_max_ms = 30000;  // largest wall-clock offset a clock fault sets
  std::int64_t clock_min_ms = 0;      // smallest magnitude of a clock-bump
  std::string nemesis_targets;        // servers kill-server / clock faults hit; empty: drawn
  std::int64_t op_timeout_ms = 0;  // 0: max(5000, pause + 2000), so a paused client resumes in time
  double time_limit_s = 30;
  std::uint64_t max_info = 1000;  // ops of unknown outcome one client may have before it stops
  std::int64_t stall_ms = 0;      // 0: max(10000, 2 × op timeout); no ok op this long → unknown
  std::optional<std::uint64_t> seed;  // empty: drawn at random, then recorded
  std::string store = "results";
  std::string name;  // empty: "<backend>-<workload>-<faults>-<resource>"
  std::string replay;  // a run directory whose recorded faults this run applies again
  std::string junit;   // also write JUnit XML here (an output, not part of the test: not in config.json)
  bool clocks_available = false;  // resolve(): the clock-offset library is beside the binary

  // Fills in the defaults that depend on other options or on the machine. Backend options
  // that do not resolve are left for problem() to report.
  void resolve();
  // The first problem found, as one message that says what to do; nullopt when runnable.
  std::optional<std::string> problem() const;
  nlohmann::json to_json() const;
  // The configuration of a stored run (its config.json), for --replay. Throws InputError
  // naming the file and the field when it is missing or mistyped.
  static RunConfig from_json(const nlohmann::json& j, const std::string& file);
  std::vector<std::string> repro_args() const;  // after "fencecheck run"
};

}  // namespace fencecheck
