// The fixture of the postgres integration tests (tests/backends/server_fixture.h): a real
// PostgreSQL server on n1 under each runtime, clients c1 and c2.
#pragma once

#include <vector>

#include "backends/postgres/process_tree.h"
#include "platform/os_util.h"
#include "tests/backends/server_fixture.h"

namespace fencecheck::testing {

class PostgresTest : public BackendServerTest {
 protected:
  PostgresTest() : BackendServerTest("postgres", {"n1", "c1", "c2"}) {}

  // Every process of the server on n1: the spawned leader and everything below it.
  std::vector<pgproc::ProcId> server_processes() {
    std::vector<pgproc::ProcId> all;
    for (Process* p : server_->processes("n1")) {
      all.push_back({p->pid(), os::process_start_time(p->pid()).value_or(0)});
      for (const auto& child : pgproc::descendants(p->pid())) all.push_back(child);
    }
    return all;
  }
};

}  // namespace fencecheck::testing
