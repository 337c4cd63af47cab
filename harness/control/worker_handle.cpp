#include "harness/control/worker_handle.h"

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "harness/control/op_channel.h"
#include "harness/control/op_codec.h"
#include "platform/errors.h"
#include "proto/worker.grpc.pb.h"

namespace fencecheck {
namespace {

std::chrono::system_clock::time_point after(std::chrono::milliseconds d) {
  return std::chrono::system_clock::now() + d;
}

}  // namespace

struct WorkerHandle::Impl {
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<proto::Worker::Stub> stub;
  grpc::ClientContext notices_ctx;
  std::thread notices;
  std::string op_socket;
  struct OpConnection {
    UniqueFd fd;
    std::chrono::milliseconds receive_timeout{0};  // as last set on fd
  };
  std::mutex idle_mu;
  std::vector<OpConnection> idle;  // op connections with no op in flight

  // One op's round trip on an idle connection (or a new one). A connection whose op did not
  // end cleanly is closed, never reused: a late reply must not answer the next op.
  FrameStatus round_trip(const proto::InvokeRequest& req, proto::InvokeReply* reply,
                         std::chrono::milliseconds deadline, std::string* error);
};

FrameStatus WorkerHandle::Impl::round_trip(const proto::InvokeRequest& req, proto::InvokeReply* reply,
                                           std::chrono::milliseconds deadline, std::string* error) {
  const OpDeadline until = std::chrono::steady_clock::now() + deadline;
  OpConnection conn;
  {
    std::lock_guard lock(idle_mu);
    if (!idle.empty()) {
      conn = std::move(idle.back());
      idle.pop_back();
    }
  }
  if (!conn.fd.valid()) {
    FrameStatus s = connect_op_socket(op_socket, until, &conn.fd, error);
    if (s != FrameStatus::kOk) return s;
  }
  // The reply is waited for in recv itself; the timeout is set again only when the op's
  // deadline differs (ops of one run share one), never shorter than the deadline.
  const auto wanted = std::max(deadline, std::chrono::milliseconds(1));
  if (conn.receive_timeout != wanted) {
    set_receive_timeout(conn.fd.get(), wanted);
    conn.receive_timeout = wanted;
  }
  FrameStatus s = send_frame(conn.fd.get(), req, until, error);
  if (s == FrameStatus::kOk) s = receive_frame(conn.fd.get(), *reply, until, error);
  if (s == FrameStatus::kOk) {
    std::lock_guard lock(idle_mu);
    idle.push_back(std::move(conn));
  }
  return s;
}

WorkerHandle::WorkerHandle(std::string socket_path)
    : socket_path_(std::move(socket_path)), impl_(std::make_unique<Impl>()) {
  impl_->op_socket = op_socket_path(socket_path_);
  grpc::ChannelArguments args;
  // A frozen worker must surface as a deadline, never as a long reconnect backoff that
  // makes the next op fail before it is sent.
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 50);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 500);
  impl_->channel = grpc::CreateCustomChannel("unix:" + socket_path_,
                                             grpc::InsecureChannelCredentials(), args);
  impl_->stub = proto::Worker::NewStub(impl_->channel);
}

WorkerHandle::~WorkerHandle() {
  if (impl_->notices.joinable()) {
    impl_->notices_ctx.TryCancel();
    impl_->notices.join();
  }
}

void WorkerHandle::watch_notices(std::function<void(const Notice&)> on_notice) {
  impl_->notices = std::thread([impl = impl_.get(), on_notice = std::move(on_notice)] {
    proto::NoticesRequest req;
    std::unique_ptr<grpc::ClientReader<proto::Notice>> reader = impl->stub->Notices(&impl->notices_ctx, req);
    proto::Notice n;
    while (reader->Read(&n)) {
      on_notice(Notice{n.f(), n.key(), n.lease(), n.reason(), std::chrono::milliseconds(n.ms())});
    }
    reader->Finish();
  });
}

bool WorkerHandle::connects_within(std::chrono::milliseconds timeout) {
  return impl_->channel->WaitForConnected(after(timeout));
}

