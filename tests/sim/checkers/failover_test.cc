// The failover figures on hand-built histories: after a node goes down, the slowest partition's next acks=all
// acknowledgement sets the bucket; one broker has no failover to measure.
#include <gtest/gtest.h>

#include "tests/sim/checkers/history_builder.h"

namespace sluice::sim::testing {
namespace {

TEST(Failover, TheSlowestPartitionsNextAcknowledgementSetsTheBucket) {
  HistoryBuilder h;
  h.produce("t", 0, 0, 11, 1s);
  h.produce("t", 1, 0, 12, 1s);
  h.world(WorldEvent::Kind::kDown, 2s, 0, "n2");
  h.produce("t", 0, 1, 13, 2100ms);   // partition 0 was led elsewhere: at once
  h.produce("t", 1, 1, 14, 3500ms);   // partition 1 waited for a new leader: 1.5 s
  h.produce("t", 1, -1, 15, 2200ms, std::nullopt, -1, true, Outcome::kUnknown);  // not an acknowledgement
  const std::map<std::string, TopicFacts> topics = {{"t", topic_facts("t")}};
  const CheckReport cluster = h.check(topics, "failover", 3);
  EXPECT_TRUE(cluster.violations.empty());
  EXPECT_EQ(cluster.figures.size(), 1u);
  EXPECT_EQ(cluster.figures.at("acks=all on every partition again after a node went down: 0.5-2 s"), 1);
  EXPECT_TRUE(h.check(topics, "failover").figures.empty());
}

}  // namespace
}  // namespace sluice::sim::testing
