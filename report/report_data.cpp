#include "report/report_data.h"

#include <algorithm>
#include <unordered_map>

namespace fencecheck::report {

namespace {

using nlohmann::json;

std::int64_t us(Nanos t) { return t / 1000; }

// Strings interned in one table; id 0 is "".
class Strings {
 public:
  Strings() { id(""); }
  std::uint32_t id(const std::string& s) {
    auto [it, fresh] = ids_.try_emplace(s, static_cast<std::uint32_t>(table_.size()));
    if (fresh) table_.push_back(s);
    return it->second;
  }
  json table() const { return table_; }

 private:
  std::unordered_map<std::string, std::uint32_t> ids_;
  std::vector<std::string> table_;
};

int outcome_code(const std::optional<OpType>& o) {
  if (!o) return 0;
  switch (*o) {
    case OpType::kOk: return 1;
    case OpType::kFail: return 2;
    case OpType::kInfo: return 3;
    case OpType::kInvoke:
    case OpType::kNotice: break;
  }
  return 0;
}

json fn_names() {  // indexed by OpFn: every op of the vocabulary (ops/ops.h)
  json names = json::array();
  for (OpFn f : client_ops()) names.push_back(std::string(to_string(f)));
  return names;
}

int ended_code(const std::string& why) {
  return why == "release" ? 0 : why == "retired" ? 1 : why == "lost" ? 3 : 2;
}

json token_json(const std::optional<Token>& t) { return t ? json(*t) : json(); }

bool is_time_field(const std::string& k) {
  return k == "start" || k == "end" || k == "time" || k == "invoke_time" || k == "complete_time" ||
         k == "invoked" || k == "completed";
}
bool is_index_field(const std::string& k) {
  return k == "index" || (k.size() > 6 && k.compare(k.size() - 6, 6, "_index") == 0);
}

template <typename T>
void sort_unique(std::vector<T>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

// An exclusion violation's blame for the timeline (timeline.js): its class, whether its
// holder was told, the later grant, the promise's end and the overlapped hold's acquire.
json blame_data(const json& v) {
  const json& b = v["blame"];
  json out = {{"cls", b.value("class", "")}, {"told", b.value("told", "")}};
  if (b.contains("later_grant") && b["later_grant"].is_number_integer()) out["lg"] = us(b["later_grant"].get<Nanos>());
  if (b.contains("promised_end") && b["promised_end"].is_number_integer()) {
    out["pe"] = us(b["promised_end"].get<Nanos>());
  }
  if (v.contains("held") && v["held"].is_object() && v["held"].contains("acquire_index")) {
    out["ha"] = v["held"]["acquire_index"];
  }
  return out;
}

}  // namespace

std::string violation_message(const json& v) {
  for (const char* field : {"message", "reason"}) {
    if (v.is_object() && v.contains(field) && v[field].is_string()) return v[field].get<std::string>();
  }
  return v.dump(-1, ' ', false, json::error_handler_t::replace).substr(0, 300);
}

std::vector<ViolationRef> violations_of(const json& results) {
  std::vector<ViolationRef> out;
  if (!results.is_object() || !results.contains("checkers") || !results["checkers"].is_object()) return out;
  for (const auto& [name, c] : results["checkers"].items()) {
    if (!c.is_object() || !c.contains("violations") || !c["violations"].is_array()) continue;
    const json& list = c["violations"];
    for (std::size_t i = 0; i < list.size(); ++i) out.push_back({name, i, &list[i]});
  }
  return out;
}

FocusFinder::FocusFinder(const Timeline& t) : t_(t) {
  for (std::size_t i = 0; i < t.resource.size(); ++i) seq_entry_.emplace_back(t.resource[i].seq, i);
  std::sort(seq_entry_.begin(), seq_entry_.end());
  for (std::size_t i = 0; i < t.holds.size(); ++i) {
    if (t.holds[i].token && !t.holds[i].node.empty()) hold_of_.emplace(std::make_pair(t.holds[i].node, *t.holds[i].token), i);
  }
}

void FocusFinder::add_seq(std::uint64_t seq, Focus& f, std::vector<Nanos>& times) const {
  f.seqs.push_back(seq);
  auto it = std::lower_bound(seq_entry_.begin(), seq_entry_.end(), std::make_pair(seq, std::size_t{0}));
  if (it == seq_entry_.end() || it->first != seq) return;
  const ResourceEntry& r = t_.resource[it->second];
  times.push_back(r.time);
  if (!r.token) return;
  auto h = hold_of_.find({r.client, *r.token});
  if (h == hold_of_.end()) return;
  const Hold& hold = t_.holds[h->second];
  f.indices.push_back(hold.acquire_index);
  f.processes.push_back(hold.process);
  times.push_back(hold.start);
}

void FocusFinder::walk(const json& j, bool context, Focus& f, std::vector<Nanos>& times) const {
  if (j.is_array()) {
    for (const auto& x : j) walk(x, context, f, times);
    return;
  }
  if (!j.is_object()) return;
  for (const auto& [k, v] : j.items()) {
    if (v.is_structured()) {
      walk(v, context || k == "prefix_tail", f, times);
      continue;
    }
    if (!v.is_number_integer()) continue;
    const auto n = v.get<std::int64_t>();
    if (k == "process") {
      if (!context) f.processes.push_back(n);
    } else if (is_index_field(k) && n >= 0) {
      const auto i = static_cast<std::uint64_t>(n);
      (context ? f.context : f.indices).push_back(i);
      if (!context && i < t_.event_times.size()) times.push_back(t_.event_times[i]);
    } else if ((k == "seq" || k == "highest_seq") && n >= 0 && !context) {
      add_seq(static_cast<std::uint64_t>(n), f, times);
    } else if (is_time_field(k) && !context) {
      times.push_back(n);
    }
  }
}

Focus FocusFinder::focus_of(const json& violation) const {
  Focus f;
  std::vector<Nanos> times;
  walk(violation, false, f, times);
  sort_unique(f.processes);
  sort_unique(f.indices);
  sort_unique(f.context);
  sort_unique(f.seqs);
  if (times.empty()) {
    f.from = t_.event_times.empty() ? 0 : t_.event_times.front();
    f.to = t_.end_time;
  } else {
    auto [lo, hi] = std::minmax_element(times.begin(), times.end());
    f.from = *lo;
    f.to = *hi;
  }
  return f;
}

json report_data(const Timeline& t, const std::vector<ViolationRef>& violations) {
  Strings s;
  json ops = json::array();
  for (const auto& o : t.ops) {
    ops.push_back({o.process, static_cast<int>(o.f), outcome_code(o.outcome), us(o.invoke),
                   o.complete < 0 ? -1 : us(o.complete), o.invoke_index,
                   o.outcome ? json(o.complete_index) : json(-1), s.id(o.key), s.id(o.node), s.id(o.value),
                   s.id(o.error)});
  }
  json holds = json::array();
  for (const auto& h : t.holds) {
    holds.push_back({h.process, s.id(h.key), s.id(h.node), us(h.start), us(h.end), ended_code(h.ended_by),
                     h.acquire_index, token_json(h.token)});
  }
  json faults = json::array();
  for (const auto& f : t.faults) {
    faults.push_back({s.id(f.fault), s.id(f.began_by), s.id(f.ended_by), us(f.start), us(f.end),
                      f.open_at_end ? 1 : 0, s.id(f.targets), s.id(f.value), f.start_index,
                      f.end_index ? json(*f.end_index) : json()});
  }
  json marks = json::array();
  for (const auto& m : t.marks) marks.push_back({us(m.time), s.id(m.f), s.id(m.value), m.index});
  json notices = json::array();
  for (const auto& n : t.notices) {
    notices.push_back({n.process, s.id(std::string(to_string(n.f))), us(n.time), s.id(n.key), s.id(n.node)});
  }
  json res = json::array();
  for (const auto& r : t.resource) {
    res.push_back({r.seq, us(r.time), s.id(r.key), static_cast<int>(r.op), token_json(r.token),
                   r.accepted ? 1 : 0, s.id(r.client), s.id(r.reason), s.id(r.value)});
  }
  FocusFinder finder(t);
  json viol = json::array();
  for (const auto& v : violations) {
    const json& raw = *v.violation;
    Focus f = finder.focus_of(raw);
    json o = {{"c", v.checker},  {"n", v.number},     {"from", us(f.from)}, {"to", us(f.to)},
              {"p", f.processes}, {"i", f.indices},   {"ci", f.context},    {"s", f.seqs},
              {"msg", violation_message(raw)}};
    if (raw.is_object() && raw.contains("prefix_length")) o["lin"] = raw;
    if (raw.is_object() && raw.contains("blame") && raw["blame"].is_object()) o["b"] = blame_data(raw);
    viol.push_back(std::move(o));
  }
  return {{"version", 1},
          {"start", t.event_times.empty() ? 0 : us(t.event_times.front())},
          {"end", us(t.end_time)},
          {"fn", fn_names()},
          {"ops", std::move(ops)},
          {"holds", std::move(holds)},
          {"faults", std::move(faults)},
          {"marks", std::move(marks)},
          {"notices", std::move(notices)},
          {"res", std::move(res)},
          {"viol", std::move(viol)},
          {"str", s.table()}};
}

}  // namespace fencecheck::report
