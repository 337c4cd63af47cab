// The three quick safety checkers of DESIGN.md ("Checker semantics"). Each is a streaming
// Checker (checker.h); memory grows with the holds / grants / writes it must remember,
// not with the history. Exclusion and tokens run in O(n log n).
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
