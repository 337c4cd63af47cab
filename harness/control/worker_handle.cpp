#include "harness/control/worker_handle.h"

#include <grpcpp/grpcpp.h>

#include "platform/runtime.h"
#include "proto/worker.grpc.pb.h"

namespace fencecheck {
namespace {

std::chrono::system_clock::time_point after(std::chrono::milliseconds d) {
  return std::chrono::system_clock::now() + d;
}

// Values the invoke value carries are the worker's business; the controller only checks
// that what comes back is the right shape for the history.
WorkerHandle::Completion from_reply(const proto::InvokeReply& r) {
  WorkerHandle::Completion c;
  switch (r.type()) {
    case proto::InvokeReply::OK:
      c.type = OpType::kOk;
      break;
    case proto::InvokeReply::FAIL:
      c.type = OpType::kFail;
      break;
    default:
      c.type = OpType::kInfo;
      break;
  }
  c.value_json = r.value_json().empty() ? "null" : r.value_json();
  c.error = r.error();
  return c;
}

}  // namespace

struct WorkerHandle::Impl {
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<proto::Worker::Stub> stub;
};

WorkerHandle::WorkerHandle(std::string socket_path)
    : socket_path_(std::move(socket_path)), impl_(std::make_unique<Impl>()) {
  grpc::ChannelArguments args;
  // A frozen worker must surface as a deadline, never as a long reconnect backoff that
  // makes the next op fail before it is sent.
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 50);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 500);
  impl_->channel = grpc::CreateCustomChannel("unix:" + socket_path_,
                                             grpc::InsecureChannelCredentials(), args);
  impl_->stub = proto::Worker::NewStub(impl_->channel);
}

WorkerHandle::~WorkerHandle() = default;

void WorkerHandle::wait_connected(std::chrono::milliseconds timeout) {
  if (!impl_->channel->WaitForConnected(after(timeout))) {
    throw HarnessError("worker on " + socket_path_ + " did not accept a connection within " +
                       std::to_string(timeout.count()) + " ms");
  }
}

void WorkerHandle::setup(const std::string& backend, const nlohmann::json& client_config,
                         const std::string& resource_address, const std::string& node) {
  proto::SetupRequest req;
  req.set_backend(backend);
  req.set_client_config_json(client_config.dump());
  req.set_resource_address(resource_address);
  req.set_node(node);
  proto::SetupReply reply;
  grpc::ClientContext ctx;
  ctx.set_deadline(after(std::chrono::seconds(10)));
  ctx.set_wait_for_ready(true);
  grpc::Status st = impl_->stub->Setup(&ctx, req, &reply);
  if (!st.ok()) {
    throw HarnessError("worker " + node + " (" + socket_path_ + ") setup failed: " +
                       st.error_message());
  }
}

WorkerHandle::Completion WorkerHandle::invoke(const std::string& f, const std::string& key,
                                              const std::string& value_json,
                                              std::chrono::milliseconds ttl,
                                              std::chrono::milliseconds deadline) {
  proto::InvokeRequest req;
  req.set_f(f);
  req.set_key(key);
  req.set_value_json(value_json);
  req.set_ttl_ms(ttl.count());
  proto::InvokeReply reply;
  grpc::ClientContext ctx;
  ctx.set_deadline(after(deadline));
  grpc::Status st = impl_->stub->Invoke(&ctx, req, &reply);
  if (st.ok()) return from_reply(reply);
  Completion c;
  c.type = OpType::kInfo;
  // release and write completions repeat their invoke value, even when unknown.
  c.value_json = (f == "release" || f == "write") ? value_json : "null";
  c.error = st.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED
                ? "timeout"
                : "worker unreachable: " + st.error_message();
  return c;
}

bool WorkerHandle::shutdown(std::chrono::milliseconds timeout) {
  proto::ShutdownRequest req;
  proto::ShutdownReply reply;
  grpc::ClientContext ctx;
  ctx.set_deadline(after(timeout));
  return impl_->stub->Shutdown(&ctx, req, &reply).ok();
}

}  // namespace fencecheck
