#include "backends/redlock/redis_fanout.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <hiredis/hiredis.h>

namespace fencecheck {
namespace {

using Status = RedisCommandResult::Status;

// Milliseconds left until deadline, rounded up so that poll() never wakes early and spins;
// 0 once it has passed (poll then only reports what is ready already).
int poll_timeout(RedisFanout::Clock::time_point deadline) {
  auto left = deadline - RedisFanout::Clock::now();
  if (left <= RedisFanout::Clock::duration::zero()) return 0;
  return static_cast<int>(std::chrono::ceil<std::chrono::milliseconds>(left).count());
}

std::string errno_text(int err) { return std::strerror(err); }

}  // namespace

struct RedisFanout::Conn {
  enum class State { kWriting, kReading, kDone };

  explicit Conn(RedisEndpoint e) : endpoint(std::move(e)) {}
  ~Conn() { close(false); }

  // reset: send RST instead of FIN, discarding whatever this side has not yet sent.
  void close(bool reset) {
    if (fd >= 0) {
      if (reset) {
        linger l{1, 0};
        ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
      }
      ::close(fd);
    }
    fd = -1;
    connecting = false;
    unanswered = 0;
    if (reader != nullptr) redisReaderFree(reader);
    reader = nullptr;
  }

  void finish(Status status, std::string error) {
    result.status = status;
    result.error = std::move(error);
    state = State::kDone;
  }

  // A connection that owes nothing but is readable was closed by the server (it crashed
  // or restarted since the last call): a command written to it now would be lost for sure.
  void drop_if_stale() {
    if (fd < 0 || unanswered > 0 || connecting) return;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 0) > 0) close(false);
  }

  void open() {
    reader = redisReaderCreate();
    fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0 || reader == nullptr) {
      int err = errno;
      close(false);
      return finish(Status::kNotSent, "cannot connect to redis at " + endpoint.to_string() +
                                          ": " + (reader ? errno_text(err) : "out of memory"));
    }
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(endpoint.port));
    if (::inet_pton(AF_INET, endpoint.host.c_str(), &addr.sin_addr) != 1) {
      close(false);
      return finish(Status::kNotSent, "redis host \"" + endpoint.host + "\" is not an IPv4 address");
    }
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) return;
    if (errno == EINPROGRESS) {
      connecting = true;
      return;
    }
    connect_failed(errno);
  }

  void connect_failed(int err) {
    close(false);
    finish(Status::kNotSent, "cannot connect to redis at " + endpoint.to_string() + ": " + errno_text(err));
  }

  // Called when poll says the socket is writable.
  void on_writable() {
    if (connecting) {
      int err = 0;
      socklen_t len = sizeof err;
      if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
      if (err != 0) return connect_failed(err);
      connecting = false;
    }
    while (!out.empty()) {
      ssize_t n = ::send(fd, out.data(), out.size(), MSG_NOSIGNAL);
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
      if (n < 0) {
        int err = errno;
        Status status = wrote_any ? Status::kLost : Status::kNotSent;
        close(false);
        return finish(status, "write to redis at " + endpoint.to_string() + " failed: " + errno_text(err));
      }
      wrote_any = true;
      out.erase(0, static_cast<std::size_t>(n));
    }
    ++unanswered;
    state = State::kReading;
  }

  // Called when poll says the socket is readable. Keeps the reply to this call's command
  // and discards those to earlier commands, which are older in the stream.
  void on_readable() {
    char buf[4096];
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
    if (n <= 0) {
      std::string why = n == 0 ? "closed by the server" : errno_text(errno);
      close(false);
      return finish(Status::kLost, "connection to redis at " + endpoint.to_string() + " lost: " + why);
    }
    if (redisReaderFeed(reader, buf, static_cast<std::size_t>(n)) != REDIS_OK) return protocol_error();
    while (state == State::kReading) {
      void* raw = nullptr;
      if (redisReaderGetReply(reader, &raw) != REDIS_OK) return protocol_error();
      if (raw == nullptr) return;
      RedisReplyPtr reply(static_cast<redisReply*>(raw));
      if (--unanswered > 0) continue;
      result.reply = std::move(reply);
      finish(Status::kReply, "");
    }
  }

  void protocol_error() {
    std::string why = reader->errstr;
    close(true);
    finish(Status::kLost, "bad reply from redis at " + endpoint.to_string() + ": " + why);
  }

  RedisEndpoint endpoint;
  int fd = -1;
  bool connecting = false;
  int unanswered = 0;  // commands written whose replies have not been read
  redisReader* reader = nullptr;

  // This call's state.
  State state = State::kDone;
  std::string out;  // the bytes of the command not written yet
  bool wrote_any = false;
  RedisCommandResult result;
};

