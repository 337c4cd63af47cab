// The worker's end of the op channel (harness/control/op_channel.h): listens on the op
// socket and serves each connection on a thread of its own, one op at a time, so a new op
// on a fresh connection is served while an older one is still stuck in the lock client.
//
// The socket is created with mode 0600; a stale socket file at the path is replaced, and
// the file is removed by the destructor. A connection's thread waits for its next op in a
// blocking read. stop() is thread-safe and returns at once: it shuts every connection
// down, which ends those reads. The destructor stops, then joins every thread: a thread
// inside an op first finishes it (bounded by the op's own timeouts in WorkerOps).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "proto/worker.pb.h"

namespace fencecheck {

class OpListener {
 public:
  using Handler = std::function<proto::InvokeReply(const proto::InvokeRequest&)>;
  // Binds and listens on path, and starts accepting. Throws HarnessError if it cannot.
  OpListener(const std::string& path, Handler handler);
  ~OpListener();
  OpListener(const OpListener&) = delete;
  OpListener& operator=(const OpListener&) = delete;

  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fencecheck
