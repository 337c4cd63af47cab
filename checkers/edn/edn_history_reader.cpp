#include "checkers/edn/edn_history_reader.h"

#include <optional>

#include "checkers/canonical_json.h"
#include "checkers/edn/edn.h"
#include "checkers/history_validator.h"
#include "checkers/input_file.h"

namespace fencecheck {

using edn::Value;

namespace {

bool is_sequence(const Value& v) { return v.kind == Value::Kind::kVector || v.kind == Value::Kind::kList; }

// [k v], and for an op whose value is {"expect", "value"} (cas) [k [old new]]: the shape of
// jepsen.independent values.
bool tuple_shaped(const Value& v, OpFn f) {
  const bool pair_inside = op_spec(f).invoke == ValueShape::kExpectAndValue;
  return v.kind == Value::Kind::kVector && v.items.size() == 2 && (!pair_inside || is_sequence(v.items[1]));
}

std::optional<Token> token_of(const Value& v) {
  if (v.kind == Value::Kind::kInt) return v.integer;
  if (const Value* t = v.get("token"); t && t->kind == Value::Kind::kInt) return t->integer;
  return std::nullopt;
}

std::string token_json(std::optional<Token> t) {
  return std::string("{\"token\":") + (t ? std::to_string(*t) : "null") + "}";
}

// The canonical text (canonical_json.h) of a value read from EDN, so that EDN and JSONL
// histories compare values alike. dump() always yields JSON, hence the value().
std::string canonical(const nlohmann::json& j) { return canonical_json_text(j.dump()).value(); }

std::string name_of(const Value& v) {
  bool named = v.kind == Value::Kind::kKeyword || v.kind == Value::Kind::kSymbol || v.kind == Value::Kind::kString;
  return named ? v.text : "";
}

}  // namespace

struct EdnHistoryReader::Impl {
  std::string name;
  std::unique_ptr<std::istream> in;
  edn::EdnParser parser;
  HistoryValidator validator;
  std::vector<std::string> warnings;
  std::uint64_t ordinal = 0;
  std::optional<std::uint64_t> last_index;
  std::optional<bool> independent;  // decided by the first client op with a non-nil value
  std::optional<bool> lines_are_time;  // decided by the first op: does it lack :time?

  Impl(std::unique_ptr<std::istream> stream, const std::string& source)
      : name(source), in(std::move(stream)), parser(*in, source), validator(source) {}

  [[noreturn]] void fail(const Value& at, const std::string& field, const std::string& what) const {
    throw InputError(name, at.line, field, "column " + std::to_string(at.column) + ": " + what);
  }

  const Value& require(const Value& op, const char* key) const {
    const Value* v = op.get(key);
    if (!v) fail(op, std::string(":") + key, "missing");
    return *v;
  }

  std::int64_t require_count(const Value& op, const char* key) const {
    const Value& v = require(op, key);
    if (v.kind != Value::Kind::kInt || v.integer < 0) {
      fail(v, std::string(":") + key, "must be a non-negative integer, found " + edn::a_kind(v.kind));
    }
    return v.integer;
  }

