#include "harness/worker/worker_server.h"

#include <sys/stat.h>
#include <sys/un.h>

#include <filesystem>
#include <stdexcept>

#include <grpcpp/grpcpp.h>

#include "platform/stop_signals.h"
#include "platform/runtime.h"
#include "harness/control/op_channel.h"
#include "harness/worker/op_listener.h"
#include "harness/worker/worker_ops.h"
#include "proto/worker.grpc.pb.h"

namespace fencecheck {
namespace {

class WorkerService final : public proto::Worker::Service {
 public:
  WorkerService(WorkerOps& ops, WorkerServer& server) : ops_(ops), server_(server) {}

  grpc::Status Setup(grpc::ServerContext*, const proto::SetupRequest* req,
                     proto::SetupReply*) override {
    try {
      ops_.setup(*req);
    } catch (const std::exception& e) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, e.what());
    }
    return grpc::Status::OK;
  }

  grpc::Status Notices(grpc::ServerContext* ctx, const proto::NoticesRequest*,
                       grpc::ServerWriter<proto::Notice>* writer) override {
    proto::Notice n;
    while (!ctx->IsCancelled()) {
      if (ops_.next_notice(n, std::chrono::milliseconds(200)) && !writer->Write(n)) break;
      if (ops_.notices_closed()) break;
    }
    return grpc::Status::OK;
  }

  grpc::Status Shutdown(grpc::ServerContext*, const proto::ShutdownRequest*,
                        proto::ShutdownReply*) override {
    // Only asks: grpc::Server::Shutdown waits for handlers, this one included.
    server_.request_stop();
    return grpc::Status::OK;
  }

 private:
  WorkerOps& ops_;
  WorkerServer& server_;
};

// gRPC creates the socket with the process umask; 0177 makes it 0600.
class ScopedUmask {
 public:
  explicit ScopedUmask(mode_t mask) : old_(::umask(mask)) {}
  ~ScopedUmask() { ::umask(old_); }

 private:
  mode_t old_;
};

}  // namespace

struct WorkerServer::Impl {
  Impl(WorkerServer& self, const std::string& node, std::chrono::milliseconds deadline)
      : ops(node, deadline), service(ops, self) {}
  std::string socket_path;
  WorkerOps ops;
  WorkerService service;
  std::unique_ptr<OpListener> op_listener;  // after ops: its threads call into ops
  std::unique_ptr<grpc::Server> server;
  std::mutex mu;
  std::condition_variable cv;
  bool stop = false;
};

WorkerServer::WorkerServer(const std::string& socket_path, const std::string& node,
                           std::chrono::milliseconds resource_deadline)
    : impl_(std::make_unique<Impl>(*this, node, resource_deadline)) {
  impl_->socket_path = socket_path;
  if (socket_path.size() >= sizeof(sockaddr_un{}.sun_path)) {
    throw HarnessError("worker: socket path is too long for a Unix socket (" +
                       std::to_string(socket_path.size()) + " bytes, at most " +
                       std::to_string(sizeof(sockaddr_un{}.sun_path) - 1) + "): " + socket_path);
  }
  // The op socket first: once the control socket accepts, ops can be sent.
  impl_->op_listener = std::make_unique<OpListener>(
      op_socket_path(socket_path), [ops = &impl_->ops](const proto::InvokeRequest& req) { return ops->invoke(req); });
  std::error_code ec;
  if (std::filesystem::is_socket(socket_path, ec)) std::filesystem::remove(socket_path, ec);
  grpc::ServerBuilder builder;
  builder.AddListeningPort("unix:" + socket_path, grpc::InsecureServerCredentials());
  builder.RegisterService(&impl_->service);
  {
    ScopedUmask mask(0177);
    impl_->server = builder.BuildAndStart();
  }
  if (!impl_->server) {
    throw HarnessError("worker: cannot listen on Unix socket " + socket_path +
                       " (does its directory exist and is it writable?)");
  }
}

WorkerServer::~WorkerServer() {
  request_stop();
  impl_->server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
  impl_->server->Wait();
  impl_->op_listener.reset();
  std::error_code ec;
  std::filesystem::remove(impl_->socket_path, ec);
}

void WorkerServer::request_stop() {
  impl_->op_listener->stop();
  impl_->ops.close_notices();  // ends the Notices stream, which Shutdown would wait for
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->stop = true;
  impl_->cv.notify_all();
}

void WorkerServer::run() {
  {
    std::unique_lock<std::mutex> lock(impl_->mu);
    impl_->cv.wait(lock, [this] { return impl_->stop; });
  }
  impl_->server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
}

void add_worker_command(CLI::App& app) {
  struct Options {
    std::string socket;
    std::string node;
  };
  auto opts = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("worker", "Run one client worker (internal)");
  cmd->add_option("--socket", opts->socket, "Unix socket the controller connects to")
      ->required();
  cmd->add_option("--node", opts->node, "this worker's client node, e.g. c1")->required();
  cmd->callback([opts] {
    WorkerServer* running = nullptr;
    std::mutex mu;
    bool stop_requested = false;
    StopSignalWatcher watcher([&](int) {
      std::lock_guard<std::mutex> lock(mu);
      stop_requested = true;
      if (running) running->request_stop();
    });
    WorkerServer server(opts->socket, opts->node);
    {
      std::lock_guard<std::mutex> lock(mu);
      running = &server;
      if (stop_requested) server.request_stop();
    }
    server.run();
    std::lock_guard<std::mutex> lock(mu);
    running = nullptr;
  });
}

}  // namespace fencecheck
