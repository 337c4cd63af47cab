#include "backends/zookeeper/zk_session.h"

#include <condition_variable>
#include <mutex>
#include <set>

namespace fencecheck {

struct ZkSession::Shared {
  std::mutex mu;
  std::condition_variable cv;
  State state = State::kConnecting;
  std::uint64_t events = 0;
  std::set<std::string> orphans;
};

namespace {

using Reply = ZkSession::Reply;

// One request in flight. The library owns one reference (its completion data) until it
// calls back; the caller may stop waiting (abandon it) before that.
struct Call {
  std::shared_ptr<ZkSession::Shared> shared;
  bool create = false;
  bool done = false;
  bool abandoned = false;
  Reply reply;
};
using Holder = std::shared_ptr<Call>;

template <class Fill>
void complete(int rc, const void* data, Fill fill) {
  std::unique_ptr<Holder> holder(static_cast<Holder*>(const_cast<void*>(data)));
  Call& call = **holder;
  ZkSession::Shared& shared = *call.shared;
  std::lock_guard lock(shared.mu);
  call.reply.status = Reply::Status::kAnswered;
  call.reply.rc = rc;
  if (rc == ZOK) fill(call.reply);
  call.done = true;
  // A node created after its caller stopped waiting belongs to nobody: it must go.
  if (call.abandoned && call.create && rc == ZOK) shared.orphans.insert(call.reply.path);
  shared.cv.notify_all();
}

void on_string_stat(int rc, const char* value, const Stat* stat, const void* data) {
  complete(rc, data, [&](Reply& r) {
    if (value != nullptr) r.path = value;
    if (stat != nullptr) r.stat = *stat;
  });
}

void on_strings(int rc, const String_vector* strings, const void* data) {
  complete(rc, data, [&](Reply& r) {
    for (int i = 0; strings != nullptr && i < strings->count; ++i) r.children.emplace_back(strings->data[i]);
  });
}

void on_stat(int rc, const Stat* stat, const void* data) {
  complete(rc, data, [&](Reply& r) {
    if (stat != nullptr) r.stat = *stat;
  });
}

void on_data(int rc, const char*, int, const Stat* stat, const void* data) { on_stat(rc, stat, data); }

void on_void(int rc, const void* data) {
  complete(rc, data, [](Reply&) {});
}

// The session watcher and every node watch: state changes and node events both wake a
// waiting caller, which then looks again.
void on_event(zhandle_t*, int type, int state, const char*, void* context) {
  auto* shared = static_cast<ZkSession::Shared*>(context);
  std::lock_guard lock(shared->mu);
  if (type == ZOO_SESSION_EVENT) {
    if (state == ZOO_CONNECTED_STATE) {
      shared->state = ZkSession::State::kConnected;
    } else if (state == ZOO_EXPIRED_SESSION_STATE || state == ZOO_AUTH_FAILED_STATE) {
      shared->state = ZkSession::State::kExpired;
    } else {
      shared->state = ZkSession::State::kConnecting;  // the session may live on
    }
  }
  ++shared->events;
  shared->cv.notify_all();
}

}  // namespace

std::string zk_error_name(int rc) { return std::string(zerror(rc)) + " (" + std::to_string(rc) + ")"; }

ZkSession::ZkSession(std::string hosts, std::chrono::milliseconds session_timeout)
    : hosts_(std::move(hosts)), session_timeout_(session_timeout), shared_(std::make_shared<Shared>()) {
  static std::once_flag quiet;
  // The library logs every connection step at INFO to stderr (the worker's log).
  std::call_once(quiet, [] { zoo_set_debug_level(ZOO_LOG_LEVEL_WARN); });
  renew();
}

ZkSession::~ZkSession() {
  if (zh_ != nullptr) zookeeper_close(zh_);
}

void ZkSession::renew() {
  // Closing joins the library's threads: no callback runs on the old handle afterwards.
  // Never with shared_->mu held, since those callbacks take it.
  if (zh_ != nullptr) zookeeper_close(zh_);
  {
    std::lock_guard lock(shared_->mu);
    shared_->state = State::kConnecting;
    shared_->orphans.clear();  // they went with the old session
    ++shared_->events;
  }
  ++generation_;
  zh_ = zookeeper_init(hosts_.c_str(), on_event, static_cast<int>(session_timeout_.count()), nullptr,
                       shared_.get(), ZOO_NO_LOG_CLIENTENV);
}

ZkSession::State ZkSession::connect(Clock::time_point deadline) {
  if (zh_ == nullptr || state() == State::kExpired) renew();
  if (zh_ == nullptr) return State::kConnecting;  // zookeeper_init failed; try again next time
  return settle(deadline);
}

ZkSession::State ZkSession::settle(Clock::time_point deadline) {
  std::unique_lock lock(shared_->mu);
  shared_->cv.wait_until(lock, deadline, [&] { return shared_->state != State::kConnecting; });
  return shared_->state;
}

ZkSession::State ZkSession::state() const {
  std::lock_guard lock(shared_->mu);
  return shared_->state;
}

std::uint64_t ZkSession::events() const {
  std::lock_guard lock(shared_->mu);
  return shared_->events;
}

void ZkSession::wait_event(std::uint64_t seen, Clock::time_point deadline) {
  std::unique_lock lock(shared_->mu);
  shared_->cv.wait_until(lock, deadline, [&] { return shared_->events > seen; });
}

template <class Issue>
ZkSession::Reply ZkSession::run(Issue issue, Clock::time_point deadline, bool create) {
  Reply refused;
  if (zh_ == nullptr) {
    refused.rc = ZINVALIDSTATE;
    return refused;
  }
  auto call = std::make_shared<Call>();
  call->shared = shared_;
  call->create = create;
  auto* holder = new Holder(call);
  int rc = issue(holder);
  if (rc != ZOK) {  // the library refused it: nothing was queued, no callback will come
    delete holder;
    refused.rc = rc;
    return refused;
  }
  std::unique_lock lock(shared_->mu);
  if (!shared_->cv.wait_until(lock, deadline, [&] { return call->done; })) {
    call->abandoned = true;
    Reply none;
    none.status = Reply::Status::kNoReply;
    return none;
  }
  return call->reply;
}

ZkSession::Reply ZkSession::create(const std::string& path, const std::string& data, int mode,
                                   Clock::time_point deadline) {
  return run(
      [&](Holder* h) {
        return zoo_acreate2(zh_, path.c_str(), data.data(), static_cast<int>(data.size()),
                            &ZOO_OPEN_ACL_UNSAFE, mode, on_string_stat, h);
      },
      deadline, (mode & ZOO_EPHEMERAL) != 0);
}

ZkSession::Reply ZkSession::children(const std::string& path, Clock::time_point deadline) {
  return run([&](Holder* h) { return zoo_aget_children(zh_, path.c_str(), 0, on_strings, h); }, deadline,
             false);
}

ZkSession::Reply ZkSession::exists(const std::string& path, Clock::time_point deadline) {
  return run([&](Holder* h) { return zoo_aexists(zh_, path.c_str(), 0, on_stat, h); }, deadline, false);
}

ZkSession::Reply ZkSession::watch(const std::string& path, Clock::time_point deadline) {
  return run([&](Holder* h) { return zoo_awget(zh_, path.c_str(), on_event, shared_.get(), on_data, h); },
             deadline, false);
}

ZkSession::Reply ZkSession::remove(const std::string& path, Clock::time_point deadline) {
  return run([&](Holder* h) { return zoo_adelete(zh_, path.c_str(), -1, on_void, h); }, deadline, false);
}

void ZkSession::add_orphan(const std::string& path) {
  std::lock_guard lock(shared_->mu);
  shared_->orphans.insert(path);
}

void ZkSession::sweep(Clock::time_point deadline) {
  std::set<std::string> orphans;
  {
    std::lock_guard lock(shared_->mu);
    if (shared_->state != State::kConnected) return;
    orphans = shared_->orphans;
  }
  for (const std::string& path : orphans) {
    Reply r = remove(path, deadline);
    if (r.status == Reply::Status::kAnswered && (r.rc == ZOK || r.rc == ZNONODE)) {
      std::lock_guard lock(shared_->mu);
      shared_->orphans.erase(path);
    }
  }
}

}  // namespace fencecheck
