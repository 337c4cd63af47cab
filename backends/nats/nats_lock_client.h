// The lock client of the `nats` backend: a lock is a key of a JetStream key-value bucket
// (a stream "KV_<bucket>" with history 1, one subject "$KV.<bucket>.<key>" per key), the
// way NATS users build one (nats-server discussion #4803), spoken over nats.c.
//
// acquire: publish the owner (GrantOwners) to the key's subject, stored only when the
//   subject has no message (header Nats-Expected-Last-Subject-Sequence: 0) — KV's Create.
//   Refused with "wrong last sequence" (10071) when it has one: then the key's last message
//   is read from the stream leader, and when that is a delete marker (a released lock, "DEL"
//   or "PURGE") the owner is published again expecting exactly that marker's sequence, as
//   nats.c's kvStore_Create does; a put there is a refusal (held by another client).
// The token is the sequence the grant was stored at: its KV revision. The stream numbers
//   every message of the bucket from 1, so revisions grow with every grant of every key —
//   as long as the stream never loses what it acknowledged.
// The lease is the bucket's max age (`max_age_ms`, set when the harness made the bucket;
//   --ttl-ms does not change it: nats-server 2.9 has no per-key TTL, which came in 2.11).
//   Each server of the stream removes a message once it is max age old by the timestamp the
//   stream's leader gave it when it stored it, which is after the acquire began; an expired
//   key is gone from the stream (the subject has no message), so the next create succeeds.
//   A grant therefore promises valid_ms = max_age from the acquire's start. The servers'
//   clocks: nats-server is a Go binary the clock library cannot reach.
// release: publish a delete marker (KV-Operation: DEL) stored only when the subject's last
//   sequence is still the grant's revision (KV's Delete with a last revision): a stale holder
//   whose key expired — and was perhaps taken again — is refused (10071), never deletes the
//   next holder's lock.
// The bucket: the harness makes it at setup; each client also makes or binds it once, at its
//   first acquire (identical config: a no-op), so that servers run by someone else
//   (--runtime external) get it too. Until that succeeds, an acquire fails unsent.
// No refresh: LockClient has none (KV's would be an update at the last revision).
//
// Outcomes follow LockClient's rule: no connection (nats.c is still reconnecting) is kFail
// with not_sent; a JetStream error answer (wrong last sequence, no stream leader: "no
// responders") is kFail; a timeout, or a connection lost under a request, is kUnknown.
// Not thread-safe; each call returns within the connect (per server) + command timeouts,
// twice for an acquire that meets a delete marker.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backends/lock_client.h"
#include "backends/nats/nats_connection.h"

namespace fencecheck {

struct NatsClientConfig {
  std::vector<std::string> servers;  // "host:port" of each server's client port
  NatsBucket bucket;
  std::chrono::milliseconds connect_timeout{500};
  std::chrono::milliseconds command_timeout{1000};

  // {"servers": ["10.0.0.1:4222", …], "bucket": "locks", "max_age_ms": 2000, "replicas": 3,
  // "connect_timeout_ms": 500, "command_timeout_ms": 1000}; bucket and the timeouts are
  // optional. Throws std::invalid_argument naming a bad field.
  static NatsClientConfig from_json(const nlohmann::json& j);
  nlohmann::json to_json() const;
};

// Whether key can be a KV key: 1..200 characters of A-Z a-z 0-9 - _ = / ., not starting or
// ending with a dot (a subject token may not be empty).
bool nats_valid_key(const std::string& key);

class NatsLockClient : public LockClient {
 public:
  NatsLockClient(const NatsClientConfig& config, std::string client_name);

  LockResult acquire(const std::string& key, std::chrono::milliseconds ttl) override;
  LockResult release(const Grant& g) override;

 private:
  LockResult granted(const std::string& key, std::string owner, std::uint64_t revision) const;
  NatsClientConfig config_;
  NatsConnection conn_;
  GrantOwners owners_;
  bool bucket_bound_ = false;
};

}  // namespace fencecheck
