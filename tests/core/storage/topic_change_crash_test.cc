// Crash-safe topic changes (issue 20 item 5): a topic's partitions are created all or none and deleted all or none,
// whatever step a crash or a power loss cuts. A sweep cuts one workload (create a 3-partition topic, append to it,
// delete it, create it again with 2 partitions, remove the retired files) after every simulation step; the next open
// must load, and find the topic whole or absent, never with a missing partition (TopicTable::load refuses that).
#include <gtest/gtest.h>

#include <set>

#include "core/storage/log_directories.h"
#include "tests/core/storage/log_test_util.h"
#include "tests/probe_hits.h"

namespace sluice::storage {
namespace {

using namespace log_testing;

const std::string kFirstId = "AAAAAAAAAAAAAAAAAAAAAA";
const std::string kSecondId = "BBBBBBBBBBBBBBBBBBBBBB";
constexpr const char* kTopic = "t";

TopicConfig persisted() { return topic_config_with({{"durability", "persisted"}}); }

// What the workload saw answered.
struct Answered {
  bool created_first = false;
  int appended = 0;  // to partitions 0.. of the first topic, one record each
  bool deleted_first = false;
  bool created_second = false;
};

void workload(Env env, Answered& answered) {
  std::unique_ptr<LogManager> manager = open_log_manager(env);
  ASSERT_NE(manager, nullptr);
  ASSERT_TRUE(manager->create_partitions(kTopic, 0, 3, persisted(), kFirstId).ok());
  answered.created_first = true;
  for (int32_t p = 0; p < 3; ++p) {
    ASSERT_TRUE(manager->append({kTopic, p}, one_record("k", "v" + std::to_string(p), 1)).ok());
    answered.appended = p + 1;
  }
  for (int32_t p = 0; p < 3; ++p) ASSERT_TRUE(manager->delete_partition({kTopic, p}).ok());
  answered.deleted_first = true;
  ASSERT_TRUE(manager->create_partitions(kTopic, 0, 2, persisted(), kSecondId).ok());
  answered.created_second = true;
  EXPECT_EQ(manager->remove_retired_dirs(), 0u);
  ASSERT_TRUE(manager->close().ok());
}

void recover(Env env) {
  std::unique_ptr<LogManager> manager = open_log_manager(env);
  ASSERT_NE(manager, nullptr);
  ASSERT_TRUE(manager->close().ok());
}

// The topic the directory holds after recovery: its partition numbers and their one id.
void check_whole_or_absent(Env env, const Answered& answered, const std::string& where) {
  auto opened = LogManager::open(env, "data", BrokerStorageConfig{});
  ASSERT_TRUE(opened.ok()) << where << ": the next start failed: " << opened.status().to_string();
  LogManager& manager = **opened;
  std::set<int32_t> numbers;
  std::set<std::string> ids;
  for (const TopicPartition& tp : manager.partitions()) {
    EXPECT_EQ(tp.topic, kTopic) << where;
    numbers.insert(tp.partition);
    ids.insert(manager.topic_id(tp));
  }
  const bool absent = numbers.empty();
  const bool first_whole = numbers == std::set<int32_t>{0, 1, 2} && ids == std::set<std::string>{kFirstId};
  const bool second_whole = numbers == std::set<int32_t>{0, 1} && ids == std::set<std::string>{kSecondId};
  ASSERT_TRUE(absent || first_whole || second_whole)
      << where << ": " << numbers.size() << " partition(s) of " << ids.size() << " topic id(s) left";
  if (answered.created_second) EXPECT_TRUE(second_whole) << where << ": an answered creation was undone";
  if (answered.deleted_first) EXPECT_FALSE(first_whole) << where << ": an answered deletion was undone";
  if (answered.created_first && !answered.deleted_first && !first_whole) {
    EXPECT_TRUE(absent) << where;  // only a deletion under way may have taken it
  }
  if (first_whole) {
    for (int32_t p = 0; p < answered.appended; ++p) {
      EXPECT_EQ(manager.find({kTopic, p})->log_end_offset(), 1) << where << ": an acknowledged append was lost";
    }
  }
  ASSERT_TRUE(manager.close().ok());
}

void sweep(bool power_loss) {
  size_t total_steps = 0;
  {
    OneNode world(7);
    Answered answered;
    bool finished = false;
    total_steps = run_steps(world, [&](Env env) { workload(env, answered); }, SIZE_MAX, &finished);
    ASSERT_TRUE(finished);
  }
  ASSERT_GT(total_steps, 40u);
  reset_probe_hits();
  for (size_t cut = 0; cut <= total_steps; ++cut) {
    OneNode world(7);
    Answered answered;
    run_steps(world, [&](Env env) { workload(env, answered); }, cut, nullptr);
    if (power_loss) {
      world.node().power_loss();
    } else {
      world.node().crash();
    }
    run_steps(world, recover, cut % 30, nullptr);  // cut inside recovery too
    if (power_loss) {
      world.node().power_loss();
    } else {
      world.node().crash();
    }
    const std::string where = "cut after step " + std::to_string(cut) + " of " + std::to_string(total_steps);
    ASSERT_TRUE(world.run([&](Env env) { check_whole_or_absent(env, answered, where); })) << where;
    if (::testing::Test::HasFatalFailure()) return;
  }
  // The sweep reached each repair.
  EXPECT_GT(probe_hits("log_manager.interrupted_creation_undone"), 0u);
  EXPECT_GT(probe_hits("log_manager.interrupted_deletion_finished"), 0u);
  EXPECT_GT(probe_hits("log_manager.staged_partition_removed"), 0u);
}

TEST(TopicChangeCrash, ProcessCrashAtEveryStepLeavesTheTopicWholeOrAbsent) { sweep(/*power_loss=*/false); }

TEST(TopicChangeCrash, PowerLossAtEveryStepLeavesTheTopicWholeOrAbsent) { sweep(/*power_loss=*/true); }

TEST(TopicChangeCrash, AFailedCreationUndoesThePartitionsItMade) {
  OneNode world;
  ASSERT_TRUE(world.run([&](Env env) {
    std::unique_ptr<LogManager> manager = open_log_manager(env);
    ASSERT_NE(manager, nullptr);
    ASSERT_TRUE(manager->create_partitions(kTopic, 2, 1, persisted(), kFirstId).ok());  // partition 2 is taken
    EXPECT_EQ(manager->create_partitions(kTopic, 0, 3, persisted(), kFirstId).status().code(), Code::kAlreadyExists);
    ASSERT_TRUE(manager->delete_partition({kTopic, 2}).ok());
    world.disk().fail_next(DiskOp::kMetadata, 1, "data/t-2");  // the third partition's directory cannot be made
    auto failed = manager->create_partitions(kTopic, 0, 3, persisted(), kFirstId);
    EXPECT_FALSE(failed.ok());
    EXPECT_TRUE(manager->partitions().empty()) << "the partitions made before the failure were deleted again";
    ASSERT_TRUE(manager->close().ok());
    auto reopened = LogManager::open(env, "data", BrokerStorageConfig{});
    ASSERT_TRUE(reopened.ok());
    EXPECT_TRUE((*reopened)->partitions().empty());
    ASSERT_TRUE((*reopened)->close().ok());
  }));
}

TEST(TopicChangeCrash, RetiredDirectoryNamesKeepTheTopicIdAndFitAFileName) {
  const std::string name = retired_dir_name({"orders.v2-eu", 12}, kFirstId, "0123456789abcdef");
  EXPECT_EQ(name, "orders.v2-eu-12." + kFirstId + ".0123456789abcdef-delete");
  std::optional<RetiredDir> parsed = parse_retired_dir_name(name);
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->tp, (TopicPartition{"orders.v2-eu", 12}));
  EXPECT_EQ(parsed->topic_id, kFirstId);
  const std::string legacy = retired_dir_name({"t", 0}, "", "ab");
  ASSERT_TRUE(parse_retired_dir_name(legacy).has_value());
  EXPECT_EQ(parse_retired_dir_name(legacy)->topic_id, "");
  const std::string long_name = retired_dir_name({std::string(249, 'a'), 7}, kFirstId, "0123456789abcdef");
  EXPECT_LE(long_name.size(), 255u);
  ASSERT_TRUE(parse_retired_dir_name(long_name).has_value());
  EXPECT_FALSE(parse_retired_dir_name(long_name)->tp.has_value());
  EXPECT_EQ(parse_retired_dir_name(long_name)->topic_id, kFirstId);
  EXPECT_FALSE(parse_retired_dir_name("t-0").has_value());
  EXPECT_FALSE(parse_partition_dir(name).has_value()) << "never loaded as a partition";
  // Neither an id nor the name: the name's hash.
  const std::string long_legacy = retired_dir_name({std::string(249, 'a'), 7}, "", "0123456789abcdef");
  EXPECT_LE(long_legacy.size(), 255u);
  std::optional<RetiredDir> hashed = parse_retired_dir_name(long_legacy);
  ASSERT_TRUE(hashed.has_value());
  EXPECT_FALSE(hashed->tp.has_value());
  EXPECT_EQ(hashed->topic_id, "");
  EXPECT_EQ(hashed->topic_name_hash, topic_name_hash(std::string(249, 'a')));
  EXPECT_NE(topic_name_hash(std::string(249, 'a')), topic_name_hash(std::string(248, 'a') + "b"));
}

// A topic made without an id (an older data directory) whose name is too long to keep in a retired directory's
// name: a crash after its first partition was retired still takes the others at the next open, and only them.
TEST(TopicChangeCrash, AnInterruptedDeletionOfALongNamedTopicWithoutAnIdIsFinished) {
  const std::string doomed(240, 'd');
  const std::string kept(239, 'd');
  OneNode world;
  ASSERT_TRUE(world.run([&](Env env) {
    std::unique_ptr<LogManager> manager = open_log_manager(env);
    ASSERT_NE(manager, nullptr);
    for (int32_t p = 0; p < 3; ++p) ASSERT_TRUE(manager->create_partition({doomed, p}, persisted()).ok());
    ASSERT_TRUE(manager->create_partition({kept, 0}, persisted()).ok());
    ASSERT_TRUE(manager->delete_partition({doomed, 0}).ok());  // then the crash: partitions 1 and 2 stay
    ASSERT_TRUE(manager->close().ok());
    auto reopened = LogManager::open(env, "data", BrokerStorageConfig{});
    ASSERT_TRUE(reopened.ok());
    std::set<std::string> left;
    for (const TopicPartition& tp : (*reopened)->partitions()) left.insert(tp.to_string());
    EXPECT_EQ(left, (std::set<std::string>{kept + "-0"}));
    ASSERT_TRUE((*reopened)->close().ok());
  }));
}

TEST(CreationIntent, RoundTripsAndRefusesGarbage) {
  const CreationIntent intent{"a.b-c", 3, 5, kFirstId};
  std::optional<CreationIntent> decoded = CreationIntent::decode(intent.encode());
  ASSERT_TRUE(decoded.has_value());
  EXPECT_EQ(decoded->topic, "a.b-c");
  EXPECT_EQ(decoded->first, 3);
  EXPECT_EQ(decoded->count, 5);
  EXPECT_EQ(decoded->topic_id, kFirstId);
  EXPECT_FALSE(CreationIntent::decode("").has_value());
  EXPECT_FALSE(CreationIntent::decode("topic: t\nfirst_partition: x\npartitions: 1\n").has_value());
  EXPECT_FALSE(CreationIntent::decode("topic: t\nfirst_partition: 0\npartitions: 0\n").has_value());
}

}  // namespace
}  // namespace sluice::storage
