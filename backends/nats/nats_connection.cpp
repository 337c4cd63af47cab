#include "backends/nats/nats_connection.h"

#include <nats/nats.h>

#include <stdexcept>

namespace fencecheck {
namespace {

using Status = NatsReply::Status;

// nats.c's words for what went wrong in this thread's last call.
// nats.c keeps the text of the thread's last error, which a call that fails without one
// (a timeout, no responders) leaves as it was: it is quoted only when it is this status's.
std::string nats_error(natsStatus s) {
  natsStatus last = NATS_OK;
  const char* text = nats_GetLastError(&last);
  std::string out = natsStatus_GetText(s);
  if (last == s && text != nullptr && *text != '\0') out += std::string(": ") + text;
  return out;
}

// The outcome rule (LockClient's) for what a JetStream request returned: an error code is a
// refusal (the server acted on nothing), no responders too (nobody took the request: the
// stream has no leader here now), a timeout may have acted, and so may a request whose
// connection went away under it.
NatsReply reply_of(natsStatus s, jsErrCode code) {
  NatsReply r;
  if (s == NATS_OK) {
    r.status = Status::kOk;
    return r;
  }
  r.error = nats_error(s);
  if (code != 0) {
    r.status = Status::kRefused;
    r.js_error = static_cast<int>(code);
  } else if (s == NATS_NO_RESPONDERS) {
    r.status = Status::kRefused;
    r.error = "no responders: nothing serves the stream's subject now (no stream leader reachable)";
  } else if (s == NATS_TIMEOUT) {
    r.status = Status::kTimedOut;
  } else if (s == NATS_ERR || s == NATS_NOT_FOUND || s == NATS_INVALID_ARG) {
    r.status = Status::kRefused;  // an error answer the library read from the server
  } else {
    r.status = Status::kLost;
  }
  return r;
}

}  // namespace

struct NatsConnection::Handles {
  natsOptions* options = nullptr;
  natsConnection* conn = nullptr;
  jsCtx* js = nullptr;
  ~Handles() {
    if (js != nullptr) jsCtx_Destroy(js);
    if (conn != nullptr) {
      natsConnection_Close(conn);
      natsConnection_Destroy(conn);
    }
    if (options != nullptr) natsOptions_Destroy(options);
  }
};

NatsConnection::NatsConnection(std::vector<std::string> servers, std::string name,
                               std::chrono::milliseconds connect_timeout, std::chrono::milliseconds command_timeout)
    : servers_(std::move(servers)),
      name_(std::move(name)),
      connect_timeout_(connect_timeout),
      command_timeout_(command_timeout) {
  if (servers_.empty()) throw std::invalid_argument("a NATS connection needs at least one server");
}

NatsConnection::~NatsConnection() = default;

NatsConnection::Handles* NatsConnection::connected(std::string* why) {
  if (handles_ && natsConnection_Status(handles_->conn) == NATS_CONN_STATUS_CONNECTED) return handles_.get();
  if (handles_ && natsConnection_Status(handles_->conn) != NATS_CONN_STATUS_CLOSED) {
    *why = "not connected (reconnecting)";  // nats.c reconnects in the background
    return nullptr;
  }
  auto h = std::make_unique<Handles>();
  std::vector<std::string> urls;
  std::vector<const char*> url_ptrs;
  for (const std::string& s : servers_) urls.push_back("nats://" + s);
  for (const std::string& u : urls) url_ptrs.push_back(u.c_str());
  natsStatus s = natsOptions_Create(&h->options);
  if (s == NATS_OK) s = natsOptions_SetServers(h->options, url_ptrs.data(), static_cast<int>(url_ptrs.size()));
  if (s == NATS_OK) s = natsOptions_SetName(h->options, name_.c_str());
  if (s == NATS_OK) s = natsOptions_SetTimeout(h->options, connect_timeout_.count());
  // The addresses given, not what the servers advertise (a tunnel's, a runtime's mapping).
  if (s == NATS_OK) s = natsOptions_SetIgnoreDiscoveredServers(h->options, true);
  if (s == NATS_OK) s = natsOptions_SetMaxReconnect(h->options, -1);
  if (s == NATS_OK) s = natsOptions_SetReconnectWait(h->options, 100);
  // A paused or cut-off server's connection is given up after about 2 s without pongs.
  if (s == NATS_OK) s = natsOptions_SetPingInterval(h->options, 1000);
  if (s == NATS_OK) s = natsOptions_SetMaxPingsOut(h->options, 2);
  if (s == NATS_OK) s = natsConnection_Connect(&h->conn, h->options);
  if (s != NATS_OK) {
    *why = "cannot connect: " + nats_error(s);
    handles_.reset();
    return nullptr;
  }
  jsOptions jo;
  jsOptions_Init(&jo);
  jo.Wait = command_timeout_.count();
  s = natsConnection_JetStream(&h->js, h->conn, &jo);
  if (s != NATS_OK) {
    *why = "no JetStream context: " + nats_error(s);
    handles_.reset();
    return nullptr;
  }
  handles_ = std::move(h);
  return handles_.get();
}

NatsReply NatsConnection::make_bucket(const NatsBucket& bucket) {
  NatsReply r;
  Handles* h = connected(&r.error);
  if (h == nullptr) return r;
  kvConfig cfg;
  kvConfig_Init(&cfg);
  cfg.Bucket = bucket.name.c_str();
  cfg.History = 1;
  cfg.TTL = bucket.max_age.count() * 1000 * 1000;  // nanoseconds
  cfg.StorageType = js_FileStorage;
  cfg.Replicas = bucket.replicas;
  kvStore* kv = nullptr;
  natsStatus s = js_CreateKeyValue(&kv, h->js, &cfg);
  if (kv != nullptr) kvStore_Destroy(kv);
  return reply_of(s, static_cast<jsErrCode>(0));
}

NatsReply NatsConnection::publish_expecting(const std::string& stream, const std::string& subject,
                                            const std::string& data, const std::string& operation,
                                            std::uint64_t expected_last) {
  NatsReply r;
  Handles* h = connected(&r.error);
  if (h == nullptr) return r;
  natsMsg* msg = nullptr;
  natsStatus s = natsMsg_Create(&msg, subject.c_str(), nullptr, data.data(), static_cast<int>(data.size()));
  if (s == NATS_OK && !operation.empty()) s = natsMsgHeader_Set(msg, "KV-Operation", operation.c_str());
  if (s != NATS_OK) {
    natsMsg_Destroy(msg);
    r.error = "cannot make the message: " + nats_error(s);
    return r;
  }
  jsPubOptions po;
  jsPubOptions_Init(&po);
  po.MaxWait = command_timeout_.count();
  po.ExpectStream = stream.c_str();
  if (expected_last == 0) {
    po.ExpectNoMessage = true;
  } else {
    po.ExpectLastSubjectSeq = expected_last;
  }
  jsPubAck* ack = nullptr;
  jsErrCode code = static_cast<jsErrCode>(0);
  s = js_PublishMsg(&ack, h->js, msg, &po, &code);
  natsMsg_Destroy(msg);
  r = reply_of(s, code);
  if (s == NATS_OK && ack != nullptr) r.sequence = ack->Sequence;
  jsPubAck_Destroy(ack);
  return r;
}

NatsReply NatsConnection::last_message(const std::string& stream, const std::string& subject, NatsLastMessage* out) {
  NatsReply r;
  Handles* h = connected(&r.error);
  if (h == nullptr) return r;
  natsMsg* msg = nullptr;
  jsErrCode code = static_cast<jsErrCode>(0);
  natsStatus s = js_GetLastMsg(&msg, h->js, stream.c_str(), subject.c_str(), nullptr, &code);
  r = reply_of(s, code);
  if (s == NATS_OK && msg != nullptr) {
    out->sequence = natsMsg_GetSequence(msg);
    const char* data = natsMsg_GetData(msg);
    out->data.assign(data == nullptr ? "" : data, static_cast<std::size_t>(natsMsg_GetDataLength(msg)));
    const char* op = nullptr;
    out->operation = natsMsgHeader_Get(msg, "KV-Operation", &op) == NATS_OK && op != nullptr ? op : "";
  }
  natsMsg_Destroy(msg);
  return r;
}

NatsReply NatsConnection::stream_state(const std::string& stream, NatsStreamState* out) {
  NatsReply r;
  Handles* h = connected(&r.error);
  if (h == nullptr) return r;
  jsStreamInfo* si = nullptr;
  jsErrCode code = static_cast<jsErrCode>(0);
  natsStatus s = js_GetStreamInfo(&si, h->js, stream.c_str(), nullptr, &code);
  r = reply_of(s, code);
  if (s == NATS_OK && si != nullptr) {
    *out = NatsStreamState{};
    out->last_sequence = si->State.LastSeq;
    if (si->Cluster != nullptr) {
      out->leader = si->Cluster->Leader == nullptr ? "" : si->Cluster->Leader;
      for (int i = 0; i < si->Cluster->ReplicasLen; ++i) {
        const jsPeerInfo* p = si->Cluster->Replicas[i];
        out->followers.push_back(p->Name);
        if (!p->Current || p->Offline) out->behind.push_back(p->Name);
      }
    }
  }
  jsStreamInfo_Destroy(si);
  return r;
}

}  // namespace fencecheck
