// The deadline a test gives a call that takes one (platform/deadline.h): long enough that a
// healthy machine never meets it, short enough that a hung call fails the test.
#pragma once

#include <chrono>

#include "platform/deadline.h"

namespace fencecheck {

inline Deadline test_deadline(std::chrono::milliseconds d = std::chrono::seconds(30)) { return Deadline::after(d); }

}  // namespace fencecheck
