// The lock client of the `memcached` backend: one memcached holds each lock as an item whose
// value is the holder's owner (GrantOwners), stored with a TTL.
//
// acquire: meta set in add mode, returning the item's CAS — `ms <key> <len> T<s> ME c` — so
//   it stores only when no item has the key. "HD c<cas>" is the grant; "NS" is a refusal
//   (held by another client). The CAS goes in the grant's detail ({"cas", "ttl_s"}).
// release: compare-and-delete — `mg <key> v c`, then, only when the item holds this
//   grant's owner and CAS, `md <key> C<cas>` — deletes only the item this grant stored: a
//   stale holder whose key expired (or was evicted) and was taken again by another client
//   is refused ("EN"/"NF": none; "EX" or another value: another grant's), never deletes it.
//   The CAS alone would not do: after a restart memcached counts CAS values from 1 again,
//   and `md C<cas>` of a grant from before it deleted the next holder's item of the same
//   CAS (the restart test found it). What remains: a restart and a new grant of the same
//   CAS between the read and the delete (one round trip) would still be deleted.
// No fencing token: a CAS is unique only within one server process's life (memcached keeps
//   no state, and counts CAS values from 1 again after a restart), so it cannot fence.
// No extend: LockClient has none, and memcached's touch (`mg <key> T<s>`) is not
//   conditional; a compare-and-extend would be `ms … C<cas> MR` (re-store, new CAS).
//
// TTLs are whole seconds, asked as T = ceil(ttl / 1 s). memcached's clock advances once a
// second (a timer; its "current time" is a whole second that lags the real one), and both the
// expiry time (set time + T) and the check (lazily, on access) read it, so an item of T<n>
// lasts between n - 1 and n seconds from the set, less timer jitter (a tick that comes
// late advances the clock by two). The grant therefore promises
//   valid_ms = T·1000 − kMemcachedClockTick − kMemcachedTickJitter  (never below 0),
// counted from the acquire's start (before the server's set: conservative). Measured on
// memcached 1.6.18, 30 sets each of T1, T2 and T3 at random phases, polled every 2 ms
// until gone: lifetimes 0.21–0.99 s, 1.70–2.00 s and 2.71–3.00 s, never past T, never
// shorter than T − 1 s.
//
// Outcomes follow LockClient's rule: no connection is kFail with not_sent; a refusal ("NS",
// "EX", "NF", "EN", another owner), a release whose read got no answer (a read changes
// nothing) or an error answer (SERVER_ERROR out of memory under -M, CLIENT_ERROR) is
// kFail; a timeout or a connection lost mid-command is kUnknown, as is a reply it cannot
// read. Not thread-safe; each call returns within the connect + command timeouts.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "backends/lock_client.h"
#include "backends/memcached/memcached_connection.h"

namespace fencecheck {

// memcached's clock ticks once a second: an item may go up to this much before its T.
inline constexpr std::chrono::milliseconds kMemcachedClockTick{1000};
// What a tick may come late by, on top (a loaded machine's timer): a margin, not measured.
inline constexpr std::chrono::milliseconds kMemcachedTickJitter{100};

// T in whole seconds for a ttl: rounded up, at least 1.
std::int64_t memcached_ttl_seconds(std::chrono::milliseconds ttl);
// What a grant of ttl promises (valid_ms), as above.
std::chrono::milliseconds memcached_promise(std::chrono::milliseconds ttl);

struct MemcachedClientConfig {
  std::string host;
  std::uint16_t port = 11211;
  std::chrono::milliseconds connect_timeout{500};
  std::chrono::milliseconds command_timeout{1000};

  // {"host": "10.0.0.1", "port": 11211, "connect_timeout_ms": 500, "command_timeout_ms":
  // 1000}; the timeouts are optional. Throws std::invalid_argument naming a bad field.
  static MemcachedClientConfig from_json(const nlohmann::json& j);
  nlohmann::json to_json() const;
};

class MemcachedLockClient : public LockClient {
 public:
  // client_name makes owners unique across workers; it is the worker's node name.
  MemcachedLockClient(const MemcachedClientConfig& config, std::string client_name);

  LockResult acquire(const std::string& key, std::chrono::milliseconds ttl) override;
  LockResult release(const Grant& g) override;

 private:
  MemcachedConnection conn_;
  GrantOwners owners_;
};

}  // namespace fencecheck
