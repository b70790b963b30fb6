// The committed-offsets checker on hand-built histories.
#include <gtest/gtest.h>

#include "tests/sim/checkers/history_builder.h"

namespace sluice::sim::testing {
namespace {

const TopicPartitionId kTp{"t", 0};

TEST(CommittedOffsets, AnswersAtOrAboveTheLastCommitPass) {
  HistoryBuilder h;
  h.commit("g", kTp, 10, 1s);
  h.committed("g", kTp, 10, 2s);
  h.commit("g", kTp, 20, 3s);
  h.committed("g", kTp, 20, 4s);
  EXPECT_TRUE(h.check({}, "committed-offsets").violations.empty());
}

TEST(CommittedOffsets, GoingBackwardsFails) {
  HistoryBuilder h;
  h.commit("g", kTp, 10, 1s);
  h.commit("g", kTp, 20, 3s);
  h.committed("g", kTp, 10, 4s);
  EXPECT_TRUE(has_violation(h.check({}, "committed-offsets"), "committed-offsets"));
}

TEST(CommittedOffsets, AnOffsetNobodyCommittedThereFails) {
  HistoryBuilder h;
  h.commit("g", {"t", 1}, 30, 1s);
  h.committed("g", kTp, 30, 2s);
  EXPECT_TRUE(has_violation(h.check({}, "committed-offsets"), "committed-offsets"));
}

TEST(CommittedOffsets, APowerLossMayTakeAReplicatedCommit) {
  HistoryBuilder h;
  h.commit("g", kTp, 10, 1s);
  h.commit("g", kTp, 20, 3s);
  h.world(WorldEvent::Kind::kPowerLoss, 3500ms);
  h.committed("g", kTp, 10, 4s);
  const CheckReport report = h.check({}, "committed-offsets");
  EXPECT_TRUE(report.violations.empty());
  EXPECT_EQ(report.figures.at("committed offsets lost to power loss"), 1);
}

}  // namespace
}  // namespace sluice::sim::testing
