#include "adapters/adapter_client.h"

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
      {"lock", {{"ttl_ms", settings_.ttl.count()}, {"acquire_timeout_ms", settings_.acquire_timeout.count()}}}};
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
  if (body["type"] == "lost") {
    notice = lost_event_locked(body, line, instance);
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

std::optional<LibraryNotice> AdapterLockClient::lost_event_locked(const nlohmann::json& body, const std::string& line,
                                                                  std::uint64_t instance) {
  const bool can_lose = can_locked("lost_event");
  if (!can_lose || !body.contains("key") || !body["key"].is_string() || !body.contains("lease") ||
      !body["lease"].is_string()) {
    break_locked(std::string(can_lose ? "sent a lost event without a key and lease: "
                                      : "sent a lost event without the lost_event capability: ") +
                 quoted(line));
    return std::nullopt;
  }
  const nlohmann::json& reason = body.contains("reason") ? body["reason"] : nlohmann::json();
  LibraryNotice n;
  n.kind = LibraryNotice::Kind::kLost;
  n.key = body["key"].get<std::string>();
  n.owner = std::to_string(instance) + ":" + body["lease"].get<std::string>();
  n.reason = reason.is_string() ? reason.get<std::string>() : reason.dump();
  return n;
}

std::optional<LibraryNotice> AdapterLockClient::paused_event_locked(const nlohmann::json& body,
                                                                    const std::string& line) {
  using State = PauseWatch::State;
  const nlohmann::json& key = body.contains("key") ? body["key"] : nlohmann::json();
  const nlohmann::json& ms = body.contains("ms") ? body["ms"] : nlohmann::json();
  std::string wrong;
  if (!can_locked("pause_after_send")) {
    wrong = "sent a paused event without the pause_after_send capability";
  } else if (!key.is_string() || !ms.is_number_integer() || ms.get<std::int64_t>() <= 0) {
    wrong = "sent a paused event without a key and a positive ms";
  } else if (pause_.state == State::kAbandoned) {
    std::cerr << "adapter " << settings_.adapter->name << ": a paused event after its acquire's deadline, ignored: "
              << line << std::endl;
    return std::nullopt;
  } else if (pause_.state != State::kInFlight) {
    wrong = "sent a paused event while no acquire with pause_after_send_ms was in flight";
  } else if (pause_.paused) {
    wrong = "sent a second paused event in one acquire";
  } else if (key.get<std::string>() != pause_.key || ms.get<std::int64_t>() != pause_.ms) {
    wrong = "sent a paused event that is not for the acquire in flight (key \"" + pause_.key +
            "\", pause_after_send_ms " + std::to_string(pause_.ms) + ")";
  }
  if (!wrong.empty()) {
    break_locked(wrong + ": " + quoted(line));
    return std::nullopt;
  }
  pause_.paused = true;
  LibraryNotice n;
  n.kind = LibraryNotice::Kind::kPaused;
  n.key = pause_.key;
  n.pause = milliseconds(pause_.ms);
  return n;
}

void AdapterLockClient::reply_locked(const nlohmann::json& body, const std::string& line) {
  const nlohmann::json& in_reply_to = body.contains("in_reply_to") ? body["in_reply_to"] : nlohmann::json();
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
  const nlohmann::json& text = r.body.contains("text") ? r.body["text"] : nlohmann::json();
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
  const nlohmann::json& lease = r.body.contains("lease") ? r.body["lease"] : nlohmann::json();
  const nlohmann::json& token = r.body.contains("token") ? r.body["token"] : nlohmann::json();
  if (lease.is_null()) broken("answered acquire_ok without a lease: " + quoted(r.body.dump()));
  if (!token.is_null() && !token.is_number_integer()) {
    broken("answered acquire_ok with a token that is no integer: " + quoted(r.body.dump()));
  }
  Grant g{key, std::nullopt, std::to_string(instance_) + ":" + (lease.is_string() ? lease.get<std::string>() : lease.dump())};
  if (token.is_number_integer()) g.token = token.get<std::int64_t>();
  res.grant = std::move(g);
  return res;
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
