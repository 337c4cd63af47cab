// The external runtime (external_runtime.h): the netns runtime with the server nodes
// outside, each reached through a TcpRelay listening on its address in the hub namespace.
#include "platform/external_runtime.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cstdlib>
#include <list>
#include <stdexcept>

#include "platform/netns_runtime.h"
#include "platform/tcp_relay.h"

namespace fencecheck {

namespace {

class ExternalRuntime final : public NetnsRuntime {
 public:
  // Node n<i+1> is relayed to outside[i].
  ExternalRuntime(std::string run_id, RunState& state, std::vector<HostPort> outside)
      : NetnsRuntime(std::move(run_id), state), outside_(std::move(outside)) {}
  ~ExternalRuntime() override { Runtime::destroy(); }

  std::string_view kind() const override { return "external"; }

 protected:
  std::vector<std::string> outside_nodes(const std::vector<std::string>& node_names) const override {
    const std::vector<std::string> servers = outside_server_nodes(outside_.size());
    for (const auto& s : servers) {
      if (std::find(node_names.begin(), node_names.end(), s) == node_names.end()) {
        throw HarnessError("the external runtime relays to " + std::to_string(servers.size()) +
                           " server(s), but the run has no node " + s);
      }
    }
    return servers;
  }

  void created() override {
    const std::vector<std::string> servers = outside_server_nodes(outside_.size());
    for (std::size_t i = 0; i < servers.size(); ++i) {
      const HostPort& target = outside_[i];
      relays_.emplace_back(listen_in_namespace("/run/netns/" + hub(), node(servers[i]).address, target.port),
                           target.address, target.port);
    }
  }

  void removing_network() noexcept override { relays_.clear(); }  // each stops and joins its threads

 private:
  std::vector<HostPort> outside_;
  std::list<TcpRelay> relays_;
};

}  // namespace

std::unique_ptr<Runtime> make_external_runtime(const std::string& run_id, RunState& state,
                                               const std::vector<HostPort>& servers) {
  if (servers.empty()) throw HarnessError("the external runtime needs at least one server endpoint");
  return std::make_unique<ExternalRuntime>(run_id, state, servers);
}

ExternalEndpoints parse_endpoints(const std::string& text) {
  ExternalEndpoints e;
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw std::invalid_argument("expected BACKEND=HOST:PORT[,HOST:PORT...], got \"" + text + "\"");
  }
  e.backend = text.substr(0, eq);
  std::string rest = text.substr(eq + 1);
  std::size_t at = 0;
  while (at <= rest.size()) {
    const auto comma = rest.find(',', at);
    const std::string item = rest.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    const auto colon = item.rfind(':');
    in_addr ignored{};
    if (colon == std::string::npos || ::inet_pton(AF_INET, item.substr(0, colon).c_str(), &ignored) != 1) {
      throw std::invalid_argument("\"" + item + "\" is not IPV4-ADDRESS:PORT");
    }
    const std::string port = item.substr(colon + 1);
    char* end = nullptr;
    const long p = std::strtol(port.c_str(), &end, 10);
    if (port.empty() || *end != '\0' || p < 1 || p > 65535) {
      throw std::invalid_argument("\"" + item + "\": the port must be 1..65535");
    }
    e.servers.push_back({item.substr(0, colon), static_cast<std::uint16_t>(p)});
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  return e;
}

std::vector<std::string> outside_server_nodes(std::size_t count) {
  std::vector<std::string> names;
  for (std::size_t i = 1; i <= count; ++i) names.push_back("n" + std::to_string(i));
  return names;
}

}  // namespace fencecheck
