// The consumer workload reads as Kafka's consumers do: one Fetch per leader for all the partitions it leads, and a
// leader that stops answering holds up only its own partitions (a fetcher per leader). Judged from the history of a
// 3-broker run in which one broker's process is paused.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <sstream>
#include <string>

#include "sim/scenario/runner.h"

namespace sluice::sim {
namespace {

constexpr char kScenario[] = R"(
name = "consumer-fetchers"
brokers = 3
duration = "14s"
liveness = "30s"

[[topics]]
name = "t"
partitions = 6
replication_factor = 1  # a partition's records are readable as soon as its leader has them

[[workloads]]
kind = "producer"
name = "p"
topic = "t"
acks = 1
keyed = false
rate = 200

[[workloads]]
kind = "consumer"
name = "c"
topic = "t"

[faults]
schedule = [ { at = "5s", kind = "process-pause", node = "n1", length = "4s" } ]
)";

// A fetch operation of the consumer, from its JSON line.
struct Fetch {
  double invoked = 0;
  double completed = 0;
  int partition = -1;
  bool read_records = false;
};

double number_after(const std::string& line, const std::string& key) {
  const size_t at = line.find("\"" + key + "\":");
  if (at == std::string::npos) return -1;
  return std::stod(line.substr(at + key.size() + 3));
}

std::vector<Fetch> consumer_fetches(const std::string& jsonl) {
  std::vector<Fetch> fetches;
  std::istringstream lines(jsonl);
  for (std::string line; std::getline(lines, line);) {
    if (line.find("\"process\":\"c\"") == std::string::npos || line.find("\"kind\":\"fetch\"") == std::string::npos) {
      continue;
    }
    fetches.push_back({number_after(line, "invoked"), number_after(line, "completed"),
                       static_cast<int>(number_after(line, "partition")),
                       line.find("\"records\":[{") != std::string::npos});
  }
  return fetches;
}

TEST(ConsumerWorkload, FetchesEachLeadersPartitionsTogetherAndAPausedLeaderHoldsUpOnlyItsOwn) {
  Result<Scenario> scenario = parse_scenario(kScenario, "consumer_workload_test");
  ASSERT_TRUE(scenario.ok()) << scenario.status().to_string();
  RunOptions options;
  options.seed = 3;
  options.keep_history = true;
  const RunResult run = run_scenario(*scenario, options);
  ASSERT_TRUE(run.passed()) << run.replay;
  const std::vector<Fetch> fetches = consumer_fetches(run.history_jsonl);
  ASSERT_GT(fetches.size(), 100u);

  // One request, several partitions: the operations of a round share their invocation time.
  std::map<double, std::set<int>> rounds;
  for (const Fetch& f : fetches) rounds[f.invoked].insert(f.partition);
  size_t widest = 0;
  for (const auto& [at, partitions] : rounds) widest = std::max(widest, partitions.size());
  EXPECT_GE(widest, 2u) << "every round asked for one partition";
  EXPECT_LT(rounds.size() * 3, fetches.size() * 2) << "most rounds ask for more than one partition";

  // n1 is paused from 5 s to 9 s: the partitions the other two brokers lead are still read meanwhile.
  std::set<int> read_while_paused;
  for (const Fetch& f : fetches) {
    if (f.read_records && f.invoked >= 5.5 && f.completed <= 8.5) read_while_paused.insert(f.partition);
  }
  EXPECT_GE(read_while_paused.size(), 3u) << "a paused leader held up the partitions of the others";
}

}  // namespace
}  // namespace sluice::sim
