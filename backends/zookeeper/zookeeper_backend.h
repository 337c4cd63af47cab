// The `zookeeper` entry of the backend registry (backends/registry.h).
#pragma once

#include "backends/registry.h"

namespace fencecheck {

BackendInfo zookeeper_backend_info();

}  // namespace fencecheck
