// launch_child's start-up handshake when the child dies part-way: a child killed before it
// sends its pid to the controller has not started, and the start must fail naming the
// program and the step. The child is killed by the kernel itself: a seccomp filter of the
// test's forked process kills whichever thread calls setpgid, which the child does just
// before it sends its pid (and the controller only after receiving it).
#include "platform/launch.h"

#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "platform/os_util.h"
#include "platform/run_state.h"
#include "platform/runtime.h"
#include "tests/runtime/test_util.h"

namespace fencecheck {
namespace {

// From now on, a thread of this process (or a child it starts) that calls setpgid dies.
void kill_on_setpgid() {
  sock_filter code[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_setpgid, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_THREAD),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  sock_fprog prog{static_cast<unsigned short>(sizeof code / sizeof code[0]), code};
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
    throw HarnessError("seccomp: " + os::strerror_string(errno));
  }
}

TEST(LaunchChild, AChildKilledBeforeItSendsItsPidHasNotStarted) {
  testing::TempDir tmp;
  const auto outcome = tmp.path() / "outcome";
  // In a forked process, so that the filter never reaches the test runner.
  pid_t pid = testing::fork_child([&] {
    RunState state(RunState::new_run_id());
    kill_on_setpgid();
    std::string said;
    try {
      int child = launch_child({"n1", "sleeper", {"sleep", "30"}, {}, tmp.path() / "sleeper.log", {}, {}}, {}, state);
      said = "started as " + std::to_string(child);
      ::kill(child, SIGKILL);
    } catch (const HarnessError& e) {
      said = e.what();
    }
    os::write_sync_close(::open(outcome.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644), said, outcome.string(), false);
  });
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the forked test process: status " << status;
  const std::string said = testing::read_text(outcome);
  EXPECT_NE(said.find("cannot start sleeper on node n1"), std::string::npos) << said;
  EXPECT_NE(said.find("/sleep`"), std::string::npos) << said;
  EXPECT_NE(said.find("before it sent its pid"), std::string::npos) << said;
  EXPECT_NE(said.find("SIGSYS"), std::string::npos) << said;
}

}  // namespace
}  // namespace fencecheck
