#include "harness/run/interrupts.h"

#include <csignal>

namespace fencecheck {
namespace {

volatile std::sig_atomic_t g_interrupts = 0;

}  // namespace

extern "C" void fencecheck_count_interrupt(int) { g_interrupts = g_interrupts + 1; }

InterruptGuard::InterruptGuard() { g_interrupts = 0; }

int interrupts() { return g_interrupts; }

}  // namespace fencecheck
