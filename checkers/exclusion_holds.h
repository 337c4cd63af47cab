// The exclusion checker's records (exclusion.cpp): a hold, the two latest-ending judged
// holds of a key, a group of acquires inside one hold, a key's queue. Internal to
// checkers/exclusion.cpp; plain values, not thread-safe.
#pragma once

#include <cstdint>
#include <deque>
#include <limits>
#include <optional>
#include <vector>

#include "checkers/blame.h"
#include "ops/ops.h"

namespace fencecheck::exclusion {

enum class HoldEnd : std::uint8_t { kRelease, kRetired, kEndOfHistory, kLost };

constexpr std::size_t kNoGroup = std::numeric_limits<std::size_t>::max();
constexpr Nanos kNever = std::numeric_limits<Nanos>::min();
constexpr std::size_t kShownInside = 5;  // acquires inside a group kept in detail

struct Hold {
  std::uint32_t key;
  std::uint32_t node;
  std::int64_t process;
  Nanos start;
  Nanos end;
  std::uint64_t acquire_index;
  std::uint64_t end_index;  // the release or retiring op's invoke; unused at end of history
  std::optional<Token> token;
  HoldEnd end_kind;
  bool open;                  // end not known yet
  std::uint64_t closed_order;  // holds starting at the same instant are judged in this order
  std::uint64_t inside = 0;    // acquires of others that began inside it (it was their partner)
  std::size_t group = kNoGroup;  // its group's place in `found_`, when kept in detail
  // For blame (blame.h): what its grant promised, the promise in force when another
  // process first got the lock during it (`contested_at`), and what its holder did after.
  HeldPromise promise{};
  std::uint32_t bound = 0;     // what an untimed promise lives by (bounds_ id; 0: unsaid)
  Nanos promise_end = 0;       // the end the latest promise (grant or renewal) gave
  Nanos contested_at = kNever;
  Nanos last_act = kNever;     // the latest invoke of the holder's ops during it
  // The holder's resource requests invoked at or after contested_at: writes (and cas) that
  // completed ok, and requests of any kind that failed (refused by a fence).
  std::uint32_t writes_accepted = 0;
  std::uint32_t writes_refused = 0;
};

// The latest-ending hold seen so far, and the latest-ending one of another process, so
// that a hold always finds a partner of a different process if one overlaps it. Copies,
// so that the holds they summarise can be forgotten; a hold's group counters travel with
// its copy, and a hold dropped from both can never be a partner again.
struct Latest {
  std::optional<Hold> best;
  std::optional<Hold> other;  // latest end among processes != best->process
  void add(const Hold& h) {
    if (!best || h.end > best->end) {
      if (best && best->process != h.process) other = best;
      best = h;
    } else if (h.process != best->process && (!other || h.end > other->end)) {
      other = h;
    }
  }
  Hold* partner_of(const Hold& h) {
    if (best && best->process != h.process) return &*best;
    return other ? &*other : nullptr;
  }
};

// One group kept in detail: the earlier hold, and the acquires that began inside it.
struct Group {
  Hold held;
  std::vector<Hold> inside;  // the first kShownInside
  std::uint64_t acquires = 0;  // all of them
  BlameFinding blame;
  Nanos later_grant = 0;  // the grant blame weighed: the first to another process inside
};

struct KeyHolds {
  std::deque<Hold> pending;  // not judged yet, in order of start
  std::uint64_t judged = 0;  // holds judged and dropped from the front of `pending`:
                             // a hold's sequence number minus `judged` is its position
  Latest before;             // every judged hold
  std::size_t kept = 0;      // groups of this key kept in detail
  std::vector<std::uint64_t> open;  // sequence numbers of its open holds
};

}  // namespace fencecheck::exclusion
