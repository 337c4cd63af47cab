// Blame: whose fault a violation of exclusion is, decided from what the lock promised its
// holder (docs/checkers.md, "Blame"). The exclusion checker gathers, for the earlier hold
// of each violation, the facts below while it reads the history; blame() turns them into
// exactly one class, and BlameTally sums a run's violations up.
//
// Plain values and pure functions; BlameTally is not thread-safe (one per checker). Nothing
// here blocks. Errors: none (every input has a class; `unclassified` when the history does
// not say what was promised).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "ops/ops.h"

namespace fencecheck {

enum class Blame : std::uint8_t {
  kGrantedExpired,  // the earlier grant's promise had run out before its own acquire returned
  kPromiseBroken,   // the later grant came while the earlier grant's promise still ran
  kOverstayed,      // the later grant came after the promise ran out; the holder went on
  kSessionLost,     // the earlier grant promised no time: it lived by a session or connection
  kUnclassified,    // the history does not say what the earlier grant promised
};
inline constexpr std::array<std::string_view, 5> kBlameNames = {"granted-expired", "promise-broken", "overstayed",
                                                                "session-lost", "unclassified"};
inline std::string_view to_string(Blame b) { return kBlameNames[static_cast<std::size_t>(b)]; }
// The class named `name` ("overstayed"); nullopt when none is.
std::optional<Blame> parse_blame(std::string_view name);
// "granted-expired, promise-broken, overstayed, session-lost, unclassified"
std::string blame_names();

// What blame() needs of the earlier hold, on the history's clock (ns).
struct HeldPromise {
  bool recorded = false;                 // its acquire's ok value has valid_ms
  std::optional<std::int64_t> valid_ms;  // nullopt (with recorded): no time promise
  Nanos asked = 0;                       // its acquire's invoke: the promise runs from here
  Nanos granted = 0;                     // its acquire's ok
  // The promised end in force at the later grant: asked + valid_ms, or the end the latest
  // `renewed` notice of the hold at or before the later grant gave (its time + valid_ms).
  Nanos end_at_later_grant = 0;
  // The later grant itself promised a time that had run out by its own ok: it was void.
  bool later_grant_expired = false;
};

// The end of a promise of valid_ms made at `from` (ns on the history's clock).
constexpr Nanos promise_end(Nanos from, std::int64_t valid_ms) { return from + valid_ms * 1'000'000; }

// Whether a grant invoked at `asked`, ok at `granted`, promising `valid_ms`, was over
// before it was given (asked + valid_ms <= granted); false for no time promise.
bool granted_expired(Nanos asked, Nanos granted, const std::optional<std::int64_t>& valid_ms);

struct BlameFinding {
  Blame blame = Blame::kUnclassified;
  std::optional<Nanos> promised_end;  // the end in force at the later grant, for a time promise
};

// The class of a violation whose earlier hold is `held` and whose later grant (the first
// grant of the lock to another process inside the hold) completed at `later_grant`.
BlameFinding blame(const HeldPromise& held, Nanos later_grant);

// One violation's blame as the checker reports it: the member "blame" of its JSON and a
// clause of its message.
struct BlameReport {
  BlameFinding finding;
  HeldPromise held;
  Nanos later_grant = 0;
  bool acted_after_end = false;  // overstayed: the holder invoked an op at or after the end
  std::optional<Nanos> told_at;  // the lost notice that ended the hold
  std::string bound;             // session-lost: what the lock lived by, when said
  std::uint64_t writes_accepted = 0;
  std::uint64_t writes_refused = 0;

  nlohmann::json to_json() const;
  // "overstayed: its promise ended at 1.500 s, 0.300 s before the later grant, and it went
  // on"; empty for unclassified.
  std::string clause() const;
};

// What one violation adds to a run's sums.
struct BlameCase {
  Blame blame = Blame::kUnclassified;
  std::optional<Nanos> notice_latency;  // the holder's lost notice minus the later grant
  std::uint64_t writes_accepted = 0;    // the holder's writes the resource took after the later grant
  std::uint64_t writes_refused = 0;     // … and its requests (reads too) the resource refused
};

class BlameTally {
 public:
  void add(const BlameCase& c);
  // {"granted-expired": 0, …} for every class, then notice latency (median, max; told,
  // silent) and the writes: the exclusion checker's stats (docs/checkers.md).
  nlohmann::json stats() const;
  // "overstayed 3, promise-broken 1; told 1 (median 2.004 s late), silent 3" — only the
  // classes seen; empty when nothing was added or every violation is unclassified.
  std::string text() const;

 private:
  std::array<std::uint64_t, kBlameNames.size()> counts_{};
  std::vector<Nanos> latencies_;
  std::uint64_t silent_ = 0;
  std::uint64_t writes_accepted_ = 0;
  std::uint64_t writes_refused_ = 0;
};

}  // namespace fencecheck
