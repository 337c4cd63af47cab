// The `nats` entry of the backend registry (backends/registry.h).
#pragma once

#include "backends/registry.h"

namespace fencecheck {

BackendInfo nats_backend_info();

}  // namespace fencecheck
