#include "backends/etcd/etcd_probe.h"

#include <nlohmann/json.hpp>

#include "platform/tcp.h"

namespace fencecheck {
namespace {

std::string request(const std::string& method, const std::string& path, const std::string& body) {
  std::string r = method + " " + path + " HTTP/1.0\r\n";
  if (method == "POST") {
    r += "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
  }
  return r + "\r\n" + body;
}

// etcd's gateway prints int64 values as JSON strings; either form is taken.
std::string id_text(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_unsigned()) return std::to_string(v.get<std::uint64_t>());
  if (v.is_number_integer()) return std::to_string(v.get<std::int64_t>());
  return "";
}

}  // namespace

bool etcd_health_body_ok(const std::string& body) {
  nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
  return j.is_object() && j.value("health", nlohmann::json()) == "true";
}

std::optional<EtcdMemberStatus> parse_etcd_status(const std::string& body) {
  nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
  if (!j.is_object() || !j.contains("header") || !j["header"].is_object()) return std::nullopt;
  EtcdMemberStatus s;
  s.member_id = id_text(j["header"].value("member_id", nlohmann::json()));
  s.leader = id_text(j.value("leader", nlohmann::json("0")));
  const std::string term = id_text(j.value("raftTerm", nlohmann::json("0")));
  try {
    s.raft_term = term.empty() ? 0 : std::stoll(term);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (s.member_id.empty()) return std::nullopt;
  return s;
}

bool etcd_healthy(const std::string& address, std::uint16_t port, std::chrono::milliseconds timeout) {
  std::optional<std::string> answer = tcp_exchange(address, port, request("GET", "/health", ""), timeout);
  std::optional<std::string> body = answer ? http_ok_body(*answer) : std::nullopt;
  return body && etcd_health_body_ok(*body);
}

std::optional<EtcdMemberStatus> etcd_member_status(const std::string& address, std::uint16_t port,
                                                   std::chrono::milliseconds timeout) {
  std::optional<std::string> answer =
      tcp_exchange(address, port, request("POST", "/v3/maintenance/status", "{}"), timeout);
  std::optional<std::string> body = answer ? http_ok_body(*answer) : std::nullopt;
  return body ? parse_etcd_status(*body) : std::nullopt;
}

}  // namespace fencecheck
