// Faults as values: durations parse and print exactly, a drawn schedule depends only on its seed, and a schedule
// printed as TOML reads back as the same values.
#include <gtest/gtest.h>

#include <map>

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
    if (fault_kind_name(kind).empty()) continue;  // 12: the lead's drop-acks0-forwards, not on this branch
    EXPECT_EQ(parse_fault_kind(fault_kind_name(kind)), kind);
  }
  EXPECT_EQ(parse_fault_kind("clock-skew"), FaultKind::kClockSkew);
  EXPECT_EQ(parse_fault_kind("reconnect-reorder"), FaultKind::kReconnectReorder);
  EXPECT_EQ(parse_fault_kind("reconnect-duplicate"), FaultKind::kReconnectDuplicate);
  EXPECT_FALSE(parse_fault_kind("").has_value());
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

// The raft-transport kinds: clock-skew (a drift in parts per thousand, for a length), reconnect-reorder and
// reconnect-duplicate (instant, like a reset), in a schedule and drawn at rates.
TEST(Fault, SkewAndReconnectKindsParsePrintAndDraw) {
  Scenario s;
  s.name = "x";
  s.topics.push_back({"t", 1, {}});
  s.schedule = {Fault{1s, FaultKind::kClockSkew, "n1", "", 2s, -300, "", ""},
                Fault{2s, FaultKind::kClockSkew, "n1", "", 5s, 100, "", ""},
                Fault{3s, FaultKind::kReconnectReorder, "n1", "c1", 0s, 0, "", ""},
                Fault{4s, FaultKind::kReconnectDuplicate, "n1", "", 0s, 0, "", ""}};
  const std::string text = to_toml(s);
  EXPECT_NE(text.find("kind = \"clock-skew\", node = \"n1\", length = \"5s\", amount = 100"), std::string::npos)
      << "a skew's amount is always printed: " << text;
  Result<Scenario> back = parse_scenario(text, "printed.toml");
  ASSERT_TRUE(back.ok()) << back.status().to_string() << "\n" << text;
  EXPECT_EQ(back->schedule, s.schedule);

  const std::string rates = R"(name = "r"
duration = "60s"
[[topics]]
name = "t"
[faults]
rates = [
  { kind = "clock-skew", per_minute = 6, length_min = "1s", length_max = "4s", amount_min = -500, amount_max = 500 },
  { kind = "reconnect-reorder", per_minute = 6 },
  { kind = "reconnect-duplicate", per_minute = 6 },
]
)";
  Result<Scenario> drawn = parse_scenario(rates, "rates.toml");
  ASSERT_TRUE(drawn.ok()) << drawn.status().to_string();
  Random rng(3);
  const std::vector<Fault> schedule = draw_schedule(drawn->rates, {"n1", "n2"}, 1s, 60s, rng);
  size_t skews = 0;
  size_t replays = 0;
  for (const Fault& f : schedule) {
    if (f.kind == FaultKind::kClockSkew) {
      ++skews;
      EXPECT_GE(f.amount, -500);
      EXPECT_LE(f.amount, 500);
      EXPECT_GE(f.length, 1s);
      EXPECT_LE(f.length, 4s);
    } else {
      ++replays;
      EXPECT_EQ(f.length, 0s) << "instant, like reset-connections";
    }
  }
  EXPECT_GT(skews, 0u);
  EXPECT_GT(replays, 0u);

  // A clock slowed to a tenth at most: it never stops.
  const std::string stopped = R"(name = "s"
[[topics]]
name = "t"
[faults]
schedule = [ { at = "1s", kind = "clock-skew", node = "n1", amount = -950 } ]
)";
  EXPECT_FALSE(parse_scenario(stopped, "stopped.toml").ok());
}

}  // namespace
}  // namespace sluice::sim

