// SimWorld's event queue: a binary heap of (time, sequence) with lazy cancellation. Events run in time order and,
// at one time, in scheduling order; a cancelled event never runs, whether it is cancelled alone, with its node's
// events, or after the heap compacted around it; pending_events counts only live ones.
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/env/scheduler.h"
#include "sim/world/sim_clock.h"
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

// A lambda is built in its event's slot; an EventAction is moved in. Both run once, in order, and can be cancelled.
TEST(SimWorldEvents, LambdasAndEventActionsRunAlike) {
  SimWorld world(3);
  std::vector<std::string> ran;
  EventAction moved_in([&] { ran.push_back("action@10"); });
  world.schedule_at(at_ms(10), kWorldNode, EventKind::kControl, std::move(moved_in));
  EXPECT_FALSE(moved_in);  // NOLINT(bugprone-use-after-move): the world took it
  world.schedule_at(at_ms(5), kWorldNode, EventKind::kControl, [&] { ran.push_back("lambda@5"); });
  const std::function<void()> callback = [&] { ran.push_back("function@7"); };
  world.schedule_at(at_ms(7), kWorldNode, EventKind::kControl, callback);  // copied in
  const EventId cancelled =
      world.schedule_at(at_ms(8), kWorldNode, EventKind::kControl, EventAction([&] { ran.push_back("never"); }));
  EXPECT_TRUE(world.cancel(cancelled));
  world.run_until(at_ms(100));
  EXPECT_EQ(ran, (std::vector<std::string>{"lambda@5", "function@7", "action@10"}));
  EXPECT_EQ(world.pending_events(), 0u);
}

// An event's callable is moved out of its slot before it runs: scheduling enough events to grow the slot table
// while it runs leaves its captures intact (AddressSanitizer would see a callable run from the old table).
TEST(SimWorldEvents, AnEventMayScheduleManyEventsWhileItRuns) {
  SimWorld world(4);
  std::vector<int> ran;
  const std::vector<int> payload(100, 7);
  world.schedule_at(at_ms(1), kWorldNode, EventKind::kControl, [&world, &ran, payload] {
    for (int i = 0; i < 1000; ++i) {
      world.schedule_after(1ms, kWorldNode, EventKind::kControl, [&ran, i] { ran.push_back(i); });
    }
    ran.push_back(payload.back() * 1000 + static_cast<int>(payload.size()));
  });
  world.run_until(at_ms(100));
  ASSERT_EQ(ran.size(), 1001u);
  EXPECT_EQ(ran.front(), 7100);
  EXPECT_EQ(ran.back(), 999);
  EXPECT_EQ(world.pending_events(), 0u);
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

// Nodes whose fibers are ready are found by their bits (up to 64 nodes) or by asking each (more): either way every
// ready fiber of a running node runs, and none of a paused one until it resumes.
void every_ready_node_runs_and_a_paused_one_waits(size_t nodes) {
  SimWorld world(7);
  std::vector<std::unique_ptr<SimClock>> clocks;
  std::vector<std::unique_ptr<Scheduler>> schedulers;
  std::vector<int> runs(nodes + 1, 0);
  // Attached in an order other than the nodes' own: bits follow the sorted order, renumbered at each attach.
  for (size_t i = 0; i < nodes; ++i) {
    const auto node = static_cast<NodeId>(i % 2 == 0 ? i / 2 + 1 : nodes - i / 2);
    clocks.push_back(std::make_unique<SimClock>(world, node));
    schedulers.push_back(std::make_unique<Scheduler>(*clocks.back(), &world.schedule_rng()));
    world.attach(node, *schedulers.back());
    schedulers.back()->spawn("f", [&runs, node, &s = *schedulers.back()] {
      ++runs[node];
      s.yield();
      ++runs[node];
    });
  }
  const NodeId low = 3;
  const auto high = static_cast<NodeId>(nodes - 1);
  world.pause_node(low);
  world.pause_node(high);
  world.run_until(world.now() + 1s);
  for (NodeId node = 1; node <= nodes; ++node) {
    const bool paused = node == low || node == high;
    EXPECT_EQ(runs[node], paused ? 0 : 2) << "node " << node << " of " << nodes;
  }
  world.resume_node(low);
  world.resume_node(high);
  world.run_until(world.now() + 1s);
  EXPECT_EQ(runs[low], 2);
  EXPECT_EQ(runs[high], 2);
  for (size_t i = 0; i < nodes; ++i) world.detach(static_cast<NodeId>(i + 1));
}

TEST(SimWorldFibers, EveryReadyNodeRunsAndAPausedOneWaits) {
  every_ready_node_runs_and_a_paused_one_waits(5);
  every_ready_node_runs_and_a_paused_one_waits(64);
  every_ready_node_runs_and_a_paused_one_waits(70);  // beyond the bits
}

}  // namespace
}  // namespace sluice
