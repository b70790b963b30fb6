// run_checkers: the checkers share one analysis and may run on two threads, but the report is the one they would
// give one after the other, in the table's order, with each invariant's violations capped as one report caps them.
#include <gtest/gtest.h>

#include "tests/sim/checkers/history_builder.h"

namespace sluice::sim::testing {
namespace {

// Eight acknowledged acks=all writes to a persisted topic, none in the final read (eight lost writes), and a fetch
// that read a value no one wrote (a phantom).
HistoryBuilder lost_writes_and_a_phantom() {
  HistoryBuilder h;
  for (int64_t offset = 0; offset < 8; ++offset) {
    h.produce("t", 0, offset, 100 + static_cast<uint64_t>(offset), 1s + offset * 100ms);
  }
  h.read(OpKind::kFetch, "t", 0, 8, {{8, std::nullopt, 99}}, 3s);
  h.read(OpKind::kFinalRead, "t", 0, 0, {}, 10s, 0, 8);
  return h;
}

std::map<std::string, TopicFacts> persisted_topic() { return {{"t", topic_facts("t", false, true)}}; }

CheckReport check_all(const HistoryBuilder& h) {
  const CheckContext ctx{h.history, persisted_topic(), 1000, 0, 1};
  return run_checkers(ctx);
}

TEST(RunCheckers, TheReportIsTheirsOneAfterTheOtherInTheTablesOrder) {
  const HistoryBuilder h = lost_writes_and_a_phantom();
  const CheckReport report = check_all(h);
  ASSERT_EQ(report.violations.size(), kViolationsPerInvariantMax + 1);
  // lost-writes comes before phantoms in the table: its violations first, in the order it found them.
  for (size_t i = 0; i < kViolationsPerInvariantMax; ++i) {
    EXPECT_EQ(report.violations[i].invariant, "lost-write");
    EXPECT_NE(report.violations[i].evidence.find(fmt::format("value {:016x} ", 100 + i)), std::string::npos)
        << report.violations[i].evidence;
  }
  EXPECT_EQ(report.violations.back().invariant, "phantom");
  EXPECT_EQ(report.figures.at("violations not shown: lost-write"), 8 - static_cast<int64_t>(kViolationsPerInvariantMax));
  EXPECT_EQ(report.figures.at("acks=all lost in a run without faults (violations)"), 8);
}

TEST(RunCheckers, TheSameHistoryGivesTheSameReportEveryTime) {
  const HistoryBuilder h = lost_writes_and_a_phantom();
  const CheckReport first = check_all(h);
  for (int run = 0; run < 20; ++run) {
    const CheckReport again = check_all(h);
    ASSERT_EQ(again.violations.size(), first.violations.size());
    for (size_t i = 0; i < first.violations.size(); ++i) {
      EXPECT_EQ(again.violations[i].invariant, first.violations[i].invariant);
      EXPECT_EQ(again.violations[i].evidence, first.violations[i].evidence);
    }
    EXPECT_EQ(again.figures, first.figures);
    EXPECT_EQ(again.notes, first.notes);
  }
}

TEST(RunCheckers, OnlyTheNamedCheckersRun) {
  const HistoryBuilder h = lost_writes_and_a_phantom();
  const CheckReport phantoms = h.check(persisted_topic(), "phantoms");
  ASSERT_EQ(phantoms.violations.size(), 1u);
  EXPECT_EQ(phantoms.violations[0].invariant, "phantom");
  EXPECT_EQ(phantoms.figures.count("violations not shown: lost-write"), 0u);
}

}  // namespace
}  // namespace sluice::sim::testing
