// ZooKeeper's four-letter admin words ("srvr", "ruok", …) over a plain TCP socket: the
// readiness probe of a server and the leader lookup. The server must whitelist the word
// (4lw.commands.whitelist). To ask from inside a node's network, call these within
// Runtime::run_in. Thread-safe: no shared state.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace fencecheck {

// Sends `word` to address:port (an IPv4 dotted quad) and returns everything the server
// wrote before it closed the connection; nullopt if it did not connect, answer and close
// within timeout (a paused or partitioned server, a port nobody listens on).
std::optional<std::string> zk_four_letter(const std::string& address, std::uint16_t port,
                                          const std::string& word,
                                          std::chrono::milliseconds timeout);

// The value of the "Mode: " line of a `srvr` answer ("leader", "follower", "standalone");
// nullopt when there is none, as in "This ZooKeeper instance is not currently serving
// requests", the answer of a server that has no quorum.
std::optional<std::string> zk_srvr_mode(const std::string& srvr_answer);

}  // namespace fencecheck
