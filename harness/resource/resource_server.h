// The fenced resource as a gRPC service (proto/resource.proto) over TCP, and the
// `fencecheck resource` subcommand that runs it.
//
// ResourceServer serves a FencedStore it does not own (the store must outlive it) on
// gRPC's thread pool. shutdown() is thread-safe and idempotent; the destructor calls it.
// A call the store cannot log (FencedStore throws) is answered INTERNAL — the worker takes
// that as an unknown outcome — and reported to on_failure, on the gRPC thread.
//
// `fencecheck resource` exits 0 after SIGTERM/SIGINT. When its log fails it stops serving
// at once and exits 3 with "fencecheck: cannot write <log>: <reason>" on stderr: the
// controller sees the resource die unprompted, so the run cannot end `valid`.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "harness/resource/fenced_store.h"

namespace fencecheck {

class ResourceServer {
 public:
  // listen: "host:port"; port 0 picks a free port (see port()). Throws HarnessError if the
  // address cannot be bound.
  ResourceServer(FencedStore& store, const std::string& listen,
                 std::function<void(const std::string&)> on_failure = {});
  ~ResourceServer();
  ResourceServer(const ResourceServer&) = delete;
  ResourceServer& operator=(const ResourceServer&) = delete;

  int port() const;
  // Blocks until shutdown() has completed.
  void wait();
  // Stops accepting calls and waits up to a second for calls in flight.
  void shutdown();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Registers `resource`: --listen HOST:PORT, --mode fenced|unfenced, --log FILE,
// --t0-ns N (CLOCK_MONOTONIC of the test start; logged times are ns since then).
// Its callback serves until SIGTERM or SIGINT, then returns; errors (the log cannot be
// opened, written or closed) throw HarnessError.
void add_resource_command(CLI::App& app);

}  // namespace fencecheck
