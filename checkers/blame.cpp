#include "checkers/blame.h"

#include <algorithm>

#include "checkers/history.h"

namespace fencecheck {

std::optional<Blame> parse_blame(std::string_view name) {
  for (std::size_t i = 0; i < kBlameNames.size(); ++i) {
    if (kBlameNames[i] == name) return static_cast<Blame>(i);
  }
  return std::nullopt;
}

std::string blame_names() {
  std::string out;
  for (std::string_view n : kBlameNames) out += (out.empty() ? "" : ", ") + std::string(n);
  return out;
}

bool granted_expired(Nanos asked, Nanos granted, const std::optional<std::int64_t>& valid_ms) {
  return valid_ms && promise_end(asked, *valid_ms) <= granted;
}

BlameFinding blame(const HeldPromise& held, Nanos later_grant) {
  // A void later grant is the lock's doing whatever the earlier one promised.
  if (held.later_grant_expired) {
    return {Blame::kGrantedExpired, held.valid_ms ? std::optional<Nanos>(held.end_at_later_grant) : std::nullopt};
  }
  if (!held.recorded) return {Blame::kUnclassified, std::nullopt};
  if (!held.valid_ms) return {Blame::kSessionLost, std::nullopt};
  const Nanos first_end = promise_end(held.asked, *held.valid_ms);
  // A promise that ended no later than the grant itself promised nothing.
  if (granted_expired(held.asked, held.granted, held.valid_ms)) return {Blame::kGrantedExpired, first_end};
  const Nanos end = held.end_at_later_grant;
  return {later_grant < end ? Blame::kPromiseBroken : Blame::kOverstayed, end};
}

nlohmann::json BlameReport::to_json() const {
  nlohmann::json j = {{"class", to_string(finding.blame)},
                      {"later_grant", later_grant},
                      {"told", told_at ? "during" : "never"},
                      {"writes_in_overlap", {{"accepted", writes_accepted}, {"refused", writes_refused}}}};
  if (held.valid_ms) j["valid_ms"] = *held.valid_ms;
  if (finding.promised_end) j["promised_end"] = *finding.promised_end;
  if (finding.blame == Blame::kOverstayed) j["acted_after_end"] = acted_after_end;
  if (finding.blame == Blame::kGrantedExpired) j["void_grant"] = held.later_grant_expired ? "later" : "earlier";
  if (told_at) j["notice_latency"] = *told_at - later_grant;
  if (!bound.empty()) j["bound"] = bound;
  return j;
}

std::string BlameReport::clause() const {
  const std::string name(to_string(finding.blame));
  const Nanos end = finding.promised_end.value_or(0);
  switch (finding.blame) {
    case Blame::kGrantedExpired:
      if (held.later_grant_expired) {
        return name + ": the later grant, at " + format_seconds(later_grant) +
               ", promised a time already over when it was given";
      }
      return name + ": its grant promised " + std::to_string(held.valid_ms.value_or(0)) + " ms from " +
             format_seconds(held.asked) + ", over at " + format_seconds(end) + ", before its acquire returned at " +
             format_seconds(held.granted);
    case Blame::kPromiseBroken:
      return name + ": the later grant came " + format_seconds(end - later_grant) + " before its promise ended at " +
             format_seconds(end);
    case Blame::kOverstayed:
      return name + ": its promise ended at " + format_seconds(end) + ", " + format_seconds(later_grant - end) +
             " before the later grant, and it " + (acted_after_end ? "went on" : "did nothing after");
    case Blame::kSessionLost:
      return name + ": the lock promised no time" + (bound.empty() ? "" : " (it lived by its " + bound + ")");
    case Blame::kUnclassified: break;
  }
  return "";  // an older history, or a client that cannot say: its messages stay as they were
}

void BlameTally::add(const BlameCase& c) {
  ++counts_[static_cast<std::size_t>(c.blame)];
  if (c.notice_latency) {
    latencies_.push_back(*c.notice_latency);
  } else {
    ++silent_;
  }
  writes_accepted_ += c.writes_accepted;
  writes_refused_ += c.writes_refused;
}

namespace {
// The median of the sorted values (the lower middle one of an even count).
Nanos median_of(std::vector<Nanos> v) {
  std::sort(v.begin(), v.end());
  return v[(v.size() - 1) / 2];
}
}  // namespace

nlohmann::json BlameTally::stats() const {
  nlohmann::json classes = nlohmann::json::object();
  for (std::size_t i = 0; i < kBlameNames.size(); ++i) classes[std::string(kBlameNames[i])] = counts_[i];
  nlohmann::json notice = {{"told", latencies_.size()}, {"silent", silent_}};
  if (!latencies_.empty()) {
    notice["median_latency_ns"] = median_of(latencies_);
    notice["max_latency_ns"] = *std::max_element(latencies_.begin(), latencies_.end());
  }
  return {{"blame", std::move(classes)},
          {"notice", std::move(notice)},
          {"writes_in_overlap", {{"accepted", writes_accepted_}, {"refused", writes_refused_}}}};
}

std::string BlameTally::text() const {
  std::string out;
  for (std::size_t i = 0; i < kBlameNames.size(); ++i) {
    if (counts_[i] == 0 || static_cast<Blame>(i) == Blame::kUnclassified) continue;
    out += (out.empty() ? "" : ", ") + std::string(kBlameNames[i]) + " " + std::to_string(counts_[i]);
  }
  if (out.empty()) return out;
  if (const auto n = counts_[static_cast<std::size_t>(Blame::kUnclassified)]) out += ", unclassified " + std::to_string(n);
  out += "; told " + std::to_string(latencies_.size());
  if (!latencies_.empty()) out += " (median " + format_seconds(median_of(latencies_)) + " late)";
  out += ", silent " + std::to_string(silent_);
  return out;
}

}  // namespace fencecheck
