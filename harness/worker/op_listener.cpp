#include "harness/worker/op_listener.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "harness/control/op_channel.h"
#include "platform/errors.h"
#include "platform/unique_fd.h"

namespace fencecheck {

struct OpListener::Impl {
  std::string path;
  Handler handler;
  UniqueFd listening;
  UniqueFd stopping;  // an eventfd: readable once stop() was called
  std::thread acceptor;
  std::mutex mu;
  std::vector<std::thread> connections;
  std::set<int> open;  // the connections' fds, shut down by stop() to end their reads
  bool stopped = false;

  void accept_loop();
  void serve(UniqueFd fd);
};

OpListener::OpListener(const std::string& path, Handler handler) : impl_(std::make_unique<Impl>()) {
  impl_->path = path;
  impl_->handler = std::move(handler);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof(addr.sun_path)) {
    throw HarnessError("worker: op socket path is too long for a Unix socket (" + std::to_string(path.size()) +
                       " bytes, at most " + std::to_string(sizeof(addr.sun_path) - 1) + "): " + path);
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  std::error_code ec;
  if (std::filesystem::is_socket(path, ec)) std::filesystem::remove(path, ec);
  impl_->listening.reset(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  impl_->stopping.reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!impl_->listening.valid() || !impl_->stopping.valid() ||
      ::bind(impl_->listening.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::chmod(path.c_str(), 0600) != 0 || ::listen(impl_->listening.get(), 128) != 0) {
    throw HarnessError("worker: cannot listen on op socket " + path + ": " + std::strerror(errno));
  }
  impl_->acceptor = std::thread([impl = impl_.get()] { impl->accept_loop(); });
}

OpListener::~OpListener() {
  stop();
  impl_->acceptor.join();
  std::vector<std::thread> connections;
  {
    std::lock_guard lock(impl_->mu);
    connections.swap(impl_->connections);
  }
  for (auto& t : connections) t.join();
  std::error_code ec;
  std::filesystem::remove(impl_->path, ec);
}

void OpListener::stop() {
  const std::uint64_t one = 1;
  [[maybe_unused]] ssize_t n = ::write(impl_->stopping.get(), &one, sizeof(one));
  std::lock_guard lock(impl_->mu);
  impl_->stopped = true;
  for (int fd : impl_->open) ::shutdown(fd, SHUT_RDWR);
}

void OpListener::Impl::accept_loop() {
  for (;;) {
    pollfd fds[2] = {{listening.get(), POLLIN, 0}, {stopping.get(), POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents != 0) return;
    // Blocking: a connection's thread waits for its next op in recv (stop() shuts it down).
    UniqueFd fd(::accept4(listening.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (!fd.valid()) continue;  // the peer gave up already, or fds ran out: it sees a closed socket
    std::lock_guard lock(mu);
    if (stopped) return;
    open.insert(fd.get());
    connections.emplace_back([this, conn = std::move(fd)]() mutable { serve(std::move(conn)); });
  }
}

void OpListener::Impl::serve(UniqueFd fd) {
  for (;;) {
    proto::InvokeRequest request;
    std::string error;
    // No deadline between ops: a connection idles as long as its controller keeps it.
    FrameStatus s = receive_frame(fd.get(), request, std::chrono::steady_clock::now() + std::chrono::hours(24),
                                  &error, stopping.get());
    if (s == FrameStatus::kTimeout) continue;
    if (s != FrameStatus::kOk) break;  // closed, stopped, or garbage: the controller sees the close
    proto::InvokeReply reply = handler(request);
    if (send_frame(fd.get(), reply, std::chrono::steady_clock::now() + std::chrono::seconds(10), &error) !=
        FrameStatus::kOk) {
      break;  // the controller gave up on this op and closed the connection
    }
  }
  std::lock_guard lock(mu);  // before the fd closes, so that stop() never shuts down a reused number
  open.erase(fd.get());
}

}  // namespace fencecheck
