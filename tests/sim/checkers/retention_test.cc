// The retention checker on hand-built histories: eviction of unexpired records, and expired records still read.
#include <gtest/gtest.h>

#include "tests/sim/checkers/history_builder.h"

namespace sluice::sim::testing {
namespace {

// Wall clock = virtual ms (epoch 0 in the builder's context); retention 10 s; check interval 1 s.
std::map<std::string, TopicFacts> retained() {
  TopicFacts f = topic_facts("r");
  f.retention_ms = 10000;
  return {{"r", f}};
}

TEST(Retention, EvictingAnUnexpiredRecordFails) {
  HistoryBuilder h;
  h.produce("r", 0, 0, 11, 1s, std::nullopt, -1, true, Outcome::kOk, 1000);
  h.read(OpKind::kFetch, "r", 0, 1, {}, 5s, 1, 1);  // log start 1 at 5 s: the record is 4 s old
  EXPECT_TRUE(has_violation(h.check(retained(), "retention"), "retention-unexpired"));
}

TEST(Retention, EvictingAnExpiredRecordPasses) {
  HistoryBuilder h;
  h.produce("r", 0, 0, 11, 1s, std::nullopt, -1, true, Outcome::kOk, 1000);
  h.read(OpKind::kFetch, "r", 0, 1, {}, 12s, 1, 1);
  EXPECT_TRUE(h.check(retained(), "retention").violations.empty());
}

TEST(Retention, AForwardClockJumpMakesEvictionLegitimate) {
  HistoryBuilder h;
  h.produce("r", 0, 0, 11, 1s, std::nullopt, -1, true, Outcome::kOk, 1000);
  h.world(WorldEvent::Kind::kClockJump, 2s, 30000);
  h.read(OpKind::kFetch, "r", 0, 1, {}, 5s, 1, 1);
  EXPECT_TRUE(h.check(retained(), "retention").violations.empty());
}

TEST(Retention, AnExpiredRecordStillReadLongAfterFails) {
  HistoryBuilder h;
  h.world(WorldEvent::Kind::kServing, 0s);
  h.produce("r", 0, 0, 11, 1s, std::nullopt, -1, true, Outcome::kOk, 1000);
  h.read(OpKind::kFetch, "r", 0, 0, {{0, std::nullopt, 11}}, 20s, 0, 1, 1000);  // expired at 11 s
  EXPECT_TRUE(has_violation(h.check(retained(), "retention"), "retention-expired-readable"));
}

// In a cluster, an offset before the record that no acknowledged write holds may be a leader's LeaderChange batch,
// stamped at its election and newer than the record after it: eviction (a prefix) stops there.
TEST(Retention, InAClusterAnExpiredRecordBehindABatchNoClientWroteIsExcused) {
  HistoryBuilder h;
  h.world(WorldEvent::Kind::kServing, 0s);
  h.produce("r", 0, 0, 11, 1s, std::nullopt, -1, true, Outcome::kOk, 1000);
  h.produce("r", 0, 2, 12, 1s, std::nullopt, -1, true, Outcome::kOk, 1000);  // offset 1: a LeaderChange batch
  h.read(OpKind::kFetch, "r", 0, 1, {{2, std::nullopt, 12}}, 20s, 1, 3, 1000);
  const CheckReport report = h.check(retained(), "retention", /*brokers=*/3);
  EXPECT_TRUE(report.violations.empty());
  EXPECT_EQ(report.figures.at("expired records readable behind a batch no client wrote (cluster)"), 1);
  EXPECT_TRUE(has_violation(h.check(retained(), "retention"), "retention-expired-readable")) << "one node: no excuse";
}

TEST(Retention, InAClusterAnExpiredRecordWithEveryOffsetBeforeItKnownFails) {
  HistoryBuilder h;
  h.world(WorldEvent::Kind::kServing, 0s);
  h.produce("r", 0, 0, 11, 1s, std::nullopt, -1, true, Outcome::kOk, 1000);
  h.produce("r", 0, 1, 12, 1s, std::nullopt, -1, true, Outcome::kOk, 1000);
  h.read(OpKind::kFetch, "r", 0, 0, {{0, std::nullopt, 11}, {1, std::nullopt, 12}}, 20s, 0, 2, 1000);
  EXPECT_TRUE(has_violation(h.check(retained(), "retention", /*brokers=*/3), "retention-expired-readable"));
}

// In a cluster, a produce to the partition that failed shortly before the read says it may have had no leader:
// replicas evict only what they know is committed, so its next leader evicts at its next pass.
TEST(Retention, InAClusterAnExpiredRecordReadSoonAfterAFailedProduceIsExcused) {
  const auto history = [](Duration failed_at) {
    HistoryBuilder h;
    h.world(WorldEvent::Kind::kServing, 0s);
    h.produce("r", 0, 0, 11, 1s, std::nullopt, -1, true, Outcome::kOk, 1000);
    h.produce("r", 0, -1, 12, failed_at, std::nullopt, -1, true, Outcome::kFailed, 1000);
    h.read(OpKind::kFetch, "r", 0, 0, {{0, std::nullopt, 11}}, 20s, 0, 1, 1000);  // expired at 11 s
    return h;
  };
  const CheckReport soon = history(18s).check(retained(), "retention", /*brokers=*/3);
  EXPECT_TRUE(soon.violations.empty());
  EXPECT_EQ(soon.figures.at("expired records readable soon after the partition had no leader (cluster)"), 1);
  EXPECT_TRUE(has_violation(history(5s).check(retained(), "retention", /*brokers=*/3), "retention-expired-readable"))
      << "a failure long before the read excuses nothing";
  EXPECT_TRUE(has_violation(history(18s).check(retained(), "retention"), "retention-expired-readable"))
      << "one node: no excuse";
}

// A produce still waiting for its answer through the whole window says the same (cluster_retention_offline_replica
// seed 3428: the partition had no leader for ten seconds, and its writes were acknowledged only after the read).
TEST(Retention, InAClusterAnExpiredRecordReadWhileAProduceWaitedThroughoutIsExcused) {
  const auto history = [](Duration answered_at) {
    HistoryBuilder h;
    h.world(WorldEvent::Kind::kServing, 0s);
    h.produce("r", 0, 0, 11, 1s, std::nullopt, -1, true, Outcome::kOk, 1000);
    h.produce("r", 0, 1, 12, 12s, std::nullopt, -1, true, Outcome::kOk, 12000, answered_at - 12s);
    h.read(OpKind::kFetch, "r", 0, 0, {{0, std::nullopt, 11}}, 20s, 0, 1, 1000);  // expired at 11 s
    return h;
  };
  const CheckReport waited = history(21s).check(retained(), "retention", /*brokers=*/3);
  EXPECT_TRUE(waited.violations.empty());
  EXPECT_EQ(waited.figures.at("expired records readable soon after the partition had no leader (cluster)"), 1);
  EXPECT_TRUE(has_violation(history(17s).check(retained(), "retention", /*brokers=*/3), "retention-expired-readable"))
      << "answered before the window: the partition had a leader through it";
}

TEST(Retention, AnExpiredRecordReadWithinTheCheckIntervalPasses) {
  HistoryBuilder h;
  h.world(WorldEvent::Kind::kServing, 0s);
  h.produce("r", 0, 0, 11, 1s, std::nullopt, -1, true, Outcome::kOk, 1000);
  h.read(OpKind::kFetch, "r", 0, 0, {{0, std::nullopt, 11}}, 12s, 0, 1, 1000);
  EXPECT_TRUE(h.check(retained(), "retention").violations.empty());
}

TEST(Retention, ABrokerThatWasDownHasNotHadItsChance) {
  HistoryBuilder h;
  h.world(WorldEvent::Kind::kServing, 0s);
  h.produce("r", 0, 0, 11, 1s, std::nullopt, -1, true, Outcome::kOk, 1000);
  h.world(WorldEvent::Kind::kDown, 5s);
  h.world(WorldEvent::Kind::kServing, 19s);
  h.read(OpKind::kFetch, "r", 0, 0, {{0, std::nullopt, 11}}, 20s, 0, 1, 1000);
  EXPECT_TRUE(h.check(retained(), "retention").violations.empty());
}

}  // namespace
}  // namespace sluice::sim::testing
