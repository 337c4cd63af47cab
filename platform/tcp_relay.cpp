#include "platform/tcp_relay.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <exception>
#include <iostream>

#include "platform/errors.h"
#include "platform/os_util.h"
#include "platform/tcp.h"

namespace fencecheck {

namespace {

using namespace std::chrono_literals;

constexpr int kPollMs = 100;
constexpr std::chrono::milliseconds kMinBackOff{10};
constexpr std::chrono::milliseconds kMaxBackOff{1000};
constexpr std::size_t kBufferBytes = 64 * 1024;

// One direction of a connection: bytes read from `from` wait in buf until `to` takes them.
struct Direction {
  int from;
  int to;
  std::string buf;
  bool eof = false;   // `from` sent FIN
  bool shut = false;  // FIN passed on to `to`
};

// Reads what `d.from` has; false on a reset or error (the caller closes both ends).
bool pull(Direction& d) {
  char chunk[16384];
  ssize_t n = ::read(d.from, chunk, sizeof chunk);
  if (n > 0) {
    d.buf.append(chunk, static_cast<std::size_t>(n));
    return true;
  }
  if (n == 0) {
    d.eof = true;
    return true;
  }
  return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
}

bool push(Direction& d) {
  ssize_t n = ::send(d.to, d.buf.data(), d.buf.size(), MSG_NOSIGNAL);
  if (n >= 0) {
    d.buf.erase(0, static_cast<std::size_t>(n));
    return true;
  }
  return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
}

short wanted(const Direction& in, const Direction& out) {
  short events = 0;
  if (!in.eof && in.buf.size() < kBufferBytes) events |= POLLIN;
  if (!out.buf.empty()) events |= POLLOUT;
  return events;
}

// Closes with a reset, so that the other side learns of the error as the relay did.
void abort_socket(int fd) {
  linger l{1, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
}

}  // namespace

UniqueFd listen_in_namespace(const std::string& netns_path, const std::string& address, std::uint16_t port) {
  UniqueFd ns(::open(netns_path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!ns.valid()) throw HarnessError("cannot open network namespace " + netns_path + ": " + os::strerror_string(errno));
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(port);
  if (::inet_pton(AF_INET, address.c_str(), &sa.sin_addr) != 1) {
    throw HarnessError("relay address \"" + address + "\" is not an IPv4 address");
  }
  UniqueFd listener;
  std::string failure;
  // setns changes the calling thread only; the socket keeps the namespace it was made in.
  std::thread maker([&] {
    if (::setns(ns.get(), CLONE_NEWNET) != 0) {
      failure = "cannot enter " + netns_path + ": " + os::strerror_string(errno);
      return;
    }
    UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    int one = 1;
    ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (!fd.valid() || ::bind(fd.get(), reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 ||
        ::listen(fd.get(), 128) != 0) {
      failure = "cannot listen on " + address + ":" + std::to_string(port) + " in " + netns_path + ": " +
                os::strerror_string(errno);
      return;
    }
    listener = std::move(fd);
  });
  maker.join();
  if (!failure.empty()) throw HarnessError(failure);
  return listener;
}

TcpRelay::TcpRelay(UniqueFd listener, std::string target_address, std::uint16_t target_port)
    : listener_(std::move(listener)), target_address_(std::move(target_address)), target_port_(target_port) {
  acceptor_ = std::thread([this] { accept_loop(); });
}

void TcpRelay::stop() noexcept {
  if (stopping_.exchange(true)) return;
  if (acceptor_.joinable()) acceptor_.join();
  std::list<Connection> connections;
  {
    std::lock_guard lock(mu_);
    connections.swap(connections_);
  }
  for (auto& c : connections) c.thread.join();
  listener_.reset();
}

int TcpRelay::connection_threads() const {
  std::lock_guard lock(mu_);
  return static_cast<int>(connections_.size());
}

std::string TcpRelay::accept_error() const {
  std::lock_guard lock(mu_);
  return accept_error_;
}

void TcpRelay::accept_loop() {
  std::chrono::milliseconds delay{0};
  while (!stopping_.load()) {
    reap_finished();
    pollfd p{listener_.get(), POLLIN, 0};
    if (::poll(&p, 1, kPollMs) <= 0) continue;
    UniqueFd node_side(::accept4(listener_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (!node_side.valid()) {
      back_off_after(errno, delay);
      continue;
    }
    if (delay.count() > 0) {
      delay = std::chrono::milliseconds(0);
      std::lock_guard lock(mu_);
      accept_error_.clear();
    }
    ++accepted_;
    start_connection(std::move(node_side));
  }
}

void TcpRelay::back_off_after(int err, std::chrono::milliseconds& delay) {
  // accept(2): these concern one connection (or none) and are retried at once; the rest
  // (EMFILE, ENFILE, ENOBUFS, ENOMEM, ...) last until something is freed.
  switch (err) {
    case EAGAIN: case EINTR: case ECONNABORTED: case EPROTO: case ENETDOWN: case ENOPROTOOPT:
    case EHOSTDOWN: case ENONET: case EHOSTUNREACH: case EOPNOTSUPP: case ENETUNREACH:
      return;
    default:
      break;
  }
  std::string why = "accept on the relay to " + target_address_ + ":" + std::to_string(target_port_) + ": " +
                    os::strerror_string(err);
  if (delay.count() == 0) {  // the first of a spell: say it once
    std::cerr << "fencecheck: warning: " << why << "; retrying with a back-off of up to "
              << kMaxBackOff.count() << " ms while the nodes' connections wait\n";
  }
  {
    std::lock_guard lock(mu_);
    accept_error_ = std::move(why);
  }
  delay = std::min(kMaxBackOff, std::max(kMinBackOff, delay * 2));
  for (auto slept = std::chrono::milliseconds(0); slept < delay && !stopping_.load(); slept += kPollMs * 1ms) {
    std::this_thread::sleep_for(std::min(delay - slept, kPollMs * 1ms));
  }
}

void TcpRelay::start_connection(UniqueFd node_side) {
  std::lock_guard lock(mu_);
  Connection& c = connections_.emplace_back();
  c.thread = std::thread([this, &c, fd = std::move(node_side)]() mutable {
    carry(std::move(fd));
    c.done.store(true);
  });
}

void TcpRelay::reap_finished() {
  std::list<Connection> finished;
  {
    std::lock_guard lock(mu_);
    for (auto it = connections_.begin(); it != connections_.end();) {
      auto next = std::next(it);
      if (it->done.load()) finished.splice(finished.end(), connections_, it);
      it = next;
    }
  }
  for (auto& c : finished) c.thread.join();  // done: returns at once
}

void TcpRelay::carry(UniqueFd node_side) {
  UniqueFd server_side;
  try {
    server_side = tcp_connect(target_address_, target_port_, std::chrono::milliseconds(3000));
  } catch (const std::exception&) {
  }
  if (!server_side.valid()) {
    abort_socket(node_side.get());  // the node sees a refused server as a reset
    return;
  }
  Direction up{node_side.get(), server_side.get(), {}};
  Direction down{server_side.get(), node_side.get(), {}};
  while (!stopping_.load()) {
    pollfd p[2] = {{node_side.get(), wanted(up, down), 0}, {server_side.get(), wanted(down, up), 0}};
    int n = ::poll(p, 2, kPollMs);
    if (n < 0 && errno != EINTR) break;
    if (n <= 0) continue;
    bool ok = true;
    if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) ok = ok && (p[0].events & POLLIN ? pull(up) : true);
    if (p[1].revents & (POLLIN | POLLHUP | POLLERR)) ok = ok && (p[1].events & POLLIN ? pull(down) : true);
    if (ok && (p[0].revents & POLLOUT)) ok = push(down);
    if (ok && (p[1].revents & POLLOUT)) ok = push(up);
    if (!ok || ((p[0].revents | p[1].revents) & POLLERR)) {
      abort_socket(node_side.get());
      abort_socket(server_side.get());
      return;
    }
    // A hung-up end that has sent its FIN can take nothing more: what is left for it goes.
    if ((p[0].revents & POLLHUP) && up.eof) down.buf.clear(), down.eof = down.shut = true;
    if ((p[1].revents & POLLHUP) && down.eof) up.buf.clear(), up.eof = up.shut = true;
    for (Direction* d : {&up, &down}) {
      if (d->eof && d->buf.empty() && !d->shut) {
        ::shutdown(d->to, SHUT_WR);
        d->shut = true;
      }
    }
    if (up.shut && down.shut) return;
  }
}

}  // namespace fencecheck
