// The `etcd` entry of the backend registry (backends/registry.h).
#pragma once

#include "backends/registry.h"

namespace fencecheck {

BackendInfo etcd_backend_info();

}  // namespace fencecheck