namespace sluice::sim {
namespace {

using namespace std::chrono_literals;

// process-pause, slow-disk, stalled-fsync and swizzle-clog: plain values in a schedule that print and read back, drawn
// at rates, and refused with clear errors for amounts that mean nothing.
TEST(Fault, PauseSlowDiskAndSwizzleKindsParsePrintAndDraw) {
  Scenario s;
  s.name = "x";
  s.brokers = 3;
  s.topics.push_back({"t", 1, {}});
  s.schedule = {Fault{1s, FaultKind::kProcessPause, "n1", "", 2500ms, 0, "", ""},
                Fault{2s, FaultKind::kSlowDisk, "n2", "", 5s, 800, "", ""},
                Fault{3s, FaultKind::kStalledFsync, "n3", "", 4s, 1000, "", ""},
                Fault{4s, FaultKind::kSwizzleClog, "n2", "", 8s, 2, "", ""}};
  const std::string text = to_toml(s);
  EXPECT_NE(text.find("kind = \"process-pause\", node = \"n1\", length = \"2.5s\" }"), std::string::npos) << text;
  EXPECT_NE(text.find("kind = \"slow-disk\", node = \"n2\", length = \"5s\", amount = 800"), std::string::npos)
      << text;
  Result<Scenario> back = parse_scenario(text, "printed.toml");
  ASSERT_TRUE(back.ok()) << back.status().to_string() << "\n" << text;
  EXPECT_EQ(back->schedule, s.schedule);

  const std::string rates = R"(name = "r"
brokers = 3
duration = "60s"
[[topics]]
name = "t"
[faults]
rates = [
  { kind = "process-pause", per_minute = 4, length_min = "1s", length_max = "4s" },
  { kind = "slow-disk", per_minute = 4, amount_min = 50, amount_max = 900 },
  { kind = "stalled-fsync", per_minute = 4 },
  { kind = "swizzle-clog", per_minute = 6, length_min = "4s", length_max = "8s" },
]
)";
  Result<Scenario> drawn = parse_scenario(rates, "rates.toml");
  ASSERT_TRUE(drawn.ok()) << drawn.status().to_string();
  Random rng(3);
  const std::vector<Fault> schedule = draw_schedule(drawn->rates, {"n1", "n2", "n3"}, 1s, 60s, rng);
  std::map<FaultKind, size_t> drawn_kinds;
  for (const Fault& f : schedule) {
    ++drawn_kinds[f.kind];
    if (f.kind == FaultKind::kSlowDisk) EXPECT_TRUE(f.amount >= 50 && f.amount <= 900) << f.amount;
    if (f.kind == FaultKind::kStalledFsync) EXPECT_EQ(f.amount, 1000) << "the default";
    if (f.kind == FaultKind::kSwizzleClog) EXPECT_EQ(f.amount, 0) << "half the brokers";
    if (f.kind == FaultKind::kProcessPause) EXPECT_TRUE(f.length >= 1s && f.length <= 4s);
  }
  EXPECT_EQ(drawn_kinds.size(), 4u) << to_toml(schedule);

