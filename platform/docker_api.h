// A client of the Docker Engine API (v1.41, dockerd 20.10 and later) over dockerd's Unix
// socket: HTTP/1.1, one connection per request. No docker CLI is involved, so the client
// version on $PATH does not matter.
//
// Which daemon: docker_socket_from_environment() reads DOCKER_HOST (unix:// only) or takes
// /var/run/docker.sock, as the docker CLI does.
//
// Thread-safe: no shared state but the socket path. Blocking: every request ends within
// its timeout (connect, send and receive together); a daemon that does not answer in time
// is an error, never a hang. Errors: call() throws HarnessError naming what was being done,
// the request and dockerd's own message; request() throws only when no answer came.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace fencecheck {

// The socket path DOCKER_HOST names (unix:///path), or /var/run/docker.sock when it is
// unset. nullopt, with the reason in *why, for a DOCKER_HOST that is not unix://.
std::optional<std::string> docker_socket_from_environment(std::string* why);

class DockerApi {
 public:
  explicit DockerApi(std::string socket_path);
  const std::string& socket_path() const { return socket_; }

  struct Response {
    int status = 0;
    std::string body;
    nlohmann::json json() const;  // the body parsed; null when empty or not JSON
  };
  // One request; `path` starts with "/" and gets the API version prefix. body, when not
  // null, is sent as JSON. Throws HarnessError when the daemon cannot be reached or does
  // not answer within timeout.
  Response request(const std::string& method, const std::string& path, const nlohmann::json& body = nullptr,
                   std::chrono::milliseconds timeout = std::chrono::seconds(30)) const;
  // request() that must succeed (2xx, or 304 "already so"): returns the parsed body, or
  // throws HarnessError "<what>: <METHOD path> answered <status>: <dockerd's message>".
  nlohmann::json call(const std::string& what, const std::string& method, const std::string& path,
                      const nlohmann::json& body = nullptr,
                      std::chrono::milliseconds timeout = std::chrono::seconds(30)) const;
  // True if the daemon answers /_ping within timeout. Never throws.
  bool ping(std::chrono::milliseconds timeout = std::chrono::seconds(2)) const;

  // Percent-encodes s for a query string (filters are JSON in the URL).
  static std::string url_encode(const std::string& s);

 private:
  std::string socket_;
};

}  // namespace fencecheck
