#include "report/liveness.h"

#include <algorithm>

namespace fencecheck::report {

namespace {

bool before(const OkCompletion& o, Nanos t) { return o.time < t; }

// Ok completions in [a, b).
std::size_t count_in(const std::vector<OkCompletion>& oks, Nanos a, Nanos b) {
  auto lo = std::lower_bound(oks.begin(), oks.end(), a, before);
  auto hi = std::lower_bound(lo, oks.end(), b, before);
  return static_cast<std::size_t>(hi - lo);
}

std::optional<double> rate(std::size_t n, Nanos length) {
  if (length <= 0) return std::nullopt;
  return static_cast<double>(n) / (static_cast<double>(length) / 1e9);
}

}  // namespace

Liveness compute_liveness(const std::vector<OkCompletion>& oks, const std::vector<FaultSpan>& spans,
                          Nanos first, Nanos end) {
  Liveness l;
  l.overall_ok_per_s = rate(oks.size(), end - first);
  std::map<OpFn, std::vector<Nanos>> times_of;  // per kind, in time order
  for (const auto& o : oks) times_of[o.f].push_back(o.time);
  for (const auto& [k, times] : times_of) l.kinds.push_back(k);
  for (const FaultSpan& s : spans) {
    WindowLiveness w;
    w.span = s;
    w.during_ok_per_s = rate(count_in(oks, s.start, s.end), s.end - s.start);
    if (!s.open_at_end) {
      const Nanos length = s.end - s.start;
      const Nanos stop = std::min(s.end + length, end);
      w.after_length = std::max<Nanos>(0, stop - s.end);
      w.after_ok_per_s = rate(count_in(oks, s.end, stop), w.after_length);
      for (const auto& [k, times] : times_of) {
        auto it = std::lower_bound(times.begin(), times.end(), s.end);
        auto& r = w.recovery[k];
        if (it != times.end()) r = *it - s.end;
        if (r && (!w.recovery_any || *r < *w.recovery_any)) w.recovery_any = r;
      }
    }
    l.windows.push_back(std::move(w));
  }
  return l;
}

}  // namespace fencecheck::report