  auto refused = [](const std::string& fault, const std::string& why) {
    const std::string text = "name = \"x\"\nbrokers = 3\n[[topics]]\nname = \"t\"\n[faults]\nschedule = [ " + fault +
                             " ]\n";
    Result<Scenario> r = parse_scenario(text, "bad.toml");
    ASSERT_FALSE(r.ok()) << fault;
    EXPECT_NE(r.status().message().find(why), std::string::npos) << r.status().to_string();
  };
  refused("{ at = \"1s\", kind = \"slow-disk\", node = \"n1\", amount = 0 }", "amount (milliseconds)");
  refused("{ at = \"1s\", kind = \"read-corruption\", node = \"n1\", amount = 0 }", "at least 1");
  refused("{ at = \"1s\", kind = \"stalled-fsync\", node = \"n1\", amount = -5 }", "amount (milliseconds)");
  refused("{ at = \"1s\", kind = \"swizzle-clog\", node = \"n1\", amount = 4 }", "swizzle-clog of 4 brokers");
  refused("{ at = \"1s\", kind = \"swizzle-clog\", node = \"n1\", amount = -1 }", "must not be negative");
}

// read-corruption: a plain value with a count and a path prefix that prints and reads back, and draws at a rate.
TEST(Fault, ReadCorruptionParsesPrintsAndDraws) {
  Scenario s;
  s.name = "x";
  s.topics.push_back({"t", 1, {}});
  s.schedule = {Fault{1s, FaultKind::kReadCorruption, "n1", "", 0s, 1, "", ""},
                Fault{2s, FaultKind::kReadCorruption, "n1", "", 0s, 3, "", "data/t-0/"}};
  const std::string text = to_toml(s);
  EXPECT_NE(text.find("{ at = \"1s\", kind = \"read-corruption\", node = \"n1\" }"), std::string::npos) << text;
  EXPECT_NE(text.find("amount = 3, path = \"data/t-0/\""), std::string::npos) << text;
  Result<Scenario> back = parse_scenario(text, "printed.toml");
  ASSERT_TRUE(back.ok()) << back.status().to_string() << "\n" << text;
  EXPECT_EQ(back->schedule, s.schedule);

  const std::string rates = "name = \"r\"\nduration = \"60s\"\n[[topics]]\nname = \"t\"\n[faults]\nrates = [ { kind = "
                            "\"read-corruption\", per_minute = 30, amount_min = 1, amount_max = 3 } ]\n";
  Result<Scenario> drawn = parse_scenario(rates, "rates.toml");
  ASSERT_TRUE(drawn.ok()) << drawn.status().to_string();
  Random rng(4);
  const std::vector<Fault> schedule = draw_schedule(drawn->rates, {"n1"}, 1s, 60s, rng);
  EXPECT_GT(schedule.size(), 10u);
  for (const Fault& f : schedule) {
    EXPECT_EQ(f.kind, FaultKind::kReadCorruption);
    EXPECT_TRUE(f.amount >= 1 && f.amount <= 3) << f.amount;
  }
}

TEST(Fault, TimerJitterParsesPrintsDrawsAndIsBounded) {
  Scenario s;
  s.name = "x";
  s.topics.push_back({"t", 1, {}});
  s.schedule = {Fault{1s, FaultKind::kTimerJitter, "n1", "", 5s, 20, "", ""},
                Fault{2s, FaultKind::kTimerJitter, "n1", "", 3s, 250, "", ""}};
  const std::string text = to_toml(s);
  EXPECT_NE(text.find("kind = \"timer-jitter\", node = \"n1\", length = \"5s\" }"), std::string::npos) << text;
  EXPECT_NE(text.find("length = \"3s\", amount = 250"), std::string::npos) << text;
  Result<Scenario> back = parse_scenario(text, "printed.toml");
  ASSERT_TRUE(back.ok()) << back.status().to_string() << "\n" << text;
  EXPECT_EQ(back->schedule, s.schedule);

  const std::string rates = "name = \"r\"\nduration = \"60s\"\n[[topics]]\nname = \"t\"\n[faults]\nrates = [ { kind = "
                            "\"timer-jitter\", per_minute = 20, amount_min = 5, amount_max = 50 } ]\n";
  Result<Scenario> drawn = parse_scenario(rates, "rates.toml");
  ASSERT_TRUE(drawn.ok()) << drawn.status().to_string();
  Random rng(4);
  const std::vector<Fault> schedule = draw_schedule(drawn->rates, {"n1"}, 1s, 60s, rng);
  EXPECT_GT(schedule.size(), 5u);
  for (const Fault& f : schedule) {
    EXPECT_EQ(f.kind, FaultKind::kTimerJitter);
    EXPECT_TRUE(f.amount >= 5 && f.amount <= 50) << f.amount;
  }
  const std::string zero = "name = \"z\"\nduration = \"60s\"\n[[topics]]\nname = \"t\"\n[faults]\nrates = [ { kind = "
                           "\"timer-jitter\", per_minute = 20, amount_min = 0, amount_max = 50 } ]\n";
  EXPECT_FALSE(parse_scenario(zero, "zero.toml").ok()) << "a jitter of 0 ms is no fault";
}

// Recoverable worlds: the one fault that leaves lasting damage is scheduled by a scenario that expects the refusal,
// never drawn at a rate.
TEST(Fault, CorruptSegmentCannotBeDrawnAtARate) {
  const std::string rates = "name = \"c\"\nduration = \"60s\"\n[[topics]]\nname = \"t\"\n[faults]\nrates = [ { kind = "
                            "\"corrupt-segment\", per_minute = 2 } ]\n";
  const Result<Scenario> drawn = parse_scenario(rates, "rates.toml");
  ASSERT_FALSE(drawn.ok());
  EXPECT_NE(drawn.status().message().find("cannot be drawn at a rate"), std::string::npos) << drawn.status().to_string();
}

}  // namespace
}  // namespace sluice::sim
