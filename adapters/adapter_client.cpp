#include "adapters/adapter_client.h"
#include "platform/json_member.h"

#include <algorithm>
#include <iostream>
#include <set>
#include <utility>

#include "platform/errors.h"
#include "platform/os_util.h"

namespace fencecheck {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;


// Maelstrom's definite codes: the op did not happen. Every other code may have.
const std::set<std::int64_t> kDefiniteCodes = {10, 11, 12, 14, 22};

std::string quoted(const std::string& line) {
  return "\"" + (line.size() > 200 ? line.substr(0, 200) + "…" : line) + "\"";
}


// What a member of an event must be.
enum class Must { kString, kInteger, kPositive };

struct EventRule {
  const char* capability;  // the adapter must have declared it
  std::vector<std::pair<const char*, Must>> members;
  const char* members_text;  // "a key and lease", for the message
};

// The rule of PROTOCOL.md that an event of `type` breaks before its own ("sent a lost event
// without the lost_event capability"); "" when it has the capability and every member.
std::string event_fault(const nlohmann::json& body, const std::string& type, const EventRule& rule, bool capable) {
  if (!capable) return "sent a " + type + " event without the " + rule.capability + " capability";
  for (const auto& [name, must] : rule.members) {
    const nlohmann::json& v = json_member(body, name);
    const bool ok = must == Must::kString
                        ? v.is_string()
                        : v.is_number_integer() && (must == Must::kInteger || v.get<std::int64_t>() > 0);
    if (!ok) return "sent a " + type + " event without " + rule.members_text;
  }
  return "";
}

// A grant's owner: leases need only be unique per adapter process (adapter_client.h).
std::string owner_of(std::uint64_t instance, const std::string& lease) {
  return std::to_string(instance) + ":" + lease;
}

}  // namespace

struct AdapterLockClient::Reply {
  bool answered = false;
  nlohmann::json body;
  milliseconds paused{0};  // the request's pause_after_send_ms, when its `paused` event came
};

AdapterLockClient::AdapterLockClient(AdapterSettings settings) : settings_(std::move(settings)) {
  start(Clock::now() + settings_.init_timeout, /*first=*/true);
}

AdapterLockClient::~AdapterLockClient() { process_.reset(); }

void AdapterLockClient::broken(const std::string& what) const {
  const AdapterInfo& a = *settings_.adapter;
  milliseconds paused(0);
  {
    std::lock_guard lock(mu_);
    if (pause_.paused) paused = milliseconds(pause_.ms);
  }
  AdapterBroken e("adapter " + a.name + " (" + a.library + " " + a.version + ") " + what + "; its stderr (" +
                      settings_.log.string() + ") ends:\n" + os::file_tail(settings_.log.string(), 10));
  e.paused_after_send = paused;
  throw e;
}

bool AdapterLockClient::start(Clock::time_point deadline, bool first) {
  process_.reset();
  {
    std::lock_guard lock(mu_);
    broken_.clear();
    awaited_ = 0;
    pause_ = PauseWatch{};
    ++instance_;
  }
  std::filesystem::path program =
      settings_.program.empty() ? adapter_program(*settings_.adapter) : settings_.program;
  try {
    process_ = std::make_unique<AdapterProcess>(AdapterProcess::Options{
        program, settings_.log, [this, n = instance_](const std::string& line) { on_line(line, n); },
        [this](const std::string& how) { on_end(how); }});
  } catch (const HarnessError& e) {
    broken(std::string("could not be started: ") + e.what());
  }
  nlohmann::json init = {
      {"type", "init"},
      {"node_id", settings_.node},
      {"backend", {{"kind", settings_.backend}, {"endpoints", settings_.endpoints}, {"config", settings_.client_config}}},
      {"lock", {{"ttl_ms", settings_.ttl.count()}, {"acquire_timeout_ms", settings_.acquire_timeout.count()}}},
      {"options", settings_.options}};
  Reply r = call(init, deadline);
  if (!r.answered) {
    if (!first) return false;  // call() stopped it
    broken("did not answer init within " + std::to_string(settings_.init_timeout.count()) + " ms");
  }
  if (r.body.value("type", "") != "init_ok") broken("answered init with " + quoted(r.body.dump()));
  std::lock_guard lock(mu_);
  init_ok_ = r.body;
  return true;
}

