#include "platform/netlink.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/if_addr.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "platform/errors.h"
#include "platform/os_util.h"
#include "platform/unique_fd.h"

namespace fencecheck {

namespace {

// One rtnetlink request: a header, its family message, and a few attributes.
class Request {
 public:
  template <typename Body>
  Request(std::uint16_t type, std::uint16_t flags, const Body& body) {
    header().nlmsg_type = type;
    header().nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
    header().nlmsg_len = NLMSG_LENGTH(sizeof(Body));
    std::memcpy(NLMSG_DATA(&header()), &body, sizeof(Body));
  }
  void attribute(std::uint16_t type, const void* data, std::size_t size) {
    auto* a = reinterpret_cast<rtattr*>(buffer_ + NLMSG_ALIGN(header().nlmsg_len));
    a->rta_type = type;
    a->rta_len = static_cast<std::uint16_t>(RTA_LENGTH(size));
    std::memcpy(RTA_DATA(a), data, size);
    header().nlmsg_len = NLMSG_ALIGN(header().nlmsg_len) + RTA_ALIGN(a->rta_len);
  }
  nlmsghdr& header() { return *reinterpret_cast<nlmsghdr*>(buffer_); }

 private:
  alignas(nlmsghdr) char buffer_[256] = {};
};

// Sends the request and reads the kernel's acknowledgement; "" or what went wrong.
std::string exchange(int fd, Request& request) {
  if (::send(fd, &request.header(), request.header().nlmsg_len, 0) < 0) return "send: " + os::strerror_string(errno);
  alignas(nlmsghdr) char answer[4096];
  const ssize_t n = ::recv(fd, answer, sizeof answer, 0);
  if (n < 0) {
    return errno == EAGAIN ? "no answer from the kernel within " + std::to_string(kAnswerTimeout.count()) + " s"
                           : "recv: " + os::strerror_string(errno);
  }
  auto* h = reinterpret_cast<nlmsghdr*>(answer);
  if (!NLMSG_OK(h, static_cast<unsigned>(n)) || h->nlmsg_type != NLMSG_ERROR) return "an answer that is no acknowledgement";
  const int error = reinterpret_cast<nlmsgerr*>(NLMSG_DATA(h))->error;
  return error == 0 ? "" : os::strerror_string(-error);
}

std::string set_up(int fd, unsigned index) {
  ifinfomsg link{};
  link.ifi_family = AF_UNSPEC;
  link.ifi_index = static_cast<int>(index);
  link.ifi_flags = IFF_UP;
  link.ifi_change = IFF_UP;
  Request r(RTM_NEWLINK, 0, link);
  return exchange(fd, r);
}

std::string add_address(int fd, unsigned index, const in_addr& address, int prefix_length) {
  ifaddrmsg a{};
  a.ifa_family = AF_INET;
  a.ifa_prefixlen = static_cast<unsigned char>(prefix_length);
  a.ifa_scope = RT_SCOPE_UNIVERSE;
  a.ifa_index = index;
  Request r(RTM_NEWADDR, NLM_F_CREATE | NLM_F_EXCL, a);
  r.attribute(IFA_LOCAL, &address, sizeof address);
  r.attribute(IFA_ADDRESS, &address, sizeof address);
  return exchange(fd, r);
}

// Runs on the configuring thread, already inside the node's namespace; "" or the failure.
std::string configure_here(const NodeInterface& n) {
  in_addr address{};
  if (::inet_pton(AF_INET, n.address.c_str(), &address) != 1) return "\"" + n.address + "\" is not an IPv4 address";
  UniqueFd fd(::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE));
  if (!fd.valid()) return "netlink socket: " + os::strerror_string(errno);
  timeval limit{static_cast<time_t>(kAnswerTimeout.count()), 0};
  ::setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  const unsigned lo = ::if_nametoindex("lo");
  const unsigned device = ::if_nametoindex(n.device.c_str());
  if (lo == 0 || device == 0) return "no device " + std::string(lo == 0 ? "lo" : n.device) + " in " + n.netns_path;
  if (std::string e = set_up(fd.get(), lo); !e.empty()) return "setting lo up: " + e;
  if (std::string e = add_address(fd.get(), device, address, n.prefix_length); !e.empty()) {
    return "adding " + n.address + "/" + std::to_string(n.prefix_length) + " to " + n.device + ": " + e;
  }
  if (std::string e = set_up(fd.get(), device); !e.empty()) return "setting " + n.device + " up: " + e;
  return "";
}

}  // namespace

void configure_node_interfaces(const std::vector<NodeInterface>& nodes) {
  std::string failure;
  std::thread visitor([&] {  // setns below changes this thread only; it ends with the work
    for (const NodeInterface& n : nodes) {
      UniqueFd ns(::open(n.netns_path.c_str(), O_RDONLY | O_CLOEXEC));
      if (!ns.valid() || ::setns(ns.get(), CLONE_NEWNET) != 0) {
        failure = "configuring node " + n.node + ": cannot enter " + n.netns_path + ": " + os::strerror_string(errno);
        return;
      }
      if (std::string e = configure_here(n); !e.empty()) {
        failure = "configuring node " + n.node + ": " + e;
        return;
      }
    }
  });
  visitor.join();
  if (!failure.empty()) throw HarnessError(failure);
}

}  // namespace fencecheck