RedisFanout::RedisFanout(std::vector<RedisEndpoint> endpoints) {
  for (auto& e : endpoints) conns_.push_back(std::make_unique<Conn>(std::move(e)));
}

RedisFanout::~RedisFanout() = default;

const RedisEndpoint& RedisFanout::endpoint(std::size_t i) const { return conns_.at(i)->endpoint; }

std::vector<RedisCommandResult> RedisFanout::send_all(const std::vector<std::string>& args,
                                                      Clock::time_point deadline,
                                                      const std::function<void()>& after_send) {
  std::vector<const char*> argv;
  std::vector<std::size_t> lens;
  for (const std::string& a : args) {
    argv.push_back(a.data());
    lens.push_back(a.size());
  }
  char* formatted = nullptr;
  int len = redisFormatCommandArgv(&formatted, static_cast<int>(args.size()), argv.data(), lens.data());
  if (len < 0) throw std::bad_alloc();
  std::string command(formatted, static_cast<std::size_t>(len));
  redisFreeCommand(formatted);

  for (auto& c : conns_) {
    c->result = RedisCommandResult{};
    c->out = command;
    c->wrote_any = false;
    c->state = Conn::State::kWriting;
    c->drop_if_stale();
    if (c->fd < 0) c->open();
  }
  write_phase(deadline);
  if (after_send) after_send();
  read_phase(deadline);

  std::vector<RedisCommandResult> results;
  for (auto& c : conns_) results.push_back(std::move(c->result));
  return results;
}

void RedisFanout::write_phase(Clock::time_point deadline) {
  // Established connections take the command at once; only connects make this wait.
  for (auto& c : conns_) {
    if (c->state == Conn::State::kWriting && !c->connecting) c->on_writable();
  }
  if (poll_while(/*writing=*/true, deadline)) return;
  for (auto& c : conns_) {
    if (c->state != Conn::State::kWriting) continue;
    // A half-written command would corrupt the stream: this connection is finished.
    Status status = c->wrote_any ? Status::kLost : Status::kNotSent;
    std::string what = c->connecting ? "timeout connecting to redis at " : "timeout writing to redis at ";
    c->close(true);
    c->finish(status, what + c->endpoint.to_string());
  }
}

bool RedisFanout::poll_while(bool writing, Clock::time_point deadline) {
  const Conn::State state = writing ? Conn::State::kWriting : Conn::State::kReading;
  const short events = writing ? POLLOUT : POLLIN;
  while (true) {
    std::vector<pollfd> fds;
    std::vector<Conn*> who;
    for (auto& c : conns_) {
      if (c->state != state) continue;
      fds.push_back({c->fd, events, 0});
      who.push_back(c.get());
    }
    if (fds.empty()) return true;
    int ready = ::poll(fds.data(), fds.size(), poll_timeout(deadline));
    if (ready == 0 || (ready < 0 && errno != EINTR)) return false;
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      if (writing) who[i]->on_writable();
      else who[i]->on_readable();
    }
  }
}

void RedisFanout::read_phase(Clock::time_point deadline) {
  if (poll_while(/*writing=*/false, deadline)) return;
  for (auto& c : conns_) {
    if (c->state != Conn::State::kReading) continue;
    // Kept open: the next command queues behind this one (see the header).
    c->finish(Status::kLost, "timeout waiting for redis at " + c->endpoint.to_string());
  }
}

void RedisFanout::drop_unanswered() {
  for (auto& c : conns_) {
    if (c->unanswered > 0 || c->connecting) c->close(true);
  }
}

}  // namespace fencecheck
