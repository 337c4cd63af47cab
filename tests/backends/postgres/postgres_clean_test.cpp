// A controller SIGKILLed in the middle of a PostgreSQL run, then `fencecheck clean`: no
// process of the run, no SysV segment and no /dev/shm file of its server may be left.
// Before the server got its own IPC namespace, every such run left PostgreSQL's interlock
// segment and one or two /dev/shm/PostgreSQL.* files behind.
//
// What is the run's is read off the run itself while it is going: its processes (the
// controller's descendants, with their start times), the shared memory they have mapped
// (/proc/<pid>/maps), and the interlock key the postmaster wrote into postmaster.pid.
// Root only: without root the server cannot have its own IPC namespace (see
// postgres_server.h).
#include <unistd.h>

#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "tests/integration/run_fixture.h"
#include "tests/integration/run_processes.h"

namespace fencecheck::testing {
namespace {

// Shared memory a process has mapped: /dev/shm files and SysV segments ("/SYSV<key hex>").
void add_shared_mappings(int pid, std::set<std::string>& shm_files, std::set<std::string>& sysv) {
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  for (std::string line; std::getline(maps, line);) {
    auto at = line.find('/');
    if (at == std::string::npos) continue;
    std::string path = line.substr(at);
    if (auto d = path.find(" (deleted)"); d != std::string::npos) path.resize(d);
    if (path.rfind("/dev/shm/", 0) == 0) shm_files.insert(path);
    if (path.rfind("/SYSV", 0) == 0) sysv.insert(path.substr(5));
  }
}

struct SysvSegment {
  long long key = 0;
  int shmid = 0, cpid = 0;
};

std::vector<SysvSegment> host_segments() {
  std::ifstream in("/proc/sysvipc/shm");
  std::vector<SysvSegment> out;
  std::string header;
  std::getline(in, header);
  for (std::string line; std::getline(in, line);) {
    std::istringstream f(line);
    SysvSegment s;
    std::string perms, size;
    f >> s.key >> s.shmid >> perms >> size >> s.cpid;
    out.push_back(s);
  }
  return out;
}

// The interlock key of a running postmaster: line 7 of postmaster.pid, "key shmid".
std::optional<long long> interlock_key(const fs::path& run_dir) {
  std::ifstream in(run_dir / "nodes" / "n1" / "data" / "postmaster.pid");
  std::string line;
  for (int i = 0; i < 7 && std::getline(in, line); ++i) {
  }
  std::istringstream f(line);
  long long key = 0;
  if (f >> key && key != 0) return key;
  return std::nullopt;
}

class PostgresCleanTest : public RunTest {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "the server's own IPC namespace needs root";
    if (::system("test -x /usr/lib/postgresql/15/bin/postgres || command -v postgres >/dev/null") != 0) {
      if (std::getenv("CI") != nullptr) FAIL() << "postgres is not installed (CI must run scripts/setup.sh)";
      GTEST_SKIP() << "postgres is not installed (scripts/setup.sh installs it)";
    }
    RunTest::SetUp();
  }
};

TEST_F(PostgresCleanTest, ControllerKilledThenCleanLeavesNoSharedMemory) {
  pid_t controller = spawn_run({"--backend", "postgres", "--time-limit", "30"});
  ASSERT_TRUE(wait_for_history("\"ok\"", 20)) << "the run never got going:\n" << controller_log();

  // Watch the run for a while, so that segments made on the way (parallel workers, the
  // statistics area) are seen too.
  std::map<int, std::string> processes;
  std::set<std::string> shm_files, sysv_keys;
  std::set<int> postgres_pids;
  for (int i = 0; i < 15; ++i) {
    for (const auto& [pid, start] : descendants(controller)) {
      processes[pid] = start;
      if (comm(pid).rfind("postgres", 0) == 0) {
        postgres_pids.insert(pid);
        add_shared_mappings(pid, shm_files, sysv_keys);
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  std::optional<long long> key = interlock_key(run_dir());
  std::optional<std::string> run_id = run_id_of_controller(controller);
  ASSERT_FALSE(postgres_pids.empty()) << "no postgres process under the controller";
  ASSERT_TRUE(key.has_value()) << "no interlock key in " << run_dir() / "nodes/n1/data/postmaster.pid";
  ASSERT_FALSE(sysv_keys.empty()) << "the server mapped no SysV segment: is this PostgreSQL?";
  ASSERT_TRUE(run_id.has_value()) << "no state file for the run";

  kill_controller_then_clean(controller, *run_id, FENCECHECK_BIN, processes);
  for (const auto& s : host_segments()) {
    EXPECT_NE(s.key, *key) << "PostgreSQL's interlock segment (shmid " << s.shmid << ") survived clean";
    EXPECT_EQ(postgres_pids.count(s.cpid), 0u)
        << "SysV segment " << s.shmid << " made by the run's postgres " << s.cpid << " survived clean";
  }
  for (const auto& f : shm_files) EXPECT_FALSE(fs::exists(f)) << f << " survived clean";
}

}  // namespace
}  // namespace fencecheck::testing
