// Scenario files: every file in scenarios/ parses, prints and parses back to the same scenario; a seed expands a
// scenario into the same schedule every time; bad files are refused with messages that name the field.
#include <gtest/gtest.h>

#include <filesystem>

#include "sim/scenario/scenario.h"
#include "tests/source_dir.h"

namespace sluice::sim {
namespace {

std::vector<std::string> scenario_files() {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(sluice::testing::source_path("scenarios"))) {
    if (entry.path().extension() == ".toml") files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST(ScenarioFile, EveryScenarioParsesAndPrintsBack) {
  const std::vector<std::string> files = scenario_files();
  ASSERT_GE(files.size(), 10u);
  for (const std::string& file : files) {
    Result<Scenario> s = load_scenario_file(file);
    ASSERT_TRUE(s.ok()) << s.status().to_string();
    EXPECT_FALSE(s->summary.empty()) << file << " says nothing of the invariant it exercises";
    Result<Scenario> back = parse_scenario(to_toml(*s), file);
    ASSERT_TRUE(back.ok()) << back.status().to_string() << "\n" << to_toml(*s);
    EXPECT_EQ(to_toml(*back), to_toml(*s)) << file;
  }
}

TEST(ScenarioFile, ASeedExpandsIntoOneSchedule) {
  for (const std::string& file : scenario_files()) {
    Result<Scenario> s = load_scenario_file(file);
    ASSERT_TRUE(s.ok());
    const Scenario a = expand(*s, 42);
    EXPECT_EQ(a.schedule, expand(*s, 42).schedule) << file;
    EXPECT_TRUE(a.rates.empty());
    Result<Scenario> replay = parse_scenario(to_toml(a, true), file);
    ASSERT_TRUE(replay.ok()) << replay.status().to_string();
    EXPECT_EQ(replay->schedule, a.schedule) << file;
  }
}

TEST(ScenarioFile, MistakesAreNamed) {
  const auto error = [](const std::string& text) {
    Result<Scenario> s = parse_scenario(text, "bad.toml");
    return s.ok() ? std::string("(parsed)") : s.status().message();
  };
  EXPECT_NE(error("name = \"x\"\nduraton = \"3s\"\n").find("unknown field 'duraton'"), std::string::npos);
  EXPECT_NE(error("name = \"x\"\n[[workloads]]\nkind = \"producer\"\ntopic = \"nope\"\n").find("'nope'"),
            std::string::npos);
  EXPECT_NE(error("name = \"x\"\n[faults]\nschedule = [{ at = \"1s\", kind = \"meteor\" }]\n").find("meteor"),
            std::string::npos);
  EXPECT_NE(error("name = \"x\"\n[faults]\nschedule = [{ at = \"1s\", kind = \"crash\", node = \"n7\" }]\n")
                .find("not a broker node"),
            std::string::npos);
  EXPECT_NE(error("name = \"x\"\nduration = \"soon\"\n").find("duration"), std::string::npos);
  EXPECT_NE(error("name = [\n").find("bad.toml:"), std::string::npos);
  EXPECT_NE(error("name = \"x\"\n[[topics]]\nname = \"t\"\n[[workloads]]\nkind = \"producer\"\ntopic = \"t\"\n"
                  "acks = 1\nidempotent = true\n")
                .find("idempotent"),
            std::string::npos);
}

}  // namespace
}  // namespace sluice::sim
