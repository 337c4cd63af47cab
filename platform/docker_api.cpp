#include "platform/docker_api.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "platform/errors.h"
#include "platform/os_util.h"
#include "platform/tcp.h"
#include "platform/unique_fd.h"

namespace fencecheck {

namespace {

constexpr const char* kApiVersion = "/v1.41";

using Clock = std::chrono::steady_clock;

// Decodes a chunked body ("<hex size>\r\n<data>\r\n" … "0\r\n\r\n"). Throws on a malformed one.
std::string dechunk(const std::string& raw) {
  std::string out;
  std::size_t pos = 0;
  while (true) {
    std::size_t eol = raw.find("\r\n", pos);
    if (eol == std::string::npos) throw HarnessError("malformed chunked body from dockerd");
    std::size_t size = std::strtoul(raw.substr(pos, eol - pos).c_str(), nullptr, 16);
    if (size == 0) return out;
    if (eol + 2 + size > raw.size()) throw HarnessError("truncated chunked body from dockerd");
    out.append(raw, eol + 2, size);
    pos = eol + 2 + size + 2;
  }
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

std::optional<std::string> docker_socket_from_environment(std::string* why) {
  const char* host = std::getenv("DOCKER_HOST");
  if (host == nullptr || *host == '\0') return std::string("/var/run/docker.sock");
  std::string h = host;
  if (h.rfind("unix://", 0) == 0) return h.substr(7);
  if (why != nullptr) {
    *why = "DOCKER_HOST=" + h + " is not a unix:// socket; fencecheck talks to a local dockerd only";
  }
  return std::nullopt;
}

DockerApi::DockerApi(std::string socket_path) : socket_(std::move(socket_path)) {}

nlohmann::json DockerApi::Response::json() const {
  if (body.empty()) return nullptr;
  auto j = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  return j.is_discarded() ? nlohmann::json() : j;
}

std::string DockerApi::url_encode(const std::string& s) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

DockerApi::Response DockerApi::request(const std::string& method, const std::string& path,
                                       const nlohmann::json& body, std::chrono::milliseconds timeout) const {
  const auto deadline = Clock::now() + timeout;
  const std::string what = method + " " + path + " on " + socket_;
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd.valid()) throw HarnessError("docker: socket(): " + os::strerror_string(errno));
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (socket_.size() >= sizeof addr.sun_path) throw HarnessError("docker: socket path too long: " + socket_);
  std::memcpy(addr.sun_path, socket_.c_str(), socket_.size() + 1);
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 && errno != EINPROGRESS &&
      errno != EAGAIN) {
    throw HarnessError("docker: cannot connect to dockerd at " + socket_ + ": " + os::strerror_string(errno));
  }
  std::string payload = body.is_null() ? "" : body.dump();
  std::string req = method + " " + kApiVersion + path + " HTTP/1.1\r\nHost: docker\r\nConnection: close\r\n";
  if (!body.is_null()) req += "Content-Type: application/json\r\n";
  req += "Content-Length: " + std::to_string(payload.size()) + "\r\n\r\n" + payload;
  for (std::size_t sent = 0; sent < req.size();) {
    if (!wait_for_fd(fd.get(), POLLOUT, deadline)) throw HarnessError("docker: " + what + ": no answer in time");
    ssize_t n = ::send(fd.get(), req.data() + sent, req.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno != EAGAIN && errno != EINTR) {
      throw HarnessError("docker: " + what + ": " + os::strerror_string(errno));
    }
    if (n > 0) sent += static_cast<std::size_t>(n);
  }
  std::string raw;
  char buf[16384];
  while (true) {
    if (!wait_for_fd(fd.get(), POLLIN, deadline)) throw HarnessError("docker: " + what + ": no answer in time");
    ssize_t n = ::recv(fd.get(), buf, sizeof buf, 0);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) continue;
      throw HarnessError("docker: " + what + ": " + os::strerror_string(errno));
    }
    raw.append(buf, static_cast<std::size_t>(n));
  }
  std::size_t head_end = raw.find("\r\n\r\n");
  if (raw.rfind("HTTP/1.", 0) != 0 || head_end == std::string::npos) {
    throw HarnessError("docker: " + what + ": not an HTTP answer");
  }
  Response r;
  r.status = std::atoi(raw.c_str() + raw.find(' ') + 1);
  const std::string head = lower(raw.substr(0, head_end));
  r.body = raw.substr(head_end + 4);
  if (head.find("transfer-encoding: chunked") != std::string::npos) r.body = dechunk(r.body);
  return r;
}

nlohmann::json DockerApi::call(const std::string& what, const std::string& method, const std::string& path,
                               const nlohmann::json& body, std::chrono::milliseconds timeout) const {
  Response r = request(method, path, body, timeout);
  if ((r.status >= 200 && r.status < 300) || r.status == 304) return r.json();
  nlohmann::json j = r.json();
  std::string message = j.is_object() && j.contains("message") && j["message"].is_string()
                            ? j["message"].get<std::string>()
                            : r.body.substr(0, 300);
  throw HarnessError(what + ": " + method + " " + path + " answered " + std::to_string(r.status) + ": " +
                     message);
}

bool DockerApi::ping(std::chrono::milliseconds timeout) const {
  try {
    return request("GET", "/_ping", nullptr, timeout).status == 200;
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace fencecheck
