// The offset checkers on hand-built histories: one offset one record, reads in increasing order, an idempotent
// producer's batches in order, no phantom records.
#include <gtest/gtest.h>

#include "tests/sim/checkers/history_builder.h"

namespace sluice::sim::testing {
namespace {

std::map<std::string, TopicFacts> one_topic() { return {{"t", topic_facts("t")}}; }

TEST(Offsets, TwoRecordsAtOneOffsetFail) {
  HistoryBuilder h;
  h.produce("t", 0, 5, 11, 1s);
  h.read(OpKind::kFetch, "t", 0, 5, {{5, std::nullopt, 22}}, 3s);
  EXPECT_TRUE(has_violation(h.check(one_topic(), "offsets"), "one-offset-one-record"));
}

TEST(Offsets, ADeclaredRecoveryCutBetweenTheTwoExcusesTheReuse) {
  HistoryBuilder h;
  h.produce("t", 0, 5, 11, 1s);
  h.effect(storage::LogEffect::Kind::kTruncatedOnRecovery, "t", 0, 4, 6, 2s);
  h.read(OpKind::kFetch, "t", 0, 5, {{5, std::nullopt, 22}}, 3s);
  const CheckReport report = h.check(one_topic(), "offsets");
  EXPECT_TRUE(report.violations.empty());
  EXPECT_EQ(report.figures.at("offsets reused after a declared recovery cut"), 1);
}

TEST(Offsets, ACutAboveTheOffsetExcusesNothing) {
  HistoryBuilder h;
  h.produce("t", 0, 5, 11, 1s);
  h.effect(storage::LogEffect::Kind::kTruncatedOnRecovery, "t", 0, 6, 9, 2s);
  h.read(OpKind::kFetch, "t", 0, 5, {{5, std::nullopt, 22}}, 3s);
  EXPECT_TRUE(has_violation(h.check(one_topic(), "offsets"), "one-offset-one-record"));
}

// On a cluster, a leader change cuts what no quorum had: an acks=1 answer's offset may change its record after a
// fault; a consumer's read or an acks=all answer never may without enough power losses (two on 4 nodes).
TEST(Offsets, OnAClusterOnlyAnAcksOneRecordMayBeCutByALeaderChange) {
  HistoryBuilder acks_one;
  acks_one.produce("t", 0, 5, 11, 1s, std::nullopt, 1);
  acks_one.world(WorldEvent::Kind::kDown, 2s);
  acks_one.read(OpKind::kFetch, "t", 0, 5, {{5, std::nullopt, 22}}, 3s);
  const CheckReport cut = acks_one.check(one_topic(), "offsets", 3);
  EXPECT_TRUE(cut.violations.empty());
  EXPECT_EQ(cut.figures.at("offsets reused: an acks=0/1 record cut by a leader change (cluster)"), 1);
  EXPECT_TRUE(has_violation(acks_one.check(one_topic(), "offsets", 1), "one-offset-one-record"));  // one node

  HistoryBuilder read_then_cut;
  read_then_cut.read(OpKind::kFetch, "t", 0, 5, {{5, std::nullopt, 11}}, 1s);
  read_then_cut.world(WorldEvent::Kind::kDown, 2s);
  read_then_cut.world(WorldEvent::Kind::kPowerLoss, 2s, 0, "n2");
  read_then_cut.read(OpKind::kFinalRead, "t", 0, 5, {{5, std::nullopt, 22}}, 3s);
  EXPECT_TRUE(has_violation(read_then_cut.check(one_topic(), "offsets", 4), "one-offset-one-record"));
}

// A read is served before its answer arrives: a power loss while it is in flight may take the record it returns
// (cluster-five-nodes seed 100696). On 5 nodes one power loss can take a committed record.
TEST(Offsets, APowerLossWhileAReadIsInFlightMayTakeTheRecordItReturns) {
  HistoryBuilder in_flight;
  in_flight.read(OpKind::kFetch, "t", 0, 5, {{5, std::nullopt, 11}}, 1s);  // answered at 1.001 s
  in_flight.world(WorldEvent::Kind::kPowerLoss, 1s + 500us, 0, "n2");
  in_flight.produce("t", 0, 5, 22, 3s);
  const CheckReport excused = in_flight.check(one_topic(), "offsets", 5);
  EXPECT_TRUE(excused.violations.empty());
  EXPECT_EQ(excused.figures.at("offsets reused after a power loss took un-synced records"), 1);

  HistoryBuilder before_the_read;
  before_the_read.world(WorldEvent::Kind::kPowerLoss, 1s - 500us, 0, "n2");
  before_the_read.read(OpKind::kFetch, "t", 0, 5, {{5, std::nullopt, 11}}, 1s);
  before_the_read.produce("t", 0, 5, 22, 3s);
  EXPECT_TRUE(has_violation(before_the_read.check(one_topic(), "offsets", 5), "one-offset-one-record"));
}

TEST(Offsets, ReadsMustIncrease) {
  HistoryBuilder h;
  h.read(OpKind::kFetch, "t", 0, 0, {{1, std::nullopt, 11}, {1, std::nullopt, 12}}, 3s);
  EXPECT_TRUE(has_violation(h.check(one_topic(), "offsets"), "offsets-monotonic"));
}

TEST(Offsets, AnIdempotentProducersBatchesKeepTheirOrder) {
  HistoryBuilder h;
  h.produce("t", 0, 7, 11, 1s);
  h.produce("t", 0, 3, 12, 2s);
  EXPECT_TRUE(has_violation(h.check(one_topic(), "offsets"), "offsets-monotonic"));
}

// cluster_min_insync seed 310: the first batches refused before the append, a later one accepted (a new producer may
// start at any sequence), the refused ones failed OUT_OF_ORDER_SEQUENCE_NUMBER and the next sent again after it.
TEST(Offsets, ABatchThatFailedInFlightExcusesTheOrderOfTheBatchesAroundIt) {
  HistoryBuilder h;
  h.produce("t", 0, -1, 10, 1000ms, std::nullopt, -1, true, Outcome::kFailed);
  h.produce("t", 0, 7, 11, 1000ms);
  h.produce("t", 0, 3, 12, 2s);
  EXPECT_TRUE(h.check(one_topic(), "offsets").violations.empty());
}

TEST(Offsets, AFailureAnsweredBeforeBothBatchesExcusesNothing) {
  HistoryBuilder h;
  h.produce("t", 0, -1, 10, 500ms, std::nullopt, -1, true, Outcome::kFailed);
  h.produce("t", 0, 7, 11, 1000ms);
  h.produce("t", 0, 3, 12, 2s);
  EXPECT_TRUE(has_violation(h.check(one_topic(), "offsets"), "offsets-monotonic"));
}

TEST(Phantoms, ARecordNoOneWroteIsAPhantom) {
  HistoryBuilder h;
  h.produce("t", 0, 0, 11, 1s);
  h.read(OpKind::kFetch, "t", 0, 0, {{0, std::nullopt, 11}, {1, std::nullopt, 99}}, 3s);
  EXPECT_TRUE(has_violation(h.check(one_topic(), "phantoms"), "phantom"));
}

TEST(Phantoms, AWriteReportedFailedMustNotBeReadable) {
  HistoryBuilder h;
  h.produce("t", 0, -1, 11, 1s, std::nullopt, -1, true, Outcome::kFailed);
  h.read(OpKind::kFetch, "t", 0, 0, {{0, std::nullopt, 11}}, 3s);
  EXPECT_TRUE(has_violation(h.check(one_topic(), "phantoms"), "phantom"));
}

// The acknowledged write at the offset read vouches for the record only when key and value both match it.
TEST(Phantoms, TheAcknowledgedValueUnderAnotherKeyIsAPhantom) {
  HistoryBuilder h;
  h.produce("t", 0, 0, 11, 1s, "a");
  h.read(OpKind::kFetch, "t", 0, 0, {{0, "a", 11}}, 2s);
  EXPECT_TRUE(h.check(one_topic(), "phantoms").violations.empty());
  h.read(OpKind::kFetch, "t", 0, 0, {{0, "b", 11}}, 3s);
  EXPECT_TRUE(has_violation(h.check(one_topic(), "phantoms"), "phantom"));
}

TEST(Phantoms, AValueAcknowledgedOnAnotherPartitionIsAPhantomHere) {
  HistoryBuilder h;
  h.produce("t", 0, 0, 11, 1s);
  h.produce("t", 1, 0, 12, 1s);
  h.read(OpKind::kFetch, "t", 1, 0, {{0, std::nullopt, 11}}, 3s);
  const CheckReport report = h.check(one_topic(), "phantoms");
  ASSERT_TRUE(has_violation(report, "phantom"));
  EXPECT_NE(report.violations.front().evidence.find("it was written to t-0"), std::string::npos)
      << report.violations.front().evidence;
}

TEST(Phantoms, AnUnknownOutcomeMayBeReadable) {
  HistoryBuilder h;
  h.produce("t", 0, -1, 11, 1s, std::nullopt, -1, true, Outcome::kUnknown);
  h.read(OpKind::kFetch, "t", 0, 0, {{0, std::nullopt, 11}}, 3s);
  EXPECT_TRUE(h.check(one_topic(), "phantoms").violations.empty());
}

}  // namespace
}  // namespace sluice::sim::testing
