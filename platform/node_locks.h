// Two small tools for tables of per-node things that several threads act on.
//
// NodeLocks: one mutex per node, made on first use and never removed, so that actions on
// one node go one at a time while actions on different nodes run at once. lock(node)
// returns that node's mutex; looking it up takes an internal lock held only for the lookup.
//
// SpawnOutsideLock: makes a node's entry of a table without holding the table's lock while
// making it (a spawn may take seconds: an upload under ssh, a process joining a frozen
// container). Under the caller's lock: the entry exists, or the node is being made by
// another call — nothing to do; else the node is reserved. Then make() runs outside the
// lock, and publish(result) under it; the reservation ends either way, and make()'s
// exception propagates. Thread-safe as the caller's mutex makes it.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>

namespace fencecheck {

class NodeLocks {
 public:
  std::mutex& lock(const std::string& node) {
    std::lock_guard guard(mu_);
    std::unique_ptr<std::mutex>& m = locks_[node];
    if (!m) m = std::make_unique<std::mutex>();
    return *m;
  }

 private:
  std::mutex mu_;  // locks_ only
  std::map<std::string, std::unique_ptr<std::mutex>> locks_;
};

class SpawnOutsideLock {
 public:
  // exists: asked under mu (true: the node has its entry already). Returns false when
  // nothing was made.
  template <class Exists, class Make, class Publish>
  bool run(std::mutex& mu, const std::string& node, Exists exists, Make make, Publish publish) {
    {
      std::lock_guard lock(mu);
      if (exists() || !reserved_.insert(node).second) return false;
    }
    try {
      auto made = make();
      std::lock_guard lock(mu);
      reserved_.erase(node);
      publish(std::move(made));
    } catch (...) {
      std::lock_guard lock(mu);
      reserved_.erase(node);
      throw;
    }
    return true;
  }

 private:
  std::set<std::string> reserved_;  // under the caller's mutex
};

}  // namespace fencecheck
