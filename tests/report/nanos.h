// History times in the report tests: nanoseconds since the start of a run (ops/ops.h).
#pragma once

#include "ops/ops.h"

namespace fencecheck::report {

inline constexpr Nanos kMs = 1'000'000;
inline constexpr Nanos kSec = 1'000 * kMs;

}  // namespace fencecheck::report
