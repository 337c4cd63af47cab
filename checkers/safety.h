// The three quick safety checkers of docs/checkers.md. Each is a streaming Checker
// (checker.h). Exclusion and tokens run in O(n log n) and forget what can no longer
// matter, relying on times that never go backwards (the readers enforce it):
//  exclusion keeps the holds of each key since its oldest open hold — about one per
//    process holding a key in a valid history (stat holds_kept_peak);
//  tokens keeps in full only grants concurrent with an acquire in flight (stat
//    grants_kept_peak), plus ~20 bytes per distinct token granted: the unique rule must
//    find a duplicate however far apart.
//  resource keeps the writes it must remember.
//
//  exclusion — two holds of one key by different processes overlap in time. Skipped when
//              no acquire completed ok.
//  tokens    — a token granted twice, or lower than one granted and completed before the
//              acquire was invoked. Skipped when no ok acquire carries a token.
//  resource  — the resource accepted a stale token; for lock-append keys, an ok write's
//              element missing from the final read although the write completed before
//              that read was invoked (lost update), or a failed write's element present
//              in it. Unknown (unless a violation was found) when a key has a missing
//              write the final read cannot judge or no ok read at all: a run cut short.
//              Skipped with neither a resource log nor such keys.
#pragma once

#include <memory>

#include "checkers/checker.h"

namespace fencecheck {

std::unique_ptr<Checker> make_exclusion_checker(const CheckOptions& options);
std::unique_ptr<Checker> make_tokens_checker(const CheckOptions& options);
std::unique_ptr<Checker> make_resource_checker(const CheckOptions& options);

}  // namespace fencecheck
