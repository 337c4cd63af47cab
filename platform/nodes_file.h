// The nodes file of the ssh runtime (`--nodes-file FILE`): the real hosts a run may use
// and how to reach each over OpenSSH. One JSON object per line; blank lines and lines
// starting with '#' are ignored. Members:
//   host           what ssh connects to (name or address); required
//   role           "server" (runs the backend's servers n1..nN) or "client" (the resource
//                  service r1 and the workers c1..cK); required
//   port, user     ssh's port [22] and login [root]
//   key            a private key file (ssh -i) [ssh's own defaults]
//   address        the IPv4 address the other nodes reach this one at on the test network
//                  [host, when host is an IPv4 address]
//   name           a label for messages [host]
//   known_hosts    a known_hosts file holding this host's key; then the key is checked
//                  strictly [ssh's own file, keys accepted on first contact]
//   proxy_command  ssh's ProxyCommand (a jump host; the test fixture's `ip netns exec`)
// Duplicate hosts (host and port) or addresses are refused. Everything here is pure:
// reading the file is the only I/O. Thread-safe.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace fencecheck {

struct SshHost {
  std::string name;
  std::string host;
  std::uint16_t port = 22;
  std::string user = "root";
  std::string key;
  std::string address;
  std::string role;  // "server" or "client"
  std::string known_hosts;
  std::string proxy_command;
  std::size_t line = 0;  // where the file declared it, for messages
};

struct NodesFile {
  std::filesystem::path path;
  std::vector<SshHost> hosts;
  std::vector<const SshHost*> with_role(const std::string& role) const;
};

// Why the file cannot host a run of these nodes (servers take "server" hosts, the rest
// "client" hosts, one host each), as one sentence; nullopt when it can.
std::optional<std::string> hosts_shortfall(const NodesFile& file, const std::vector<std::string>& servers,
                                           const std::vector<std::string>& others);

// Reads and checks FILE. Throws InputError naming the file, line and member for a
// malformed line, an unknown or missing member, a bad value or a duplicate; line 0 when
// the file cannot be read or lists no host.
NodesFile read_nodes_file(const std::filesystem::path& file);
// The same for text already read (tests); `file` only names it in messages.
NodesFile parse_nodes_file(const std::string& text, const std::filesystem::path& file);

}  // namespace fencecheck
