// Reads a Jepsen history.edn as a stream of fencecheck Events, so that every checker
// (linearizable above all) judges histories fencecheck did not record.
//
// Input: a sequence of op maps (one per line, spread over lines, or inside one top-level
// vector), each with :type (:invoke :ok :fail :info), :process (an integer, or :nemesis),
// :f, :value, :time (ns) and optionally :index (else events are numbered in file order)
// and :error. Tagged ops (#jepsen.history.Op{...}) are read as their map. Histories with
// no :time at all (Knossos test data) use the op's position as its time, with a warning.
//
// Mapping: an :f naming an op of the vocabulary (ops/ops.h) becomes that op; anything else
// on a client is an error. Nemesis events become nemesis lines (type info). Values take the
// shape the op's declaration gives each phase (docs/history.md): a token shape takes
// Jepsen's value as the token, a {"token", "value"} shape as the value, an
// {"expect", "value"} shape as [old new], any other as the value itself. So acquire ok
// {"token": N|null} (N when Jepsen's value is an integer or {:token N}), release
// {"token": …}, write {"token": null, "value": v}, cas [old new] → {"expect": old,
// "value": new}, read the value read. jepsen.independent histories
// (values [k v]) are split by key (the key's text); the first client op with a non-nil
// value decides whether the history is independent; otherwise every op has key "jepsen".
//
// Every event passes HistoryValidator (one op in flight per process, completions match an
// invoke, retired processes stay retired). Errors throw InputError with the line, the
// field (":type", or "edn" for syntax) and the column. Not thread-safe; owns its file.
#pragma once

#include <istream>
#include <memory>
#include <string>
#include <vector>

#include "checkers/event_source.h"

namespace fencecheck {

inline constexpr const char* kEdnDefaultKey = "jepsen";

class EdnHistoryReader : public EventSource {
 public:
  explicit EdnHistoryReader(const std::string& path);  // InputError: unreadable or not a regular file
  // Reads from `in`; `name` names it in errors.
  EdnHistoryReader(std::unique_ptr<std::istream> in, const std::string& name);
  ~EdnHistoryReader() override;
  bool next(Event& out) override;
  const std::vector<std::string>& warnings() const override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fencecheck
