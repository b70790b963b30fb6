// The lost-write and duplicate checkers on hand-built histories: each passes a history that keeps its promise and
// fails (or counts) one that breaks it.
#include <gtest/gtest.h>

#include "tests/sim/checkers/history_builder.h"

namespace sluice::sim::testing {
namespace {

std::map<std::string, TopicFacts> one_topic(bool persisted) { return {{"t", topic_facts("t", false, persisted)}}; }

TEST(LostWrites, AnAcknowledgedWriteInTheFinalReadPasses) {
  HistoryBuilder h;
  h.produce("t", 0, 0, 11, 1s);
  h.produce("t", 0, 1, 12, 2s);
  h.read(OpKind::kFinalRead, "t", 0, 0, {{0, std::nullopt, 11}, {1, std::nullopt, 12}}, 10s);
  const CheckReport report = h.check(one_topic(true), "lost-writes");
  EXPECT_TRUE(report.violations.empty());
  EXPECT_EQ(report.figures.at("acks=all acknowledged and present"), 2);
}

TEST(LostWrites, AnAcknowledgedAcksAllWriteMissingIsAViolation) {
  HistoryBuilder h;
  h.produce("t", 0, 0, 11, 1s);
  h.produce("t", 0, 1, 12, 2s);
  h.read(OpKind::kFinalRead, "t", 0, 0, {{0, std::nullopt, 11}}, 10s, 0, 2);
  EXPECT_TRUE(has_violation(h.check(one_topic(false), "lost-writes"), "lost-write"));
}

TEST(LostWrites, PowerLossExcusesOnlyReplicatedTopics) {
  HistoryBuilder h;
  h.produce("t", 0, 0, 11, 1s);
  h.world(WorldEvent::Kind::kPowerLoss, 3s);
  h.read(OpKind::kFinalRead, "t", 0, 0, {}, 10s, 0, 0);
  const CheckReport replicated = h.check(one_topic(false), "lost-writes");
  EXPECT_TRUE(replicated.violations.empty());
  EXPECT_EQ(replicated.figures.at("acks=all lost to power loss (replicated)"), 1);
  EXPECT_TRUE(has_violation(h.check(one_topic(true), "lost-writes"), "lost-write"));
}

TEST(LostWrites, AcksOneLossesAreCountedNotFailed) {
  HistoryBuilder h;
  h.produce("t", 0, 0, 11, 1s, std::nullopt, 1);
  h.world(WorldEvent::Kind::kDown, 3s);  // a crash: on a cluster, a leader change may cut an acks=1 record
  h.read(OpKind::kFinalRead, "t", 0, 0, {}, 10s, 0, 0);
  const CheckReport report = h.check(one_topic(false), "lost-writes");
  EXPECT_TRUE(report.violations.empty());
  EXPECT_EQ(report.figures.at("acks=1 lost without power loss"), 1);
}

// A follower that drops an acks=0 produce (KubeMQ) loses it with nothing to blame: a run without faults loses nothing.
TEST(LostWrites, InARunWithoutFaultsEvenAnAcksZeroLossIsAViolation) {
  HistoryBuilder h;
  h.produce("t", 0, -1, 11, 1s, std::nullopt, 0);
  h.produce("t", 0, -1, 12, 2s, std::nullopt, 0);
  h.read(OpKind::kFinalRead, "t", 0, 0, {{0, std::nullopt, 11}}, 10s, 0, 1);
  const CheckReport report = h.check(one_topic(false), "lost-writes", 3);
  EXPECT_TRUE(has_violation(report, "lost-write"));
  EXPECT_EQ(report.figures.at("acks=0 lost in a run without faults (violations)"), 1);
  h.world(WorldEvent::Kind::kFault, 5s);
  EXPECT_TRUE(h.check(one_topic(false), "lost-writes", 3).violations.empty());
}

// On a cluster an acks=all write is on a quorum's page caches: it takes 2 * majority - n power losses after it to
// lose it (one on 3 nodes: the other holder down while the rest elect a leader without it; two on 4 nodes).
TEST(LostWrites, OnAClusterTheExcuseCountsPowerLostNodesAgainstTheQuorum) {
  HistoryBuilder h;
  h.produce("t", 0, 0, 11, 1s);
  h.world(WorldEvent::Kind::kPowerLoss, 500ms, 0, "n2");  // before the write: excuses nothing
  h.world(WorldEvent::Kind::kDown, 3s, 0, "n3");          // a crash keeps the page cache
  h.read(OpKind::kFinalRead, "t", 0, 0, {}, 10s, 0, 0);
  EXPECT_TRUE(has_violation(h.check(one_topic(false), "lost-writes", 3), "lost-write"));
  h.world(WorldEvent::Kind::kPowerLoss, 3s, 0, "n1");
  h.world(WorldEvent::Kind::kPowerLoss, 4s, 0, "n1");  // the same node twice is still one node
  const CheckReport three = h.check(one_topic(false), "lost-writes", 3);
  EXPECT_TRUE(three.violations.empty());
  EXPECT_EQ(three.figures.at("acks=all lost to power loss (replicated)"), 1);
  EXPECT_TRUE(has_violation(h.check(one_topic(false), "lost-writes", 4), "lost-write"));
  h.world(WorldEvent::Kind::kPowerLoss, 5s, 0, "n3");
  EXPECT_TRUE(h.check(one_topic(false), "lost-writes", 4).violations.empty());
  EXPECT_TRUE(has_violation(h.check(one_topic(true), "lost-writes", 3), "lost-write"));  // persisted: never
}

TEST(LostWrites, RecordsBelowTheLogStartAreNotLost) {
  HistoryBuilder h;
  h.produce("t", 0, 0, 11, 1s);
  h.produce("t", 0, 1, 12, 2s);
  h.read(OpKind::kFinalRead, "t", 0, 1, {{1, std::nullopt, 12}}, 10s, 1, 2);
  EXPECT_TRUE(h.check(one_topic(true), "lost-writes").violations.empty());
}

TEST(LostWrites, ADeletedTopicsWritesAreNotLost) {
  HistoryBuilder h;
  h.produce("t", 0, 0, 11, 1s);
  h.effect(storage::LogEffect::Kind::kPartitionDeleted, "t", 0, -1, -1, 5s);
  h.read(OpKind::kFinalRead, "t", 0, 0, {}, 10s, 0, 0);
  EXPECT_TRUE(h.check(one_topic(true), "lost-writes").violations.empty());
}

TEST(Duplicates, OneValueAtTwoOffsetsFailsForAnIdempotentProducerOnly) {
  HistoryBuilder idempotent;
  idempotent.produce("t", 0, 0, 11, 1s);
  idempotent.read(OpKind::kFinalRead, "t", 0, 0, {{0, std::nullopt, 11}, {1, std::nullopt, 11}}, 10s);
  EXPECT_TRUE(has_violation(idempotent.check(one_topic(false), "duplicates"), "duplicate"));

  HistoryBuilder plain;
  plain.produce("t", 0, 0, 11, 1s, std::nullopt, -1, false);
  plain.read(OpKind::kFinalRead, "t", 0, 0, {{0, std::nullopt, 11}, {1, std::nullopt, 11}}, 10s);
  const CheckReport report = plain.check(one_topic(false), "duplicates");
  EXPECT_TRUE(report.violations.empty());
  EXPECT_EQ(report.figures.at("duplicates from a non-idempotent producer's retries"), 1);
}

}  // namespace
}  // namespace sluice::sim::testing
