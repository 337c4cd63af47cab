// The fenced resource's state and rules, apart from any network code.
//
// Per key it keeps the current value (canonical JSON text; a key never written reads
// `null`) and the highest token it has accepted. Reads and writes both carry the holder's
// token: a lock-protected read-modify-write is only safe if the resource sees the token at
// the read too — otherwise two overlapping holders can both read, the older one write
// first (its token is still the highest seen) and the newer one overwrite it, a lost
// update fencing did not stop. In fenced mode an access whose token is lower than the
// highest accepted is rejected; an equal or higher one is accepted and raises it; a
// rejected access never raises it. An access without a token (the backend gives none) is
// accepted in fenced mode too: there is nothing to compare, and refusing it would make
// every tokenless backend unusable; the resource checker ignores null tokens the same way.
// Unfenced mode accepts everything (and still records the tokens).
//
// Every request, read or write, is appended to the log as one resource.jsonl line
// (docs/history.md: seq, time, key, op, token, value, accepted, reason, client) and flushed
// before the call returns. One mutex serializes apply + log, so seq order is apply order
// and time never decreases. Thread-safe. The log stream is not owned and must outlive it.
//
// The log is the only witness the resource checker has, so a line that cannot be written
// (disk full, I/O error) is fatal to the store: that call throws HarnessError naming the
// log, and every later call throws too, applying nothing — an access missing from the log
// could hide a stale write, and a verdict over such a log could be a false `valid`. The
// service turns this into an error reply and the process's exit (resource_server.h).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

namespace fencecheck {

enum class ResourceMode { kFenced, kUnfenced };
// "fenced" / "unfenced"; nullopt for anything else.
std::optional<ResourceMode> parse_resource_mode(std::string_view s);

struct WriteOutcome {
  bool accepted = false;
  std::string reason;  // why rejected; empty when accepted
};

struct ReadOutcome {
  bool accepted = false;
  std::string reason;  // why rejected; empty when accepted
  std::string value;   // the key's value as JSON text, when accepted
};

class FencedStore {
 public:
  // clock: nanoseconds since the test started, stamped on each log line. log_name names
  // the log in error messages (its path).
  FencedStore(ResourceMode mode, std::ostream& log, std::function<std::int64_t()> clock,
              std::string log_name = "the resource log");

  // The key's value, unless the token is stale (fenced mode).
  ReadOutcome read(const std::string& key, std::optional<std::int64_t> token, const std::string& client);
  // value_json must be valid JSON; a write whose value is not is rejected (and logged
  // with value null and the parse error as its reason).
  WriteOutcome write(const std::string& key, std::optional<std::int64_t> token,
                     const std::string& value_json, const std::string& client);
  // Compare-and-set: sets the key to value_json iff it holds expect_json now (compared as
  // canonical JSON) and the token is not stale. A refused cas changes nothing, the fence
  // included. Logged with op "cas" and the expected value as "expect".
  WriteOutcome cas(const std::string& key, std::optional<std::int64_t> token,
                   const std::string& expect_json, const std::string& value_json,
                   const std::string& client);

  ResourceMode mode() const { return mode_; }
  // Why the log failed; empty while it has not.
  std::string log_error() const;

 private:
  struct KeyState {
    std::string value = "null";
    std::optional<std::int64_t> highest_token;
  };
  // Empty when an access with token may proceed (and then raises the highest token);
  // otherwise why not.
  std::string admit_locked(KeyState& state, std::optional<std::int64_t> token) const;
  std::string refusal_locked(const KeyState& state, std::optional<std::int64_t> token) const;
  static void raise_locked(KeyState& state, std::optional<std::int64_t> token);
  // op: "read", "write" or "cas"; expect_json: cas only (else nullptr).
  void log_locked(const std::string& key, const char* op, std::optional<std::int64_t> token,
                  const std::string& value_json, const char* expect_json, bool accepted,
                  const std::string& reason, const std::string& client);

  // Throws once the log has failed: nothing may be applied that the log cannot show.
  void check_log_locked() const;

  const ResourceMode mode_;
  std::ostream& log_;
  std::function<std::int64_t()> clock_;
  const std::string log_name_;
  std::string log_error_;  // set once, by the first write that fails
  mutable std::mutex mu_;
  std::map<std::string, KeyState> keys_;
  std::uint64_t next_seq_ = 0;
};

}  // namespace fencecheck
