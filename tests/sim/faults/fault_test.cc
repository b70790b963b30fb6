// Faults as values: durations parse and print exactly, a drawn schedule depends only on its seed, and a schedule
// printed as TOML reads back as the same values.
#include <gtest/gtest.h>

#include "core/env/random.h"
#include "sim/faults/fault.h"
#include "sim/faults/injector.h"
#include "sim/scenario/scenario.h"

namespace sluice::sim {
namespace {

using namespace std::chrono_literals;

TEST(Fault, DurationsParseAndPrint) {
  EXPECT_EQ(*parse_duration("1.5s"), Duration(1500ms));
  EXPECT_EQ(*parse_duration("250ms"), Duration(250ms));
  EXPECT_EQ(*parse_duration("2m"), Duration(120s));
  EXPECT_EQ(*parse_duration("3"), Duration(3s));
  EXPECT_FALSE(parse_duration("fast").ok());
  EXPECT_FALSE(parse_duration("3 weeks").ok());
  EXPECT_EQ(format_duration(1500ms), "1.5s");
  EXPECT_EQ(format_duration(250ms), "250ms");
  EXPECT_EQ(format_duration(3s), "3s");
  EXPECT_EQ(format_duration(7us), "7us");
}

TEST(Fault, KindsRoundTripByName) {
  for (size_t i = 0; i < kFaultKinds; ++i) {
    const auto kind = static_cast<FaultKind>(i);
    EXPECT_EQ(parse_fault_kind(fault_kind_name(kind)), kind);
  }
  EXPECT_FALSE(parse_fault_kind("meteor").has_value());
}

TEST(Fault, ADrawnScheduleDependsOnlyOnItsSeed) {
  const std::vector<FaultRate> rates = {{FaultKind::kCrash, 10, 100ms, 2s, 0, 0},
                                        {FaultKind::kClockJump, 5, 0s, 0s, -5000, 5000}};
  Random a(7);
  Random b(7);
  Random c(8);
  const auto first = draw_schedule(rates, {"n1"}, 1s, 60s, a);
  EXPECT_EQ(first, draw_schedule(rates, {"n1"}, 1s, 60s, b));
  EXPECT_NE(first, draw_schedule(rates, {"n1"}, 1s, 60s, c));
  EXPECT_GT(first.size(), 5u);  // ~15 expected
  for (size_t i = 1; i < first.size(); ++i) EXPECT_LE(first[i - 1].at, first[i].at);
  for (const Fault& f : first) {
    EXPECT_GE(f.at, 1s);
    EXPECT_LT(f.at, 60s);
    if (f.kind == FaultKind::kCrash) {
      EXPECT_GE(f.length, 100ms);
      EXPECT_LE(f.length, 2s);
    }
  }
}

TEST(Fault, APrintedScheduleReadsBackAsTheSameValues) {
  Scenario s;
  s.name = "x";
  s.topics.push_back({"t", 1, {}});
  s.schedule = {Fault{1500ms, FaultKind::kCrash, "n1", "", 2s, 0, "", ""},
                Fault{3s, FaultKind::kClockJump, "n1", "", 0s, -2500, "", ""},
                Fault{4s, FaultKind::kDiskErrors, "n1", "", 0s, 3, "sync", "data/t-0"},
                Fault{5s, FaultKind::kPartition, "n1", "c1", 1s, 0, "", ""}};
  Result<Scenario> back = parse_scenario(to_toml(s), "printed.toml");
  ASSERT_TRUE(back.ok()) << back.status().to_string() << "\n" << to_toml(s);
  EXPECT_EQ(back->schedule, s.schedule);
}

}  // namespace
}  // namespace sluice::sim
