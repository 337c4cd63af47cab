// Ctrl-C during `fencecheck run`: while an InterruptGuard lives, SIGINT and SIGTERM only
// count (interrupts()); the runner polls the count. One interrupt ends the test phase early
// (heal, final reads, checks); a second one also skips or abandons the checkers.
//
// One guard at a time per process (the handlers are process-wide); interrupts() is
// async-signal-safe to update and safe to read from any thread. Nothing here blocks.
#pragma once

#include "platform/stop_signals.h"

namespace fencecheck {

extern "C" void fencecheck_count_interrupt(int);

// Installs the counting handlers and zeroes the count; the old handlers come back when it
// goes.
class InterruptGuard {
 public:
  InterruptGuard();

 private:
  ScopedStopHandler handler_{fencecheck_count_interrupt};
};

// SIGINT/SIGTERM received since the guard was made.
int interrupts();

}  // namespace fencecheck
