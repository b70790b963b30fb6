#include "core/base/log.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace sluice {
namespace {

TEST(Logger, LevelsFilterAndPrefixStampsLines) {
  int calls = 0;
  Logger log("n1", LogLevel::kInfo, [&] {
    ++calls;
    return std::string("[t=1.500000 n1]");
  });
  std::vector<std::string> lines;
  log.set_capture([&](LogLevel, std::string_view line) { lines.emplace_back(line); });
  log.debug("hidden {}", 1);
  log.info("accepted connection from {}", "n2:1234");
  log.warn("disk {}% full", 91);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], "[t=1.500000 n1] accepted connection from n2:1234");
  EXPECT_EQ(lines[1], "[t=1.500000 n1] disk 91% full");
  EXPECT_EQ(calls, 2) << "a disabled line must not even build its prefix";
  log.set_level(LogLevel::kOff);
  log.error("nothing");
  EXPECT_EQ(lines.size(), 2u);
}

TEST(Logger, ParsesLevelNames) {
  EXPECT_EQ(parse_log_level("debug"), LogLevel::kDebug);
  EXPECT_EQ(parse_log_level("warn"), LogLevel::kWarn);
  EXPECT_FALSE(parse_log_level("loud").has_value());
  EXPECT_EQ(log_level_name(LogLevel::kError), "error");
}

}  // namespace
}  // namespace sluice
