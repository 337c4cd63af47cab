#include "platform/nodes_file.h"

#include <arpa/inet.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "platform/errors.h"

namespace fencecheck {

namespace {

bool is_ipv4(const std::string& s) {
  in_addr a{};
  return ::inet_pton(AF_INET, s.c_str(), &a) == 1;
}

struct LineReader {
  const std::string& file;
  std::size_t line;
  const nlohmann::json& obj;

  [[noreturn]] void fail(const std::string& field, const std::string& what) const {
    throw InputError(file, line, field, what);
  }
  std::string text(const char* field, bool required, const std::string& fallback = "") const {
    auto it = obj.find(field);
    if (it == obj.end()) {
      if (required) fail(field, "missing; every line needs \"host\" and \"role\"");
      return fallback;
    }
    if (!it->is_string() || it->get<std::string>().empty()) fail(field, "must be a non-empty string");
    return it->get<std::string>();
  }
};

const std::set<std::string> kMembers = {"host", "role",        "port",         "user", "key",
                                        "address", "name", "known_hosts", "proxy_command"};

SshHost parse_host(const nlohmann::json& obj, const std::string& file, std::size_t line) {
  LineReader r{file, line, obj};
  if (!obj.is_object()) r.fail("", "each line must be one JSON object, like {\"host\": \"10.0.0.1\", \"role\": \"server\"}");
  for (const auto& [k, v] : obj.items()) {
    if (!kMembers.contains(k)) {
      r.fail(k, "unknown member; the members are host, role, port, user, key, address, name, known_hosts, "
                "proxy_command");
    }
  }
  SshHost h;
  h.line = line;
  h.host = r.text("host", true);
  h.role = r.text("role", true);
  if (h.role != "server" && h.role != "client") r.fail("role", "must be \"server\" or \"client\", not \"" + h.role + "\"");
  if (auto it = obj.find("port"); it != obj.end()) {
    if (!it->is_number_integer() || it->get<long long>() < 1 || it->get<long long>() > 65535) {
      r.fail("port", "must be a whole number from 1 to 65535");
    }
    h.port = static_cast<std::uint16_t>(it->get<long long>());
  }
  h.user = r.text("user", false, "root");
  h.key = r.text("key", false);
  h.known_hosts = r.text("known_hosts", false);
  h.proxy_command = r.text("proxy_command", false);
  h.name = r.text("name", false, h.host);
  h.address = r.text("address", false, is_ipv4(h.host) ? h.host : "");
  if (h.address.empty()) r.fail("address", "missing: host is not an IPv4 address, so give the address the other nodes reach it at");
  if (!is_ipv4(h.address)) r.fail("address", "must be an IPv4 address (dotted quad), not \"" + h.address + "\"");
  for (const auto& [field, path] : {std::pair{"key", h.key}, std::pair{"known_hosts", h.known_hosts}}) {
    std::error_code ec;
    if (!path.empty() && !std::filesystem::is_regular_file(path, ec)) r.fail(field, "no such file: " + path);
  }
  return h;
}

}  // namespace

std::vector<const SshHost*> NodesFile::with_role(const std::string& role) const {
  std::vector<const SshHost*> out;
  for (const auto& h : hosts) {
    if (h.role == role) out.push_back(&h);
  }
  return out;
}

std::optional<std::string> hosts_shortfall(const NodesFile& file, const std::vector<std::string>& servers,
                                           const std::vector<std::string>& others) {
  auto check = [&](const std::string& role, const std::vector<std::string>& need,
                   const char* what) -> std::optional<std::string> {
    const std::size_t have = file.with_role(role).size();
    if (have >= need.size()) return std::nullopt;
    std::string list;
    for (const auto& n : need) list += (list.empty() ? "" : ", ") + n;
    return file.path.string() + " lists " + std::to_string(have) + " host(s) of role \"" + role +
           "\", and this run needs " + std::to_string(need.size()) + " (" + what + ": " + list +
           "): add hosts of that role" + (role == "client" ? " or lower --concurrency" : "");
  };
  if (auto p = check("server", servers, "the backend's servers")) return p;
  return check("client", others, "the resource service and the clients");
}

NodesFile parse_nodes_file(const std::string& text, const std::filesystem::path& file) {
  NodesFile nodes{file, {}};
  std::istringstream in(text);
  std::string line;
  std::size_t number = 0;
  std::map<std::string, std::size_t> hosts_seen, addresses_seen;
  while (std::getline(in, line)) {
    ++number;
    auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    nlohmann::json obj;
    try {
      obj = nlohmann::json::parse(line);
    } catch (const nlohmann::json::parse_error& e) {
      throw InputError(file.string(), number, "", std::string("not JSON: ") + e.what());
    }
    SshHost h = parse_host(obj, file.string(), number);
    std::string target = h.host + ":" + std::to_string(h.port);
    if (auto [it, fresh] = hosts_seen.emplace(target, number); !fresh) {
      throw InputError(file.string(), number, "host", target + " is listed already on line " + std::to_string(it->second));
    }
    if (auto [it, fresh] = addresses_seen.emplace(h.address, number); !fresh) {
      throw InputError(file.string(), number, "address",
                       h.address + " is the address of line " + std::to_string(it->second) + " already");
    }
    nodes.hosts.push_back(std::move(h));
  }
  if (nodes.hosts.empty()) throw InputError(file.string(), 0, "", "lists no host (one JSON object per line)");
  return nodes;
}

NodesFile read_nodes_file(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) throw InputError(file.string(), 0, "", "cannot read the nodes file");
  std::stringstream text;
  text << in.rdbuf();
  return parse_nodes_file(text.str(), file);
}

}  // namespace fencecheck
