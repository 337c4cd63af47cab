// The `mariadb` backend: MariaDB named locks (GET_LOCK) or a lease table, on one server or a
// three-node Galera cluster. See mariadb_server.h and mariadb_lock_client.h.
#pragma once

#include <string>

#include "backends/registry.h"

namespace fencecheck {

BackendInfo mariadb_backend_info();

// Galera's wsrep provider, a library mariadbd loads (cluster=galera), and its package.
struct GaleraProvider {
  std::string path;
  std::string package;
};
const GaleraProvider& galera_provider();

}  // namespace fencecheck
