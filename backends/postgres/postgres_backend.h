// The `postgres` entry of the backend registry (backends/registry.h).
#pragma once

#include "backends/registry.h"

namespace fencecheck {

BackendInfo postgres_backend_info();
// The postgres server program as the registry names it; the server finds initdb and the
// other tools of the same version beside it.
const BackendInfo::Binary& postgres_server_binary();

}  // namespace fencecheck
