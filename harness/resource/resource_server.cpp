#include "harness/resource/resource_server.h"

#include <time.h>

#include <chrono>
#include <condition_variable>
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
  ResourceService(FencedStore& store, std::function<void(const std::string&)> on_failure)
      : store_(store), on_failure_(std::move(on_failure)) {}

  grpc::Status Read(grpc::ServerContext*, const proto::ReadRequest* req,
                    proto::ReadReply* reply) override {
    return guarded([&] {
      ReadOutcome out = store_.read(req->key(), token_of(*req), req->client());
      reply->set_accepted(out.accepted);
      reply->set_reason(out.reason);
      reply->set_value_json(out.value);
    });
  }

  grpc::Status Write(grpc::ServerContext*, const proto::WriteRequest* req,
                     proto::WriteReply* reply) override {
    return guarded([&] {
      WriteOutcome out = store_.write(req->key(), token_of(*req), req->value_json(), req->client());
      reply->set_accepted(out.accepted);
      reply->set_reason(out.reason);
    });
  }

  grpc::Status Cas(grpc::ServerContext*, const proto::CasRequest* req, proto::WriteReply* reply) override {
    return guarded([&] {
      WriteOutcome out =
          store_.cas(req->key(), token_of(*req), req->expect_json(), req->value_json(), req->client());
      reply->set_accepted(out.accepted);
      reply->set_reason(out.reason);
    });
  }

 private:
  template <typename Request>
  static std::optional<std::int64_t> token_of(const Request& req) {
    return req.has_token() ? std::optional<std::int64_t>(req.token()) : std::nullopt;
  }

  // The store throws only when its log failed: the caller cannot know whether the access
  // took effect (INTERNAL, an unknown outcome for the worker), and the process must stop.
  template <typename Body>
  grpc::Status guarded(Body body) {
    try {
      body();
      return grpc::Status::OK;
    } catch (const std::exception& e) {
      if (on_failure_) on_failure_(e.what());
      return grpc::Status(grpc::StatusCode::INTERNAL, e.what());
    }
  }

  FencedStore& store_;
  std::function<void(const std::string&)> on_failure_;
};

std::int64_t monotonic_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

}  // namespace

struct ResourceServer::Impl {
  Impl(FencedStore& store, std::function<void(const std::string&)> on_failure)
      : service(store, std::move(on_failure)) {}
  ResourceService service;
  std::unique_ptr<grpc::Server> server;
  int port = 0;
  std::once_flag shutdown_once;
};

ResourceServer::ResourceServer(FencedStore& store, const std::string& listen,
                               std::function<void(const std::string&)> on_failure)
    : impl_(std::make_unique<Impl>(store, std::move(on_failure))) {
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
    FencedStore store(*parse_resource_mode(opts->mode), log, [t0] { return monotonic_ns() - t0; },
                      opts->log);
    // The main thread waits for a stop signal or a failed log line, then shuts the server
    // down: Shutdown() from a gRPC handler would wait for that very handler.
    std::mutex mu;
    std::condition_variable changed;
    bool stop_requested = false;
    std::string failure;
    StopSignalWatcher watcher([&](int) {
      std::lock_guard<std::mutex> lock(mu);
      stop_requested = true;
      changed.notify_all();
    });
    ResourceServer server(store, opts->listen, [&](const std::string& why) {
      std::lock_guard<std::mutex> lock(mu);
      if (failure.empty()) failure = why;
      changed.notify_all();
    });
    {
      std::unique_lock<std::mutex> lock(mu);
      changed.wait(lock, [&] { return stop_requested || !failure.empty(); });
    }
    server.shutdown();
    server.wait();
    std::lock_guard<std::mutex> lock(mu);
    if (!failure.empty()) throw HarnessError(failure);
    log.close();
    if (!log) throw HarnessError("cannot close " + opts->log + ": its last lines may be lost");
  });
}

}  // namespace fencecheck
