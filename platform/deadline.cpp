#include "platform/deadline.h"

#include <algorithm>
#include <thread>

namespace fencecheck {

using std::chrono::milliseconds;

Deadline Deadline::after(milliseconds d, CancelCheck cancel) {
  return Deadline(Clock::now() + d, d, std::move(cancel));
}

Deadline Deadline::only_cancel(CancelCheck cancel) {
  return Deadline(Clock::time_point::max(), milliseconds::max(), std::move(cancel));
}

Deadline Deadline::within(milliseconds d) const {
  const Clock::time_point sooner = Clock::now() + d;
  if (sooner >= at_) return *this;
  return Deadline(sooner, d, cancel_);
}

Deadline Deadline::or_when(CancelCheck also) const {
  if (!also) return *this;
  if (!cancel_) return Deadline(at_, budget_, std::move(also));
  return Deadline(at_, budget_, [first = cancel_, also = std::move(also)] { return first() || also(); });
}

milliseconds Deadline::left() const {
  if (cancelled()) return milliseconds(0);
  if (at_ == Clock::time_point::max()) return milliseconds::max();
  return std::max(milliseconds(0), std::chrono::duration_cast<milliseconds>(at_ - Clock::now()));
}

bool Deadline::sleep(milliseconds d) const {
  const Clock::time_point wanted = Clock::now() + d;
  for (;;) {
    if (cancelled()) return false;
    const Clock::time_point now = Clock::now();
    if (now >= wanted) return true;
    if (now >= at_) return false;
    std::this_thread::sleep_for(std::min<Clock::duration>({wanted - now, at_ - now, milliseconds(50)}));
  }
}

std::string Deadline::budget_text() const {
  if (budget_ == milliseconds::max()) return "no time limit";
  return std::to_string(budget_.count()) + " ms";
}

}  // namespace fencecheck