std::optional<LockResult> AdapterLockClient::ensure_running(const char* op) {
  if (process_) return std::nullopt;
  if (start(Clock::now() + settings_.op_timeout, /*first=*/false)) return std::nullopt;
  LockResult res;
  res.outcome = Outcome::kFail;  // nothing was sent: the fresh adapter never got the op
  res.not_sent = true;
  res.error = "adapter " + settings_.adapter->name + " was replaced, and its replacement did not answer init within " +
              std::to_string(settings_.op_timeout.count()) + " ms; " + op + " was not sent";
  return res;
}

std::optional<std::string> AdapterLockClient::lease_of(const std::string& owner) const {
  const std::string prefix = std::to_string(instance_) + ":";
  if (!process_ || owner.rfind(prefix, 0) != 0) return std::nullopt;
  return owner.substr(prefix.size());
}

AdapterLockClient::Reply AdapterLockClient::call(nlohmann::json body, Clock::time_point deadline) {
  std::unique_lock lock(mu_);
  const std::int64_t id = ++last_id_;
  awaited_ = id;
  reply_.reset();
  pause_ = PauseWatch{};
  if (body.contains("pause_after_send_ms")) {
    pause_ = PauseWatch{PauseWatch::State::kInFlight, body.value("key", ""), body["pause_after_send_ms"].get<std::int64_t>()};
  }
  body["msg_id"] = id;
  const std::string text = nlohmann::json{{"src", "h"}, {"dest", settings_.node}, {"body", body}}.dump();
  lock.unlock();
  bool sent = process_->send(text, deadline);
  lock.lock();
  auto settled = [&] { return reply_.has_value() || !broken_.empty(); };
  if (sent && !replied_.wait_until(lock, deadline, settled)) replied_.wait_for(lock, kReplyGrace, settled);
  // A send that failed because the adapter is gone: its end is what to report.
  if (!sent) replied_.wait_for(lock, kReplyGrace, [&] { return !broken_.empty(); });
  awaited_ = 0;
  // A `paused` event from now on comes too late to count: dropped, like a late reply.
  if (pause_.state == PauseWatch::State::kInFlight) pause_.state = PauseWatch::State::kAbandoned;
  const milliseconds paused(pause_.paused ? pause_.ms : 0);
  if (!broken_.empty()) {
    std::string why = broken_;
    lock.unlock();
    broken(why);
  }
  if (reply_) return Reply{true, std::move(*reply_), paused};
  // Nothing is known of what it is doing: it may still act on this request, so it is
  // replaced before the next one.
  lock.unlock();
  process_.reset();
  return Reply{false, nullptr, paused};
}

void AdapterLockClient::on_line(const std::string& line, std::uint64_t instance) {
  nlohmann::json msg = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  std::unique_lock lock(mu_);
  if (msg.is_discarded() || !msg.is_object() || !msg.contains("body") || !msg["body"].is_object() ||
      !msg["body"].contains("type") || !msg["body"]["type"].is_string()) {
    break_locked("wrote a line on stdout that is no protocol message: " + quoted(line));
    return;
  }
  const nlohmann::json& body = msg["body"];
  std::optional<LibraryNotice> notice;
  if (body["type"] == "lost" || body["type"] == "renewed") {
    notice = grant_event_locked(body, line, instance);
  } else if (body["type"] == "paused") {
    notice = paused_event_locked(body, line);
  } else {
    reply_locked(body, line);
  }
  if (!notice) return;
  // Told on this thread before the next line is read: a `paused` before its acquire's reply.
  NoticeListener listener = listener_;
  lock.unlock();
  if (listener) listener(*notice);
}

void AdapterLockClient::break_locked(const std::string& why) {
  if (broken_.empty()) broken_ = why;
  replied_.notify_all();
}

bool AdapterLockClient::can_locked(const std::string& capability) const {
  const nlohmann::json caps = init_ok_.value("capabilities", nlohmann::json::array());
  return caps.is_array() && std::find(caps.begin(), caps.end(), capability) != caps.end();
}

