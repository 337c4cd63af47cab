// ExternalServer: the LockServer of --runtime external, for servers someone else runs. It
// starts, stops and signals nothing. setup() checks that each server answers TCP from the
// controller and, through the runtime's relay, from inside the run's network (up to 5 s
// each; HarnessError naming the endpoint otherwise); client_config() is what the
// backend's own server object would give its clients for the relays' addresses
// (LockServer::client_config_at). Server node i is n<i+1>.
//
// A fault on a server cannot act here and is refused before the run
// (the external runtime lacks Capability::kRunsServers); the server actions throw
// HarnessError saying so.
// Thread-safe after setup(); owns the backend object it was given.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backends/lock_server.h"

namespace fencecheck {

class ExternalServer final : public LockServer {
 public:
  // backend: the backend's server for the run's options, never set up. servers: where
  // the user runs them, in node order.
  ExternalServer(std::unique_ptr<LockServer> backend, std::vector<HostPort> servers);

  void setup(Runtime& runtime, const std::filesystem::path& nodes_dir) override;
  const std::vector<std::string>& nodes() const override { return nodes_; }
  nlohmann::json client_config() const override { return client_config_; }
  nlohmann::json client_config_at(const std::vector<HostPort>& servers) const override {
    return backend_->client_config_at(servers);
  }
  void start(const std::string& node) override { refuse(node); }
  void launch(const std::string& node) override { refuse(node); }
  Readiness await_ready(const std::string& node, const Deadline&) override { refuse(node); }
  void stop(const std::string& node, const Deadline&) override { refuse(node); }
  void kill(const std::string& node, const Deadline&) override { refuse(node); }
  void pause(const std::string& node, const Deadline&) override { refuse(node); }
  void resume(const std::string& node, const Deadline&) override { refuse(node); }
  bool running(const std::string&) override { return true; }  // as far as the run can know
  std::vector<Process*> processes(const std::string&) override { return {}; }
  std::vector<std::filesystem::path> log_files(const std::string&) const override { return {}; }
  void teardown(const Deadline&) noexcept override {}

 private:
  [[noreturn]] static void refuse(const std::string& node);

  std::unique_ptr<LockServer> backend_;
  std::vector<HostPort> servers_;
  std::vector<std::string> nodes_;
  nlohmann::json client_config_;
};

}  // namespace fencecheck
