#include "backends/external_server.h"

#include "platform/errors.h"
#include "platform/external_runtime.h"
#include "platform/tcp.h"

namespace fencecheck {

using std::chrono::milliseconds;

ExternalServer::ExternalServer(std::unique_ptr<LockServer> backend, std::vector<HostPort> servers)
    : backend_(std::move(backend)), servers_(std::move(servers)), nodes_(outside_server_nodes(servers_.size())) {
  backend_->client_config_at(servers_);  // the count is the backend's to accept: throws now, not at setup
}

void ExternalServer::setup(Runtime& runtime, const std::filesystem::path&) {
  std::vector<HostPort> relayed;
  for (std::size_t i = 0; i < servers_.size(); ++i) {
    const HostPort& s = servers_[i];
    const std::string where = s.address + ":" + std::to_string(s.port) + " (node " + nodes_[i] + ")";
    if (!tcp_connect_within(s.address, s.port, milliseconds(5000))) {
      throw HarnessError("the server at " + where + " does not answer TCP from this machine within 5 s: is it "
                         "running, and is --endpoints right?");
    }
    const std::string relay = runtime.node(nodes_[i]).address;
    if (!runtime.tcp_connects(nodes_[i], relay, s.port, milliseconds(5000))) {
      throw HarnessError("the server at " + where + " answers, but not through the run's relay at " + relay + ":" +
                         std::to_string(s.port));
    }
    relayed.push_back({relay, s.port});
  }
  client_config_ = backend_->client_config_at(relayed);
}

void ExternalServer::refuse(const std::string& node) {
  throw HarnessError("server " + node + " runs outside the run (--runtime external): the run cannot start, stop or "
                     "signal it");
}

}  // namespace fencecheck