std::optional<LibraryNotice> AdapterLockClient::grant_event_locked(const nlohmann::json& body,
                                                                   const std::string& line, std::uint64_t instance) {
  static const EventRule kLost{"lost_event", {{"key", Must::kString}, {"lease", Must::kString}}, "a key and lease"};
  static const EventRule kRenewed{"auto_renew",
                                  {{"key", Must::kString}, {"lease", Must::kString}, {"valid_ms", Must::kInteger}},
                                  "a key, a lease and an integer valid_ms"};
  const std::string type = body["type"].get<std::string>();
  const EventRule& rule = type == "lost" ? kLost : kRenewed;
  if (std::string wrong = event_fault(body, type, rule, can_locked(rule.capability)); !wrong.empty()) {
    break_locked(wrong + ": " + quoted(line));
    return std::nullopt;
  }
  LibraryNotice n;
  n.key = body["key"].get<std::string>();
  n.owner = owner_of(instance, body["lease"].get<std::string>());
  if (type == "renewed") {
    n.kind = LibraryNotice::Kind::kRenewed;
    n.valid = milliseconds(body["valid_ms"].get<std::int64_t>());
    return n;
  }
  const nlohmann::json& reason = json_member(body, "reason");
  n.kind = LibraryNotice::Kind::kLost;
  n.reason = reason.is_string() ? reason.get<std::string>() : reason.dump();
  return n;
}

std::optional<LibraryNotice> AdapterLockClient::paused_event_locked(const nlohmann::json& body,
                                                                    const std::string& line) {
  using State = PauseWatch::State;
  static const EventRule kPaused{"pause_after_send", {{"key", Must::kString}, {"ms", Must::kPositive}},
                                 "a key and a positive ms"};
  auto refuse = [&](const std::string& why) {
    break_locked(why + ": " + quoted(line));
    return std::nullopt;
  };
  if (std::string wrong = event_fault(body, "paused", kPaused, can_locked(kPaused.capability)); !wrong.empty()) {
    return refuse(wrong);
  }
  if (pause_.state == State::kAbandoned) {
    std::cerr << "adapter " << settings_.adapter->name << ": a paused event after its acquire's deadline, ignored: "
              << line << std::endl;
    return std::nullopt;
  }
  if (pause_.state != State::kInFlight) {
    return refuse("sent a paused event while no acquire with pause_after_send_ms was in flight");
  }
  if (pause_.paused) return refuse("sent a second paused event in one acquire");
  if (body["key"] != pause_.key || body["ms"] != pause_.ms) {
    return refuse("sent a paused event that is not for the acquire in flight (key \"" + pause_.key +
                  "\", pause_after_send_ms " + std::to_string(pause_.ms) + ")");
  }
  pause_.paused = true;
  LibraryNotice n;
  n.kind = LibraryNotice::Kind::kPaused;
  n.key = pause_.key;
  n.pause = milliseconds(pause_.ms);
  return n;
}

void AdapterLockClient::reply_locked(const nlohmann::json& body, const std::string& line) {
  const nlohmann::json& in_reply_to = json_member(body, "in_reply_to");
  if (!in_reply_to.is_number_integer()) {
    break_locked("sent a message that is neither a reply nor an event: " + quoted(line));
    return;
  }
  const std::int64_t id = in_reply_to.get<std::int64_t>();
  if (id == awaited_ && awaited_ != 0) {
    reply_ = body;
    if (pause_.state == PauseWatch::State::kInFlight) pause_.state = PauseWatch::State::kAnswered;
  } else if (id >= 1 && id <= last_id_) {
    std::cerr << "adapter " << settings_.adapter->name << ": a reply after its op's deadline, ignored: " << line
              << std::endl;
  } else {
    break_locked("answered msg_id " + in_reply_to.dump() + ", which was never sent");
  }
  replied_.notify_all();
}

void AdapterLockClient::on_end(const std::string& how) {
  std::lock_guard lock(mu_);
  if (broken_.empty()) broken_ = "ended unprompted: it " + how;
  replied_.notify_all();
}

LockResult AdapterLockClient::outcome(const Reply& r, const char* op) const {
  LockResult res;
  if (!r.answered) {
    res.outcome = Outcome::kUnknown;
    res.error = "adapter " + settings_.adapter->name + " did not answer " + op + " within " +
                std::to_string((settings_.op_timeout + kReplyGrace).count()) + " ms (it was replaced); its stderr ends:\n" +
                os::file_tail(settings_.log.string(), 3);
    return res;
  }
  const std::string type = r.body.value("type", "");
  if (type == std::string(op) + "_ok") {
    res.outcome = Outcome::kOk;
    return res;
  }
  if (type != "error" || !r.body.contains("code") || !r.body["code"].is_number_integer()) {
    broken("answered " + std::string(op) + " with " + quoted(r.body.dump()));
  }
  const std::int64_t code = r.body["code"].get<std::int64_t>();
  const nlohmann::json& text = json_member(r.body, "text");
  res.outcome = kDefiniteCodes.contains(code) ? Outcome::kFail : Outcome::kUnknown;
  res.error = settings_.adapter->library + " error " + std::to_string(code) + ": " +
              (text.is_string() ? text.get<std::string>() : text.dump());
  return res;
}

