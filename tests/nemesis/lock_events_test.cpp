// LockEventBus (nemesis/lock_events.h): subscribers get the kinds they asked for, in order,
// on the publishing thread; one client's slow subscriber never holds up another client's
// publish; a dropped subscription hears nothing more.
#include "nemesis/lock_events.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace fencecheck::testing {
namespace {

using std::chrono::milliseconds;

TEST(LockEventBus, SubscribersHearTheirKindsInOrderUntilDropped) {
  LockEventBus bus;
  std::vector<std::string> heard;
  {
    LockEventSubscriptions subs(bus);
    subs.add({LockEventKind::kAcquireOk}, [&](const LockEvent& e) { heard.push_back("a:" + e.client); });
    subs.add({LockEventKind::kAcquireOk, LockEventKind::kRelease},
             [&](const LockEvent& e) { heard.push_back("b:" + std::string(to_string(e.kind))); });
    EXPECT_TRUE(bus.wanted(LockEventKind::kRelease));
    EXPECT_FALSE(bus.wanted(LockEventKind::kNotice));
    bus.publish({LockEventKind::kAcquireOk, "c1", "l0"});
    bus.publish({LockEventKind::kRelease, "c1", "l0"});
    bus.publish({LockEventKind::kNotice, "c1", "l0"});
  }
  bus.publish({LockEventKind::kAcquireOk, "c2", "l0"});
  EXPECT_EQ(heard, (std::vector<std::string>{"a:c1", "b:acquire-ok", "b:release"}));
  EXPECT_FALSE(bus.wanted(LockEventKind::kAcquireOk));
}

TEST(LockEventBus, ASlowSubscriberForOneClientHoldsUpNoOtherClient) {
  LockEventBus bus;
  std::atomic<bool> c1_inside{false}, release{false};
  LockEventSubscriptions subs(bus);
  subs.add({LockEventKind::kAcquireOk}, [&](const LockEvent& e) {
    if (e.client != "c1") return;
    c1_inside = true;  // pausing c1, say: bounded, but long
    for (int i = 0; i < 300 && !release; ++i) std::this_thread::sleep_for(milliseconds(10));
  });
  std::thread c1([&] { bus.publish({LockEventKind::kAcquireOk, "c1", "l0"}); });
  while (!c1_inside) std::this_thread::sleep_for(milliseconds(1));
  const auto t = std::chrono::steady_clock::now();
  bus.publish({LockEventKind::kAcquireOk, "c2", "l0"});
  const auto took = std::chrono::steady_clock::now() - t;
  release = true;
  c1.join();
  EXPECT_LT(took, milliseconds(500));
}

}  // namespace
}  // namespace fencecheck::testing
