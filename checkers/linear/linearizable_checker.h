// The `linearizable` checker (docs/checkers.md, "linearizable"): is the
// history, key by key, linearizable against a model — mutex, fenced-mutex, register or
// cas-register?
//
// observe() keeps one 64-byte record per completed op (op_collector.h); finish() splits
// the history by key and searches the keys in parallel (search.h), on
// `threads` threads (0 = std::thread::hardware_concurrency()). The verdict is kInvalid if
// any key is not linearizable (each such key is one violation, explained: the op that
// could not be linearized, the longest linearizable prefix, the ops concurrent with it),
// else kUnknown if a key ran out of CheckOptions::time_limit_s or memory_limit_bytes
// (stats say how far each got), else kValid; kSkipped when the history has no op of the
// model. CheckOptions::model empty means: chosen from the history (acquire/release →
// fenced-mutex when some ok acquire has a token, else mutex; otherwise cas-register when
// some cas, else register); stats["model"] and the summary name it.
//
// Like every Checker: one thread at a time; finish() exactly once.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "checkers/checker.h"

namespace fencecheck {

// True for "" (choose from the history) and every model name.
bool is_known_model(std::string_view name);
// "mutex, fenced-mutex, register, cas-register", for error messages.
std::string model_names();
// The same names, one per element (the allowed values of --model).
std::vector<std::string> model_name_list();

// Throws std::invalid_argument naming the known models when opts.model is unknown; call
// is_known_model() first to report bad input (exit 3) before reading the history.
// One name per signature, so that the registry can take the first as a function pointer.
std::unique_ptr<Checker> make_linearizable_checker(const CheckOptions& opts);
std::unique_ptr<Checker> make_linearizable_checker_on_threads(const CheckOptions& opts, unsigned threads);

}  // namespace fencecheck
