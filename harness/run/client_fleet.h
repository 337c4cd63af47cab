// ClientFleet: the run's client sessions (one WorkerSession per client node) and the threads
// that run the workload on them, Jepsen's concurrent clients. It routes the workers' notices
// to the sessions while they exist (the workers' notice threads outlive them), runs one
// thread per client, and does the final reads once the test phase is over.
//
// Threads: start() makes one thread per client; join() waits for them all (bounded by the
// ops in flight, each by its op timeout) and rethrows the first exception a client thread
// threw (the history could not be written). any_running() may be called from any thread.
// Ownership: the SessionShared, WorkerPool and Workload must outlive the fleet; the
// destructor stops routing notices (and joins, if join() was not called).
#pragma once

#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "harness/run/client_session.h"
#include "workloads/workload.h"

namespace fencecheck {

class ClientFleet {
 public:
  // One session per node of `clients` (process i for clients[i], seeded seed + 1 + i).
  ClientFleet(SessionShared& shared, const std::vector<std::string>& clients, std::uint64_t seed);
  ~ClientFleet();
  ClientFleet(const ClientFleet&) = delete;
  ClientFleet& operator=(const ClientFleet&) = delete;

  // Runs workload.run_client on every session, each on its own thread.
  void start(Workload& workload);
  // True while some session still runs (not stopped, the test not over).
  bool any_running() const;
  // Joins every client thread; rethrows the first failure of one.
  void join();
  // The first client whose worker still answers reads each key (the clients' own sessions:
  // they ignore the end of the test phase for an op already asked for). give_up, asked
  // before each read, ends it early (a second Ctrl-C).
  void final_reads(const std::vector<std::string>& keys, const std::function<bool()>& give_up);

 private:
  struct Directory;  // node → session, for the notices; shared with the workers' sink
  SessionShared& shared_;
  std::vector<std::unique_ptr<WorkerSession>> sessions_;
  std::shared_ptr<Directory> directory_;
  std::vector<std::thread> threads_;
  std::mutex failure_mu_;
  std::exception_ptr failure_;
};

}  // namespace fencecheck
