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
  h.read(OpKind::kFinalRead, "t", 0, 0, {}, 10s, 0, 0);
  const CheckReport report = h.check(one_topic(false), "lost-writes");
  EXPECT_TRUE(report.violations.empty());
  EXPECT_EQ(report.figures.at("acks=1 lost without power loss"), 1);
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