void WorkerHandle::wait_connected(std::chrono::milliseconds timeout) {
  if (!connects_within(timeout)) {
    throw HarnessError("worker on " + socket_path_ + " did not accept a connection within " +
                       std::to_string(timeout.count()) + " ms");
  }
}

void WorkerHandle::setup(const std::string& backend, const nlohmann::json& client_config,
                         const std::string& resource_address, const std::string& node,
                         const ClientChoice& client, const std::function<bool()>& cancelled) {
  proto::SetupRequest req;
  req.set_backend(backend);
  req.set_client_config_json(client_config.dump());
  req.set_resource_address(resource_address);
  req.set_node(node);
  req.set_client(client.name);
  req.set_adapter_log(client.adapter_log);
  req.set_op_timeout_ms(client.op_timeout.count());
  req.set_acquire_timeout_ms(client.acquire_timeout.count());
  req.set_ttl_ms(client.ttl.count());
  req.set_client_options_json(nlohmann::json(client.options).dump());
  proto::SetupReply reply;
  grpc::ClientContext ctx;
  ctx.set_deadline(after(std::chrono::seconds(20)));
  ctx.set_wait_for_ready(true);
  std::mutex mu;
  std::condition_variable done_cv;
  std::optional<grpc::Status> done;
  impl_->stub->async()->Setup(&ctx, &req, &reply, [&](grpc::Status s) {
    std::lock_guard lock(mu);
    done = std::move(s);
    done_cv.notify_all();
  });
  std::unique_lock lock(mu);
  bool cancelling = false;
  while (!done_cv.wait_for(lock, std::chrono::milliseconds(50), [&] { return done.has_value(); })) {
    if (!cancelling && cancelled && cancelled()) {
      ctx.TryCancel();  // the callback still runs, and is waited for: it uses this frame
      cancelling = true;
    }
  }
  grpc::Status st = *done;
  if (cancelling) throw Interrupted("worker " + node + ": setup interrupted");
  if (!st.ok()) {
    throw HarnessError("worker " + node + " (" + socket_path_ + ") setup failed: " +
                       st.error_message());
  }
}

WorkerHandle::Completion WorkerHandle::invoke(OpFn f, const std::string& key,
                                              const nlohmann::json& invoke_value,
                                              std::chrono::milliseconds ttl,
                                              std::chrono::milliseconds deadline,
                                              std::optional<std::int64_t> fence,
                                              std::chrono::milliseconds pause_after_send) {
  Completion c;
  proto::InvokeRequest req;
  try {
    req = encode_invoke(f, key, invoke_value, ttl, fence);
    req.set_pause_after_send_ms(pause_after_send.count());
  } catch (const std::exception& e) {
    return Completion{OpType::kFail, nullptr, std::string("bad ") + std::string(to_string(f)) + ": " + e.what(), true, {}, {}};
  }
  proto::InvokeReply reply;
  std::string error;
  switch (impl_->round_trip(req, &reply, deadline, &error)) {
    case FrameStatus::kOk:
      break;
    case FrameStatus::kTimeout:
      c.error = "timeout";
      return c;  // info: the worker may have run it
    case FrameStatus::kClosed:
      c.error = "worker unreachable: it closed the connection";
      return c;
    case FrameStatus::kError:
      c.error = "worker unreachable: " + error;
      return c;
    case FrameStatus::kMalformed:
      c.error = "the worker's reply is malformed: " + error;
      return c;
  }
  c.error = reply.error();
  c.broken = reply.broken();
  if (f == OpFn::kAcquire && pause_after_send.count() > 0) {
    c.paused_after_send = std::chrono::milliseconds(reply.paused_after_send_ms());
  }
  if (reply.has_result()) c.lease = reply.result().lease();
  switch (reply.type()) {
    case proto::InvokeReply::OK:
      try {
        c.ok_value = decode_ok_value(f, reply);
        c.type = OpType::kOk;
      } catch (const std::exception& e) {
        c.error = std::string("the worker's reply is malformed: ") + e.what();
      }
      break;
    case proto::InvokeReply::FAIL:
      c.type = OpType::kFail;
      c.not_sent = reply.not_sent();
      break;
    default:
      break;
  }
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