  Event convert(const Value& form) {
    const Value& op = form.kind == Value::Kind::kTagged ? form.items.at(0) : form;
    if (op.kind != Value::Kind::kMap) fail(op, "edn", "expected an op map, found " + edn::a_kind(op.kind));
    Event e;
    e.line = op.line;
    const Value& type = require(op, "type");
    auto t = parse_op_type(name_of(type));
    if (!t) fail(type, ":type", "must be :invoke, :ok, :fail or :info");
    e.type = *t;
    const Value& process = require(op, "process");
    if (process.is_keyword("nemesis")) {
      e.process = kNemesisProcess;
    } else if (process.kind == Value::Kind::kInt && process.integer >= 0) {
      e.process = process.integer;
    } else {
      fail(process, ":process", "must be a non-negative integer or :nemesis");
    }
    const Value& f = require(op, "f");
    e.f_name = name_of(f);
    if (e.f_name.empty()) fail(f, ":f", "must be a keyword, found " + edn::a_kind(f.kind));
    // Knossos-era histories have no :time; their line order is their real-time order.
    if (!lines_are_time) lines_are_time = op.get("time") == nullptr;
    if (*lines_are_time) {
      if (const Value* time = op.get("time")) fail(*time, ":time", "present here but absent from the first op");
      if (warnings.empty()) warnings.push_back(name + ": no :time in the ops; the order of the ops is used as time");
      e.time = static_cast<Nanos>(ordinal);
    } else {
      e.time = require_count(op, "time");
    }
    e.index = ordinal++;
    if (const Value* index = op.get("index")) {
      std::int64_t i = require_count(op, "index");
      if (last_index && static_cast<std::uint64_t>(i) <= *last_index) {
        fail(*index, ":index", "must increase, found " + std::to_string(i) + " after " + std::to_string(*last_index));
      }
      last_index = static_cast<std::uint64_t>(i);
    }
    if (const Value* error = op.get("error")) e.error = error->kind == Value::Kind::kString ? error->text : edn::to_json(*error).dump();
    static const Value kNil;
    const Value* value = op.get("value");
    if (!value) value = &kNil;
    if (e.is_nemesis()) {
      e.type = OpType::kInfo;  // Jepsen logs nemesis ops as :info; the history format requires it
      e.f = OpFn::kNemesis;
      e.value = edn::to_json(*value).dump();
    } else {
      auto fn = find_op(e.f_name);
      if (!fn || op_spec(*fn).notice) fail(f, ":f", "unsupported client function :" + e.f_name + " (known: " + op_names(/*notices=*/false) + ")");
      e.f = *fn;
      set_value(op, *value, e);
    }
    validator.check(e);
    if (last_index) e.index = *last_index;  // report Jepsen's own index
    return e;
  }

  void set_value(const Value& op, const Value& value, Event& e) {
    if (!independent && value.kind != Value::Kind::kNil) independent = tuple_shaped(value, e.f);
    const Value* inner = &value;
    e.key = kEdnDefaultKey;
    if (independent.value_or(false)) {
      if (!tuple_shaped(value, e.f)) {
        fail(value.kind == Value::Kind::kNil ? op : value, ":value",
             "expected a jepsen.independent tuple [key value] as in the ops before, found " +
                 edn::a_kind(value.kind));
      }
      e.key = edn::key_text(value.items[0]);
      inner = &value.items[1];
    }
    // Jepsen's values are bare: the token itself, the value written, [expected new]. The
    // op's declaration (ops/ops.h) says which shape this phase's value has in fencecheck's
    // history and what the checkers decode from it.
    const OpSpec& spec = op_spec(e.f);
    switch (spec.shape(e.type)) {
      case ValueShape::kNull: e.value = "null"; break;
      case ValueShape::kToken: {
        std::optional<Token> token = token_of(*inner);
        if (spec.decodes.token) e.token = token;
        e.value = token_json(token);
        break;
      }
      case ValueShape::kAny: {
        nlohmann::json read = edn::to_json(*inner);
        e.value = canonical(read);
        if (spec.decodes.read_items && e.type == OpType::kOk && read.is_array()) {
          e.read_is_array = true;
          for (const auto& item : read) e.read_items.push_back(canonical(item));
        }
        break;
      }
      case ValueShape::kTokenAndValue: {
        nlohmann::json written = edn::to_json(*inner);
        if (spec.decodes.appended && written.is_array() && !written.empty()) e.appended = canonical(written.back());
        e.value = canonical(nlohmann::json{{"token", nullptr}, {"value", std::move(written)}});
        break;
      }
      case ValueShape::kExpectAndValue:
        if (!is_sequence(*inner) || inner->items.size() != 2) {
          fail(*inner, ":value", "a " + e.f_name + " value must be [expected new], found " + edn::a_kind(inner->kind));
        }
        e.value = canonical(nlohmann::json{{"expect", edn::to_json(inner->items[0])}, {"value", edn::to_json(inner->items[1])}});
        break;
    }
  }
};

EdnHistoryReader::EdnHistoryReader(const std::string& path) : EdnHistoryReader(open_input_stream(path), path) {}

EdnHistoryReader::EdnHistoryReader(std::unique_ptr<std::istream> in, const std::string& name)
    : impl_(std::make_unique<Impl>(std::move(in), name)) {}

EdnHistoryReader::~EdnHistoryReader() = default;

bool EdnHistoryReader::next(Event& out) {
  Value form;
  if (!impl_->parser.next(form)) return false;
  out = impl_->convert(form);
  return true;
}

const std::vector<std::string>& EdnHistoryReader::warnings() const { return impl_->warnings; }

}  // namespace fencecheck
