// The `redlock` backend: N independent redis-server masters, one per node n1..nN (no
// replication), and the Redlock client (redlock_client.h) over all of them.
//
// Options (--backend-opt): `n` (3 or 5 masters, default 5), the redis backend's
// `persistence` (each master alike), and the client's `validity_check`,
// `instance_timeout_ms`, `stall_after_send_ms`, `stall_every` (RedlockClient), which reach
// the workers inside the server's client_config().
#pragma once

#include <nlohmann/json.hpp>

#include "backends/redis/redis_server.h"
#include "backends/redlock/redlock_client.h"
#include "backends/registry.h"

namespace fencecheck {

class RedlockServer : public RedisServer {
 public:
  // client: the client options; its instances are filled in by client_config().
  RedlockServer(RedisServerOptions redis, std::size_t n, RedlockClientConfig client);

  // RedlockClientConfig JSON: every master's endpoint, in node order, and the options.
  nlohmann::json client_config() const override;
  nlohmann::json client_config_at(const std::vector<HostPort>& servers) const override;

 private:
  RedlockClientConfig client_;
};

BackendInfo redlock_backend_info();

}  // namespace fencecheck
