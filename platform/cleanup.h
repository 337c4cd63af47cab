// Removal of recorded resources, shared by clean_runs, ~RunState and NetnsRuntime.
// Internal to platform/.
#pragma once

#include <cstdint>
#include <functional>
#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "platform/run_state.h"

namespace fencecheck::cleanup {

// SIGKILLs the process group pgid if it is still the one recorded: its leader is alive
// with that start time, or the leader is gone and members remain (orphaned grandchildren;
// the kernel does not reuse a pid while it still names a group). Waits up to 2 s for the
// members to go. True if something was killed.
bool kill_group_if_ours(int pgid, std::optional<std::uint64_t> leader_start_time);

// Deletes /run/netns/<name> with `ip netns del`. False if it did not exist, or stopped
// existing meanwhile (someone else deleted it). Throws HarnessError if it is still there.
bool delete_netns(const std::string& name);
// Removes path recursively. False if it did not exist. Entries that vanish meanwhile (the
// run removing its own files) are fine; throws std::filesystem_error if it stays.
bool remove_path(const std::filesystem::path& path);
bool netns_exists(const std::string& name);

// Force-removes every container, then every network, labelled fencecheck.run=<run_id> in
// the dockerd at socket; with run_id empty, those of every run id for which keep_run is
// false. Adds one line per removal to report. Each API call is bounded (30 s). Throws
// HarnessError when the daemon does not answer.
void remove_docker_run(const std::string& socket, const std::string& run_id, CleanReport& report,
                       const std::function<bool(const std::string&)>& keep_run = {});

// Removes every process group, namespace, docker object and path recorded in a state document, adding
// one line per removal (or error) to report. Never throws.
void remove_recorded(const nlohmann::json& doc, CleanReport& report);

}  // namespace fencecheck::cleanup