LockResult AdapterLockClient::acquire(const std::string& key, milliseconds ttl) {
  // This acquire's, also when it is never sent: a pause must not fall on a later one.
  const milliseconds pause = std::exchange(next_pause_, milliseconds(0));
  if (auto none = ensure_running("acquire")) return *none;
  nlohmann::json request = {{"type", "acquire"}, {"key", key}, {"ttl_ms", ttl.count()},
                            {"timeout_ms", settings_.acquire_timeout.count()}};
  // The pause stops the adapter inside the op: the op's deadline stretches by it.
  if (pause.count() > 0) request["pause_after_send_ms"] = pause.count();
  Reply r = call(request, Clock::now() + settings_.op_timeout + pause);
  LockResult res = outcome(r, "acquire");
  res.paused_after_send = r.paused;
  if (res.outcome != Outcome::kOk) return res;
  const nlohmann::json& lease = json_member(r.body, "lease");
  const nlohmann::json& token = json_member(r.body, "token");
  if (lease.is_null()) broken("answered acquire_ok without a lease: " + quoted(r.body.dump()));
  if (!token.is_null() && !token.is_number_integer()) {
    broken("answered acquire_ok with a token that is no integer: " + quoted(r.body.dump()));
  }
  Grant g{key, std::nullopt, owner_of(instance_, lease.is_string() ? lease.get<std::string>() : lease.dump())};
  if (token.is_number_integer()) g.token = token.get<std::int64_t>();
  g.promise = promise_in(r.body);
  res.grant = std::move(g);
  return res;
}

std::optional<Promise> AdapterLockClient::promise_in(const nlohmann::json& ok) const {
  const nlohmann::json& valid = json_member(ok, "valid_ms");
  const nlohmann::json& bound = json_member(ok, "bound");
  if (!valid.is_null() && !valid.is_number_integer()) {
    broken("answered acquire_ok with a valid_ms that is neither an integer nor null: " + quoted(ok.dump()));
  }
  if (!bound.is_null() && !bound.is_string()) {
    broken("answered acquire_ok with a bound that is no string: " + quoted(ok.dump()));
  }
  if (!ok.contains("valid_ms")) return std::nullopt;  // the library cannot say
  if (valid.is_number_integer()) return Promise::lasting(milliseconds(valid.get<std::int64_t>()));
  return Promise::bound_to(bound.is_string() ? bound.get<std::string>() : "");
}

// A grant of a replaced adapter: that process is gone, and with it whatever it could do.
LockResult AdapterLockClient::release(const Grant& g) {
  std::optional<std::string> lease = lease_of(g.owner);
  if (!lease) return LockResult{Outcome::kFail, std::nullopt, "not held: the adapter that granted it was replaced", true};
  Reply r = call({{"type", "release"}, {"key", g.key}, {"lease", *lease}}, Clock::now() + settings_.op_timeout);
  LockResult res = outcome(r, "release");
  if (res.outcome == Outcome::kOk && r.body.value("held_at_release", nlohmann::json()) == false) {
    res.outcome = Outcome::kFail;
    res.error = "not held (the library says the lock had expired)";
  }
  return res;
}

LockResult AdapterLockClient::extend(const Grant& g, milliseconds ttl) {
  if (!can("extend")) return LockResult{Outcome::kFail, std::nullopt, "not supported by the library", true};
  std::optional<std::string> lease = lease_of(g.owner);
  if (!lease) return LockResult{Outcome::kFail, std::nullopt, "not held: the adapter that granted it was replaced", true};
  Reply r = call({{"type", "extend"}, {"key", g.key}, {"lease", *lease}, {"ttl_ms", ttl.count()}},
                 Clock::now() + settings_.op_timeout);
  return outcome(r, "extend");
}

void AdapterLockClient::set_notice_listener(NoticeListener listener) {
  std::lock_guard lock(mu_);
  listener_ = std::move(listener);
}

nlohmann::json AdapterLockClient::init_reply() const {
  std::lock_guard lock(mu_);
  return init_ok_;
}

bool AdapterLockClient::can(const std::string& capability) const {
  std::lock_guard lock(mu_);
  return can_locked(capability);
}

int AdapterLockClient::pid() const { return process_ ? process_->pid() : 0; }

}  // namespace fencecheck
