// What a worker does for the controller, apart from the gRPC server around it: Setup
// makes the backend's LockClient and a stub of the fenced resource; Invoke runs one client
// operation and turns its outcome into the history's completion (ok / fail / info).
//
// Op rules: acquire remembers the grant per key; release gives back the remembered grant
// of its key (FAIL "not held" when there is none); read and write go to the resource with
// a deadline. A resource call that timed out or broke after it may have been sent is INFO;
// one that could not connect at all (nothing sent) is FAIL with not_sent; a refused write
// is FAIL with the resource's reason. Bad requests (no op, Invoke before Setup) are FAIL
// with an error naming the problem, and so is an op of the vocabulary (ops/ops.h) that the
// worker has no code for. cas goes to the resource's compare-and-set, like a write.
//
// The lock client is the backend's own (SetupRequest.client "native") or a lock library's
// adapter (adapters/adapter_client.h), started here. An adapter that breaks its protocol
// makes the op INFO with InvokeReply.broken saying why. What the library says on its own
// (a lock lost, a pause-after-send begun) waits in a queue for the Notices stream
// (next_notice), in the order the library said it. An acquire's `paused` notice joins the
// queue before that acquire's InvokeReply is returned, and the reply's
// paused_after_send_ms is non-zero exactly when it did (whatever the outcome, INFO broken
// included).
//
// Thread-safe. LockClient calls are serialized (LockClient is not thread-safe), so an op
// stuck in the lock client delays the next lock op by at most the backend's command
// timeout; resource ops run concurrently with lock ops.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>

#include <grpcpp/support/status.h>

#include "harness/control/op_codec.h"
#include "proto/worker.pb.h"

namespace fencecheck {

class WorkerOps {
 public:
  explicit WorkerOps(std::string default_node,
                     std::chrono::milliseconds resource_deadline = std::chrono::seconds(2));
  ~WorkerOps();

  // Throws std::invalid_argument for an unknown backend or a malformed config; the
  // previous session (if any) stays in place then.
  void setup(const proto::SetupRequest& req);
  proto::InvokeReply invoke(const proto::InvokeRequest& req);
  // The oldest notice not yet taken, waiting up to `wait` for one. False when none came, or
  // once close_notices() was called.
  bool next_notice(proto::Notice& out, std::chrono::milliseconds wait);
  void close_notices();
  bool notices_closed();

 private:
  struct Session;
  std::shared_ptr<Session> session() const;
  proto::InvokeReply acquire(Session& s, const DecodedOp& op, std::chrono::milliseconds pause_after_send);
  proto::InvokeReply release(Session& s, const DecodedOp& op);
  proto::InvokeReply read(Session& s, const DecodedOp& op);
  proto::InvokeReply write(Session& s, const DecodedOp& op);
  proto::InvokeReply cas(Session& s, const DecodedOp& op);
  // One call to the resource service with the resource deadline.
  template <class Request, class Reply, class Method>
  grpc::Status call_resource(Session& s, Method method, const Request& request, Reply& reply);

  const std::string default_node_;
  const std::chrono::milliseconds resource_deadline_;
  // The notice queue comes before the session: a lock client's thread may push into it
  // until the session (and its client) is gone, so it must be destroyed after.
  std::mutex notice_mu_;
  std::condition_variable notice_cv_;
  std::deque<proto::Notice> notices_;
  bool notices_closed_ = false;
  mutable std::mutex mu_;
  std::shared_ptr<Session> session_;
};

}  // namespace fencecheck
