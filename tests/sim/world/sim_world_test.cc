// SimWorld's event queue: a binary heap of (time, sequence) with lazy cancellation. Events run in time order and,
// at one time, in scheduling order; a cancelled event never runs, whether it is cancelled alone, with its node's
// events, or after the heap compacted around it; pending_events counts only live ones.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/world/sim_world.h"

namespace sluice {
namespace {

using namespace std::chrono_literals;

Instant at_ms(int64_t ms) { return Instant{} + std::chrono::milliseconds(ms); }

TEST(SimWorldEvents, RunInTimeOrderThenSchedulingOrder) {
  SimWorld world(1);
  std::vector<std::string> ran;
  world.schedule_at(at_ms(20), kWorldNode, EventKind::kControl, [&] { ran.push_back("b@20"); });
  world.schedule_at(at_ms(10), kWorldNode, EventKind::kControl, [&] { ran.push_back("a@10"); });
  world.schedule_at(at_ms(20), kWorldNode, EventKind::kControl, [&] { ran.push_back("c@20"); });
  world.schedule_at(at_ms(10), kWorldNode, EventKind::kControl, [&] {
    ran.push_back("d@10");
    // Scheduled while running, for now: after everything already due now.
    world.schedule_after(0ms, kWorldNode, EventKind::kControl, [&] { ran.push_back("e@10"); });
  });
  world.run_until(at_ms(100));
  EXPECT_EQ(ran, (std::vector<std::string>{"a@10", "d@10", "e@10", "b@20", "c@20"}));
  EXPECT_EQ(world.pending_events(), 0u);
  EXPECT_EQ(world.events_run(), 5u);
}

TEST(SimWorldEvents, CancelledEventsNeverRunAndAreNotCounted) {
  SimWorld world(2);
  std::vector<int> ran;
  std::vector<EventId> ids;
  for (int i = 0; i < 10; ++i) {
    ids.push_back(world.schedule_at(at_ms(10 + i), i % 2 == 0 ? 1 : 2, EventKind::kTimer, [&ran, i] {
      ran.push_back(i);
    }));
  }
  EXPECT_EQ(world.pending_events(), 10u);
  EXPECT_TRUE(world.cancel(ids[3]));
  EXPECT_FALSE(world.cancel(ids[3]));  // once
  EXPECT_EQ(world.cancel_node_events(1), 5u);  // the even ones
  EXPECT_EQ(world.pending_events(), 4u);
  // A new event reuses a freed slot: the old id does not cancel it.
  const EventId reused = world.schedule_at(at_ms(15), 2, EventKind::kTimer, [&ran] { ran.push_back(100); });
  EXPECT_FALSE(world.cancel(ids[0]));
  EXPECT_NE(reused, ids[0]);
  world.run_until(at_ms(100));
  EXPECT_EQ(ran, (std::vector<int>{1, 5, 100, 7, 9}));  // 100 at 15 ms, scheduled after 5
  EXPECT_FALSE(world.cancel(ids[1]));  // already ran
  EXPECT_EQ(world.pending_events(), 0u);
}

TEST(SimWorldEvents, CompactingAroundManyCancelledTimersKeepsTheOrder) {
  SimWorld world(3);
  std::vector<int> ran;
  std::vector<EventId> far;
  for (int i = 0; i < 5000; ++i) {
    // Far timers, cancelled at once (as a wait that is notified before its deadline), and near ones that stay.
    const Instant deadline = at_ms(1'000'000 + i);
    far.push_back(world.schedule_at(deadline, kWorldNode, EventKind::kTimer, [&ran] { ran.push_back(-1); }));
    if (i % 500 == 0) {
      world.schedule_at(at_ms(1000 - i / 10), kWorldNode, EventKind::kTimer, [&ran, i] { ran.push_back(i); });
    }
    EXPECT_TRUE(world.cancel(far.back()));
  }
  EXPECT_EQ(world.pending_events(), 10u);
  world.run_until(at_ms(2'000'000));
  EXPECT_EQ(ran, (std::vector<int>{4500, 4000, 3500, 3000, 2500, 2000, 1500, 1000, 500, 0}));
}

}  // namespace
}  // namespace sluice
