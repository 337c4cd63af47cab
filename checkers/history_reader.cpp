#include "checkers/history_reader.h"

#include "checkers/canonical_json.h"
#include "checkers/history_validator.h"
#include "checkers/jsonl.h"

namespace fencecheck {
namespace {

using simdjson::dom::element;

// Reads the next line as an object. False at end of input (including a truncated last
// line, which is recorded as a warning).
bool next_object(jsonl::LineReader& lines, jsonl::ObjectParser& parser,
                 std::vector<std::string>& warnings, simdjson::dom::object& out) {
  std::string_view line;
  while (lines.next(line)) {
    if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
    std::string error;
    if (auto obj = parser.parse(line, error)) {
      out = *obj;
      return true;
    }
    if (lines.last_line_unterminated()) {
      warnings.push_back(lines.path() + ":" + std::to_string(lines.line_number()) +
                         ": last line is truncated (no newline, " + error +
                         "); it was ignored and the lines before it were checked");
      return false;
    }
    throw InputError(lines.path(), lines.line_number(), "", error);
  }
  return false;
}

// Clears an event for reuse without giving back its strings' memory: the reader fills the
// same Event millions of times.
void reset_keeping_capacity(Event& e) {
  e.token.reset();
  e.f_name.clear();
  e.key.clear();
  e.value.clear();
  e.node.clear();
  e.error.clear();
  e.appended.clear();
  e.read_is_array = false;
  e.read_items.clear();
  e.promised = false;
  e.valid_ms.reset();
  e.bound.clear();
}

// value.valid_ms and value.bound (ops/ops.h, OpDecodes::promise). A notice must promise a
// time; a grant may promise none (null) or not say (absent).
void decode_promise(const jsonl::Fields& fl, element value, Event& e, bool notice) {
  simdjson::dom::object o;
  element valid;
  const bool is_object = !value.get_object().get(o);
  if (!is_object || o.at_key("valid_ms").get(valid)) {
    if (notice) fl.fail("value.valid_ms", "missing (a " + e.f_name + " notice says what it promised)");
    return;
  }
  e.promised = true;
  std::int64_t ms = 0;
  if (!valid.get_int64().get(ms)) {
    e.valid_ms = ms;
  } else if (!valid.is_null() || notice) {
    fl.fail("value.valid_ms", std::string("must be an integer") + (notice ? "" : " or null") +
                                  ", found " + jsonl::type_name(valid.type()));
  }
  element bound;
  if (!o.at_key("bound").get(bound)) {
    std::string_view text;
    if (bound.get_string().get(text)) fl.fail("value.bound", std::string("must be a string, found ") + jsonl::type_name(bound.type()));
    e.bound = text;
  }
}

// A member of an object value that its shape requires; `where` names it in errors.
element require_member(const jsonl::Fields& fl, simdjson::dom::object o, const char* name,
                       const char* where) {
  element m;
  if (o.at_key(name).get(m)) fl.fail(where, "missing");
  return m;
}

// Checks `value` (absent: nullopt, which counts as null) against the shape the op's
// declaration (ops/ops.h) gives this event, and decodes what the declaration says the
// checkers use: the token, the element a write appends, the items a read returned.
void decode_client_value(const jsonl::Fields& fl, std::optional<element> value, Event& e) {
  const OpSpec& op = op_spec(e.f);
  const ValueShape shape = op.shape(e.type);
  const bool is_object_shape = shape != ValueShape::kNull && shape != ValueShape::kAny;
  if (!value) {
    if (is_object_shape || (op.decodes.promise && op.notice)) fl.fail("value", "missing");
    return;
  }
  simdjson::dom::object o;
  if (is_object_shape && value->get_object().get(o)) {
    fl.fail("value", "must be an object " + std::string(to_string(shape)) + ", found " +
                         jsonl::type_name(value->type()));
  }
  if (shape == ValueShape::kNull && !value->is_null()) {
    fl.fail("value", "must be null for " + std::string(to_string(e.type)) + " " + e.f_name + ", found " +
                         jsonl::type_name(value->type()));
  }
  if (has_token(shape)) {
    std::optional<Token> token = fl.token_of(*value, "value");
    if (op.decodes.token) e.token = token;
  }
  if (shape == ValueShape::kExpectAndValue) require_member(fl, o, "expect", "value.expect");
  // What the op carries: value.value, or the value itself.
  element payload = has_value_member(shape) ? require_member(fl, o, "value", "value.value") : *value;
  simdjson::dom::array items;
  if (op.decodes.appended && !payload.get_array().get(items)) {
    std::optional<element> last;
    for (element item : items) last = item;
    if (last) append_canonical_json(*last, e.appended);
  }
  if (op.decodes.read_items && e.type == OpType::kOk && !payload.get_array().get(items)) {
    e.read_is_array = true;
    for (element item : items) e.read_items.push_back(canonical_json(item));
  }
  if (op.decodes.promise && (e.type == OpType::kOk || op.notice)) decode_promise(fl, *value, e, op.notice);
}

}  // namespace

struct HistoryReader::Impl {
  explicit Impl(const std::string& path) : lines(path), validator(path) {}
  jsonl::LineReader lines;
  jsonl::ObjectParser parser;
  HistoryValidator validator;
  std::vector<std::string> warnings;
};

HistoryReader::HistoryReader(const std::string& path) : impl_(std::make_unique<Impl>(path)) {}
HistoryReader::~HistoryReader() = default;
const std::vector<std::string>& HistoryReader::warnings() const { return impl_->warnings; }

bool HistoryReader::next(Event& e) {
  simdjson::dom::object obj;
  if (!next_object(impl_->lines, impl_->parser, impl_->warnings, obj)) return false;
  const jsonl::Fields fl{impl_->lines.path(), impl_->lines.line_number(), obj};
  reset_keeping_capacity(e);
  e.line = fl.line;
  e.index = static_cast<std::uint64_t>(fl.require_int("index", 0));
  e.time = fl.require_int("time", 0);

  element process = fl.require("process");
  std::string_view pname;
  if (!process.get_string().get(pname)) {
    if (pname != "nemesis") fl.fail("process", "must be an integer or \"nemesis\", found \"" + std::string(pname) + "\"");
    e.process = kNemesisProcess;
  } else {
    e.process = fl.require_int("process", 0);
  }

  std::string_view type = fl.require_string("type");
  auto t = parse_op_type(type);
  if (!t) fl.fail("type", "unknown type \"" + std::string(type) + "\" (expected invoke, ok, fail, info or notice)");
  e.type = *t;

  e.f_name.assign(fl.require_string("f"));
  auto value = fl.find("value");
  if (value) {
    append_canonical_json(*value, e.value);
  } else {
    e.value = "null";
  }
  e.node.assign(fl.optional_string("node"));
  e.error.assign(fl.optional_string("error"));

  if (e.is_nemesis()) {
    e.f = OpFn::kNemesis;
  } else {
    auto f = find_op(e.f_name);
    if (!f) fl.fail("f", "unknown client function \"" + e.f_name + "\" (expected one of " + op_names() + ")");
    e.f = *f;
    e.key.assign(fl.require_string("key"));
    decode_client_value(fl, value, e);
  }
  impl_->validator.check(e);
  return true;
}

struct ResourceLogReader::Impl {
  explicit Impl(const std::string& path) : lines(path) {}
  jsonl::LineReader lines;
  jsonl::ObjectParser parser;
  std::vector<std::string> warnings;
  std::optional<std::uint64_t> last_seq;
  Nanos last_time = 0;
};

ResourceLogReader::ResourceLogReader(const std::string& path)
    : impl_(std::make_unique<Impl>(path)) {}
ResourceLogReader::~ResourceLogReader() = default;
const std::vector<std::string>& ResourceLogReader::warnings() const { return impl_->warnings; }

bool ResourceLogReader::next(ResourceEntry& r) {
  simdjson::dom::object obj;
  if (!next_object(impl_->lines, impl_->parser, impl_->warnings, obj)) return false;
  const jsonl::Fields fl{impl_->lines.path(), impl_->lines.line_number(), obj};
  r = ResourceEntry{};
  r.line = fl.line;
  r.seq = static_cast<std::uint64_t>(fl.require_int("seq", 0));
  if (impl_->last_seq && r.seq <= *impl_->last_seq) {
    fl.fail("seq", "must increase: " + std::to_string(r.seq) + " after " + std::to_string(*impl_->last_seq));
  }
  impl_->last_seq = r.seq;
  r.time = fl.require_int("time", 0);
  if (r.time < impl_->last_time) fl.fail("time", "time goes backwards");
  impl_->last_time = r.time;
  r.key = std::string(fl.require_string("key"));
  std::string_view op = fl.require_string("op");
  if (op == "read") r.op = ResourceEntry::Op::kRead;
  else if (op == "write") r.op = ResourceEntry::Op::kWrite;
  else if (op == "cas") r.op = ResourceEntry::Op::kCas;
  else fl.fail("op", "must be \"read\", \"write\" or \"cas\", found \"" + std::string(op) + "\"");
  if (r.op == ResourceEntry::Op::kCas) r.expect = canonical_json(fl.require("expect"));
  element token = fl.require("token");
  if (!token.is_null()) r.token = fl.require_int("token", INT64_MIN);
  r.value = fl.find("value") ? canonical_json(*fl.find("value")) : "null";
  r.accepted = fl.require_bool("accepted");
  r.reason.assign(fl.optional_string("reason"));
  r.client.assign(fl.optional_string("client"));
  return true;
}

}  // namespace fencecheck
