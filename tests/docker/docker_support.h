// Test support for the docker integration tests: whether the private dockerd of
// tests/docker/dockerd.sh is up (ctest starts it, with the image, before these tests and
// sets DOCKER_HOST to it), and what the tests assert about leftovers: containers and
// networks labelled fencecheck.run, the host's firewall and links.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include "platform/docker_api.h"
#include "tests/support/command.h"

namespace fencecheck::testing {

// Why the docker tests cannot run here, or nullopt.
inline std::optional<std::string> docker_test_unavailable() {
  std::ifstream reason("/run/fencecheck-test-dockerd/unavailable");
  if (reason) {
    std::stringstream s;
    s << reason.rdbuf();
    return "no private dockerd: " + s.str();
  }
  std::string why;
  auto socket = docker_socket_from_environment(&why);
  if (!socket) return why;
  if (!DockerApi(*socket).ping()) return "no dockerd answers on " + *socket + " (ctest starts one: tests/docker)";
  return std::nullopt;
}

// Skips the test (fails it when FENCECHECK_REQUIRE_DOCKER is set, as in CI) without dockerd.
#define FC_REQUIRE_DOCKER()                                                              \
  if (auto why = ::fencecheck::testing::docker_test_unavailable()) {                     \
    if (std::getenv("FENCECHECK_REQUIRE_DOCKER") != nullptr) FAIL() << *why;              \
    GTEST_SKIP() << *why;                                                                \
  }

// Containers and networks of any fencecheck run in the test dockerd, one per line.
inline std::string labelled_docker_objects() {
  auto socket = docker_socket_from_environment(nullptr);
  if (!socket) return "";
  DockerApi api(*socket);
  const std::string filter = DockerApi::url_encode(R"({"label":["fencecheck.run"]})");
  std::string out;
  for (const auto& c : api.call("test", "GET", "/containers/json?all=1&filters=" + filter)) {
    out += "container " + c.value("Id", "").substr(0, 12) + "\n";
  }
  for (const auto& n : api.call("test", "GET", "/networks?filters=" + filter)) {
    out += "network " + n.value("Name", "") + "\n";
  }
  return out;
}

// The host's firewall and network links: a docker run must leave both as it found them.
inline std::string host_network_snapshot() {
  return run_command("iptables-save | grep -v '^#'").out + run_command("ip -o link show | cut -d' ' -f2").out;
}

}  // namespace fencecheck::testing
