// A connection to a NATS JetStream cluster over nats.c (libnats), as the `nats` backend's
// lock client and its server's setup use it: connect with deadlines, make or bind the
// key-value bucket, and the three JetStream requests a lock needs — publish with an
// expected last subject sequence, read a subject's last message, and the stream's info.
//
// Every call returns within its own timeout (jsOptions.Wait / jsPubOptions.MaxWait: the
// command timeout; the connect timeout for the connect). The connection reconnects on its
// own in the background (nats.c's threads), every 100 ms, forever, and publishes made
// while it is disconnected are refused here before they are sent (NatsReply::not_sent)
// rather than buffered by nats.c for later.
//
// Thread-safety: one NatsConnection is used by one thread at a time (nats.c's connection
// is thread-safe, but this object keeps the last error). Ownership: it owns its nats.c
// objects and destroys them in its destructor. Errors are values (NatsReply), never
// exceptions, except the constructor's std::invalid_argument for an empty server list.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace fencecheck {

// What one JetStream request came to.
struct NatsReply {
  enum class Status {
    kOk,        // the server answered and acted (sequence set for a publish)
    kRefused,   // the server answered with an error and did not act (js_error set)
    kNotSent,   // no connection: nothing was sent
    kTimedOut,  // sent, no answer in time: it may have acted
    kLost,      // sent or maybe sent, then the connection failed: it may have acted
  };
  Status status = Status::kNotSent;
  std::uint64_t sequence = 0;  // kOk publish: the stream sequence it was stored at
  int js_error = 0;            // kRefused: the JetStream error code (10071: wrong last sequence)
  std::string error;           // why, for everything but kOk
  bool ok() const { return status == Status::kOk; }
};

// What the last message on a subject says (js_GetLastMsg).
struct NatsLastMessage {
  std::uint64_t sequence = 0;
  std::string data;
  std::string operation;  // the KV-Operation header: "" (a put), "DEL" or "PURGE"
};

// What a stream's info says about its replication.
struct NatsStreamState {
  std::string leader;                  // the server name of its leader; empty: none now
  std::vector<std::string> followers;  // the other replicas, as the leader lists them
  std::vector<std::string> behind;     // of those, the ones the leader says are not current
  std::uint64_t last_sequence = 0;
};

struct NatsBucket {
  std::string name = "locks";
  std::chrono::milliseconds max_age{2000};
  int replicas = 3;
  // The stream that holds it ("KV_locks") and the subject of a key ("$KV.locks.l0").
  std::string stream() const { return "KV_" + name; }
  std::string subject(const std::string& key) const { return "$KV." + name + "." + key; }
};

class NatsConnection {
 public:
  // servers: "host:port" each. Connects lazily (first call) and again after a failure.
  NatsConnection(std::vector<std::string> servers, std::string name, std::chrono::milliseconds connect_timeout,
                 std::chrono::milliseconds command_timeout);
  ~NatsConnection();
  NatsConnection(const NatsConnection&) = delete;
  NatsConnection& operator=(const NatsConnection&) = delete;

  // Makes the bucket (history 1, file storage, max age and replicas as given), or binds it
  // when it exists with that configuration. kRefused when it exists otherwise.
  NatsReply make_bucket(const NatsBucket& bucket);
  // Publishes data to subject with header KV-Operation: operation (none when empty),
  // stored only when the subject's last message is `expected_last` (0: when it has none).
  NatsReply publish_expecting(const std::string& stream, const std::string& subject, const std::string& data,
                              const std::string& operation, std::uint64_t expected_last);
  // The subject's last message; a reply kRefused with js_error 10037 when it has none.
  NatsReply last_message(const std::string& stream, const std::string& subject, NatsLastMessage* out);
  NatsReply stream_state(const std::string& stream, NatsStreamState* out);

 private:
  struct Handles;
  // The connection and its JetStream context, connecting first when needed; nullptr with
  // `why` set when there is no connection.
  Handles* connected(std::string* why);
  std::vector<std::string> servers_;
  std::string name_;
  std::chrono::milliseconds connect_timeout_;
  std::chrono::milliseconds command_timeout_;
  std::unique_ptr<Handles> handles_;
};

}  // namespace fencecheck
