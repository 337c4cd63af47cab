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
#include <functional>
#include <thread>

#include "platform/errors.h"
#include "platform/os_util.h"
#include "platform/unique_fd.h"

namespace fencecheck {

namespace {

// RFC 2863 operational states, IF_OPER_* in linux/if.h (which clashes with net/if.h).
constexpr int kOperUp = 6;
std::string operstate_name(int state) {
  static const char* const names[] = {"unknown", "notpresent", "down", "lowerlayerdown", "testing", "dormant", "up"};
  return state >= 0 && state <= kOperUp ? names[state] : std::to_string(state);
}

// One rtnetlink request: a header, its family message, and a few attributes.
class Request {
 public:
  template <typename Body>
  Request(std::uint16_t type, std::uint16_t flags, const Body& body) {
    header().nlmsg_type = type;
    header().nlmsg_flags = NLM_F_REQUEST | flags;
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

// Sends the request and reads the kernel's first answer into `answer`; "" or what went wrong.
std::string send_and_receive(int fd, Request& request, char (&answer)[4096], nlmsghdr*& first) {
  if (::send(fd, &request.header(), request.header().nlmsg_len, 0) < 0) return "send: " + os::strerror_string(errno);
  const ssize_t n = ::recv(fd, answer, sizeof answer, 0);
  if (n < 0) {
    return errno == EAGAIN ? "no answer from the kernel within " + std::to_string(kAnswerTimeout.count()) + " s"
                           : "recv: " + os::strerror_string(errno);
  }
  first = reinterpret_cast<nlmsghdr*>(answer);
  if (!NLMSG_OK(first, static_cast<unsigned>(n))) return "a truncated answer";
  return "";
}

// The error an NLMSG_ERROR answer carries ("" for an acknowledgement).
std::string error_of(const nlmsghdr* h) {
  const int error = reinterpret_cast<const nlmsgerr*>(NLMSG_DATA(h))->error;
  return error == 0 ? "" : os::strerror_string(-error);
}

// Sends the request and reads the kernel's acknowledgement; "" or what went wrong.
std::string exchange(int fd, Request& request) {
  alignas(nlmsghdr) char answer[4096];
  nlmsghdr* h = nullptr;
  if (std::string e = send_and_receive(fd, request, answer, h); !e.empty()) return e;
  if (h->nlmsg_type != NLMSG_ERROR) return "an answer that is no acknowledgement";
  return error_of(h);
}

// The device's RFC 2863 operational state (IF_OPER_*), or what went wrong.
std::string operstate(int fd, unsigned index, int& state) {
  ifinfomsg link{};
  link.ifi_family = AF_UNSPEC;
  link.ifi_index = static_cast<int>(index);
  Request r(RTM_GETLINK, 0, link);
  alignas(nlmsghdr) char answer[4096];
  nlmsghdr* h = nullptr;
  if (std::string e = send_and_receive(fd, r, answer, h); !e.empty()) return e;
  if (h->nlmsg_type == NLMSG_ERROR) return error_of(h).empty() ? "no link in the answer" : error_of(h);
  if (h->nlmsg_type != RTM_NEWLINK) return "an answer that is no link";
  int left = static_cast<int>(IFLA_PAYLOAD(h));
  for (auto* a = IFLA_RTA(static_cast<ifinfomsg*>(NLMSG_DATA(h))); RTA_OK(a, left); a = RTA_NEXT(a, left)) {
    if (a->rta_type == IFLA_OPERSTATE) {
      state = *static_cast<const unsigned char*>(RTA_DATA(a));
      return "";
    }
  }
  return "the answer has no operational state";
}

std::string set_up(int fd, unsigned index) {
  ifinfomsg link{};
  link.ifi_family = AF_UNSPEC;
  link.ifi_index = static_cast<int>(index);
  link.ifi_flags = IFF_UP;
  link.ifi_change = IFF_UP;
  Request r(RTM_NEWLINK, NLM_F_ACK, link);
  return exchange(fd, r);
}

std::string add_address(int fd, unsigned index, const in_addr& address, int prefix_length) {
  ifaddrmsg a{};
  a.ifa_family = AF_INET;
  a.ifa_prefixlen = static_cast<unsigned char>(prefix_length);
  a.ifa_scope = RT_SCOPE_UNIVERSE;
  a.ifa_index = index;
  Request r(RTM_NEWADDR, NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL, a);
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

// Runs on the visiting thread, inside the link's namespace: "" once the device is
// operationally up, what went wrong otherwise (the deadline included).
std::string await_up_here(const NetnsLink& l, const Deadline& deadline) {
  UniqueFd fd(::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE));
  if (!fd.valid()) return "netlink socket: " + os::strerror_string(errno);
  timeval limit{static_cast<time_t>(kAnswerTimeout.count()), 0};
  ::setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  const unsigned device = ::if_nametoindex(l.device.c_str());
  if (device == 0) return "no device " + l.device + " in " + l.netns_path;
  for (;;) {
    int state = 0;
    if (std::string e = operstate(fd.get(), device, state); !e.empty()) return "reading " + l.device + "'s state: " + e;
    if (state == kOperUp) return "";
    if (!deadline.sleep(std::chrono::milliseconds(5))) {
      return l.device + " was not up within " + deadline.budget_text() + " (its state: " + operstate_name(state) +
             ")";
    }
  }
}

// Runs `here` for each item on one thread of our own that enters the item's namespace
// first (setns changes that thread only; it ends with the work). Throws HarnessError with
// `doing` and the node's name on the first failure.
template <typename Item>
void visit_namespaces(const std::vector<Item>& items, const std::string& doing,
                      const std::function<std::string(const Item&)>& here) {
  std::string failure;
  std::thread visitor([&] {
    for (const Item& item : items) {
      UniqueFd ns(::open(item.netns_path.c_str(), O_RDONLY | O_CLOEXEC));
      if (!ns.valid() || ::setns(ns.get(), CLONE_NEWNET) != 0) {
        failure = doing + " node " + item.node + ": cannot enter " + item.netns_path + ": " + os::strerror_string(errno);
        return;
      }
      if (std::string e = here(item); !e.empty()) {
        failure = doing + " node " + item.node + ": " + e;
        return;
      }
    }
  });
  visitor.join();
  if (!failure.empty()) throw HarnessError(failure);
}

}  // namespace

void configure_node_interfaces(const std::vector<NodeInterface>& nodes) {
  visit_namespaces<NodeInterface>(nodes, "configuring", configure_here);
}

void await_links_up(const std::vector<NetnsLink>& links, const Deadline& deadline) {
  visit_namespaces<NetnsLink>(links, "waiting for the link of",
                              [&](const NetnsLink& l) { return await_up_here(l, deadline); });
}

}  // namespace fencecheck
