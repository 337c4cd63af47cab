#include "harness/resource/resource_server.h"

#include <time.h>

#include <chrono>
#include <fstream>
#include <mutex>

#include <grpcpp/grpcpp.h>

#include "platform/stop_signals.h"
#include "platform/runtime.h"
#include "proto/resource.grpc.pb.h"

namespace fencecheck {
namespace {

class ResourceService final : public proto::Resource::Service {
 public:
  explicit ResourceService(FencedStore& store) : store_(store) {}

  grpc::Status Read(grpc::ServerContext*, const proto::ReadRequest* req,
                    proto::ReadReply* reply) override {
    std::optional<std::int64_t> token;
    if (req->has_token()) token = req->token();
    ReadOutcome out = store_.read(req->key(), token, req->client());
    reply->set_accepted(out.accepted);
    reply->set_reason(out.reason);
    reply->set_value_json(out.value);
    return grpc::Status::OK;
  }

  grpc::Status Write(grpc::ServerContext*, const proto::WriteRequest* req,
                     proto::WriteReply* reply) override {
    std::optional<std::int64_t> token;
    if (req->has_token()) token = req->token();
    WriteOutcome out = store_.write(req->key(), token, req->value_json(), req->client());
    reply->set_accepted(out.accepted);
    reply->set_reason(out.reason);
    return grpc::Status::OK;
  }

  grpc::Status Cas(grpc::ServerContext*, const proto::CasRequest* req, proto::WriteReply* reply) override {
    std::optional<std::int64_t> token;
    if (req->has_token()) token = req->token();
    WriteOutcome out = store_.cas(req->key(), token, req->expect_json(), req->value_json(), req->client());
    reply->set_accepted(out.accepted);
    reply->set_reason(out.reason);
    return grpc::Status::OK;
  }

 private:
  FencedStore& store_;
};

std::int64_t monotonic_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

}  // namespace

struct ResourceServer::Impl {
  explicit Impl(FencedStore& store) : service(store) {}
  ResourceService service;
  std::unique_ptr<grpc::Server> server;
  int port = 0;
  std::once_flag shutdown_once;
};

ResourceServer::ResourceServer(FencedStore& store, const std::string& listen)
    : impl_(std::make_unique<Impl>(store)) {
  grpc::ServerBuilder builder;
  builder.AddListeningPort(listen, grpc::InsecureServerCredentials(), &impl_->port);
  builder.RegisterService(&impl_->service);
  impl_->server = builder.BuildAndStart();
  if (!impl_->server || impl_->port == 0) {
    throw HarnessError("resource service: cannot listen on " + listen +
                       " (address in use, or not an address of this node?)");
  }
}

ResourceServer::~ResourceServer() { shutdown(); }

int ResourceServer::port() const { return impl_->port; }

void ResourceServer::wait() { impl_->server->Wait(); }

void ResourceServer::shutdown() {
  std::call_once(impl_->shutdown_once, [this] {
    impl_->server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
  });
}

void add_resource_command(CLI::App& app) {
  struct Options {
    std::string listen;
    std::string mode = "fenced";
    std::string log;
    std::int64_t t0_ns = -1;
  };
  auto opts = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("resource", "Run the fenced resource service (internal)");
  cmd->add_option("--listen", opts->listen, "HOST:PORT to serve gRPC on")->required();
  cmd->add_option("--mode", opts->mode, "fenced: refuse writes with a stale token; unfenced")
      ->check(CLI::IsMember({"fenced", "unfenced"}));
  cmd->add_option("--log", opts->log, "resource.jsonl to write")->required();
  cmd->add_option("--t0-ns", opts->t0_ns,
                  "CLOCK_MONOTONIC ns at test start (default: now)");
  cmd->callback([opts] {
    std::ofstream log(opts->log, std::ios::trunc);
    if (!log) throw HarnessError("resource: cannot open log file " + opts->log);
    const std::int64_t t0 = opts->t0_ns >= 0 ? opts->t0_ns : monotonic_ns();
    FencedStore store(*parse_resource_mode(opts->mode), log,
                      [t0] { return monotonic_ns() - t0; });
    std::unique_ptr<ResourceServer> server;
    std::mutex mu;
    bool stop_requested = false;
    StopSignalWatcher watcher([&](int) {
      std::lock_guard<std::mutex> lock(mu);
      stop_requested = true;
      if (server) server->shutdown();
    });
    {
      auto built = std::make_unique<ResourceServer>(store, opts->listen);
      std::lock_guard<std::mutex> lock(mu);
      server = std::move(built);
      if (stop_requested) server->shutdown();
    }
    server->wait();
  });
}

}  // namespace fencecheck
