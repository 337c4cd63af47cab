// How a non-linearizable key is told to a reader: a JSON violation for results.json and a
// plain sentence for CheckResult::summary. Pure functions; thread-safe.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "checkers/linear/lin_op.h"
#include "checkers/linear/models.h"
#include "checkers/linear/search.h"

namespace fencecheck::linear {

// An op as results.json shows it: f, process, indices, times, type, token or values.
nlohmann::json op_to_json(const LinOp& op, const Partition& p);

// {"key", "model", "op" (the op that could not be linearized), "reason", "prefix_length",
//  "prefix_tail" (its last ops), "state_after_prefix", "concurrent" (ops overlapping the
//  op, each marked "in_prefix"), "concurrent_count"}. `out` must be kNotLinearizable.
nlohmann::json violation_to_json(const Partition& p, const SearchOutcome& out, ModelKind m);

// One or two sentences saying which op could not be linearized after what.
std::string violation_sentence(const Partition& p, const SearchOutcome& out, ModelKind m);

}  // namespace fencecheck::linear
