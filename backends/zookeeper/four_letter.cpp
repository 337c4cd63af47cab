#include "backends/zookeeper/four_letter.h"

#include "platform/tcp.h"

namespace fencecheck {

std::optional<std::string> zk_four_letter(const std::string& address, std::uint16_t port,
                                          const std::string& word,
                                          std::chrono::milliseconds timeout) {
  return tcp_exchange(address, port, word, timeout);
}

std::optional<std::string> zk_srvr_mode(const std::string& srvr_answer) {
  static const std::string kMode = "Mode: ";
  std::size_t at = srvr_answer.find(kMode);
  if (at == std::string::npos || (at > 0 && srvr_answer[at - 1] != '\n')) return std::nullopt;
  at += kMode.size();
  std::size_t end = srvr_answer.find_first_of("\r\n", at);
  std::string mode = srvr_answer.substr(at, end == std::string::npos ? std::string::npos : end - at);
  if (mode.empty()) return std::nullopt;
  return mode;
}

}  // namespace fencecheck
