// EventHeap (event_heap.h): pops in (time, sequence) order whatever the pushes, pops and erasures before.
#include <gtest/gtest.h>

#include <chrono>
#include <set>

#include "core/env/random.h"
#include "sim/world/event_heap.h"

namespace sluice {
namespace {

using Entry = EventHeap::Entry;

Instant at_ms(int64_t ms) { return Instant{} + std::chrono::milliseconds(ms); }

TEST(EventHeap, EntriesKeepTheirSequenceAndSlotAndOrderBySequenceAtOneTime) {
  const Entry a = Entry::make(at_ms(5), EventHeap::kMaxSequence, (1u << EventHeap::kSlotBits) - 1);
  EXPECT_EQ(a.sequence(), EventHeap::kMaxSequence);
  EXPECT_EQ(a.slot(), (1u << EventHeap::kSlotBits) - 1);
  // A later sequence in a lower slot still comes after.
  EXPECT_TRUE(Entry::make(at_ms(5), 7, 900) < Entry::make(at_ms(5), 8, 0));
  EXPECT_TRUE(Entry::make(at_ms(4), 9, 0) < Entry::make(at_ms(5), 8, 0));
}

// Random pushes, pops and erasures against a sorted set: every pop is the least entry left.
TEST(EventHeap, PopsTheLeastEntryThroughRandomPushesPopsAndErasures) {
  Random rng(42);
  EventHeap heap;
  std::set<Entry> model;
  uint64_t sequence = 1;
  for (int step = 0; step < 200000; ++step) {
    const uint64_t draw = rng.uniform(100);
    if (draw < 55 || model.empty()) {
      // Few distinct times, so ties between sequences are common.
      const Entry entry = Entry::make(at_ms(static_cast<int64_t>(rng.uniform(50))), sequence++,
                                      static_cast<uint32_t>(rng.uniform(1000)));
      heap.push(entry);
      model.insert(entry);
    } else if (draw < 99) {
      const auto least = model.begin();
      ASSERT_FALSE(heap.empty());
      ASSERT_EQ(heap.top().order, least->order) << "at step " << step;
      heap.pop();
      model.erase(least);
    } else {
      const uint64_t modulus = 2 + rng.uniform(5);
      auto drop = [modulus](const Entry& e) { return e.sequence() % modulus == 0; };
      heap.erase_if(drop);
      std::erase_if(model, drop);
    }
    ASSERT_EQ(heap.size(), model.size());
  }
  for (const Entry& expected : model) {
    ASSERT_EQ(heap.top().order, expected.order);
    heap.pop();
  }
  EXPECT_TRUE(heap.empty());
}

}  // namespace
}  // namespace sluice
