// The scheduled log cleaner: LogManager's choice of the filthiest log, its checkpoint file, its fiber, and its
// turns with retention (storage-semantics.md §3; Kafka's LogCleanerManager).
#include <gtest/gtest.h>

#include "core/storage/cleaner_checkpoint.h"
#include "core/storage/log_manager.h"
#include "tests/core/storage/log_test_util.h"

namespace sluice::storage {
namespace {

using namespace log_testing;

int64_t now_ms(Env env) { return to_unix_ms(env.clock.wall_now()); }

std::unique_ptr<LogManager> open_manager(Env env, BrokerStorageConfig config = {}) {
  auto manager = LogManager::open(env, "data", std::move(config));
  EXPECT_TRUE(manager.ok()) << manager.status().to_string();
  return manager.ok() ? std::move(*manager) : nullptr;
}

TopicConfig compacted(std::map<std::string, std::string> overrides = {}) {
  overrides.emplace("cleanup.policy", "compact");
  overrides.emplace("min.cleanable.dirty.ratio", "0.01");
  auto config = TopicConfig::from_overrides(overrides, TopicConfig());
  EXPECT_TRUE(config.ok()) << config.status().to_string();
  return config.ok() ? *config : TopicConfig();
}

// `rounds` updates of keys k0..k(keys-1), one batch each, a roll after every round: closed segments to clean.
void append_updates(LogManager& manager, const TopicPartition& tp, Env env, int rounds, int keys) {
  for (int round = 0; round < rounds; ++round) {
    for (int k = 0; k < keys; ++k) {
      const std::string key = "k" + std::to_string(k);
      ASSERT_TRUE(manager.append(tp, one_record(key, key + "@" + std::to_string(round), now_ms(env))).ok());
    }
    ASSERT_TRUE(manager.find(tp)->roll().ok());
  }
}

TEST(CleanerCheckpoint, RoundTripsKafkasTextLayout) {
  CleanerCheckpoints checkpoints{{{"orders", 0}, 42}, {{"__consumer_offsets", 17}, 0}};
  const std::string text = encode_cleaner_checkpoints(checkpoints);
  EXPECT_EQ(text, "0\n2\n__consumer_offsets 17 0\norders 0 42\n");
  auto decoded = decode_cleaner_checkpoints(text);
  ASSERT_TRUE(decoded.ok()) << decoded.status().to_string();
  EXPECT_EQ(*decoded, checkpoints);
  for (const char* bad : {"", "1\n0\n", "0\n2\norders 0 1\n", "0\n1\norders x 1\n", "0\n1\norders 0 -1\n",
                          "0\n1\norders 0\n"}) {
    EXPECT_EQ(decode_cleaner_checkpoints(bad).status().code(), Code::kCorruption) << bad;
  }
}

TEST(LogManagerCleaner, TheCleanerFiberCompactsWithinTheBackoffAndSavesItsProgress) {
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    BrokerStorageConfig broker;
    broker.log_cleaner_backoff_ms = 1000;
    auto manager = open_manager(env, broker);
    const TopicPartition tp{"table", 0};
    ASSERT_TRUE(manager->create_partition(tp, compacted()).ok());
    manager->start();
    append_updates(*manager, tp, env, 4, 3);  // offsets 0..11, latest values at 9, 10, 11
    env.scheduler.sleep_for(std::chrono::milliseconds(1500));
    EXPECT_EQ(offsets(read_all(*manager->find(tp))), (std::vector<int64_t>{9, 10, 11}));
    EXPECT_EQ(manager->cleaner_checkpoint(tp), 12);
    ASSERT_TRUE(manager->close().ok());

    auto checkpoints = read_cleaner_checkpoints(env.fs, "data");
    ASSERT_TRUE(checkpoints.ok());
    EXPECT_EQ(checkpoints->at(tp), 12);
    auto reopened = open_manager(env, broker);
    EXPECT_EQ(reopened->cleaner_checkpoint(tp), 12);
    auto again = reopened->run_cleaner_once(now_ms(env));
    ASSERT_TRUE(again.ok());
    EXPECT_FALSE(again->has_value()) << "a clean log is not cleaned again after a restart";
    ASSERT_TRUE(reopened->close().ok());
  }));
}

TEST(LogManagerCleaner, TheFilthiestLogGoesFirstAndCleanOrUncompactedLogsNever) {
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    auto manager = open_manager(env);
    const TopicPartition somewhat{"somewhat", 0};
    const TopicPartition filthy{"filthy", 0};
    const TopicPartition plain{"plain", 0};
    ASSERT_TRUE(manager->create_partition(somewhat, compacted()).ok());
    ASSERT_TRUE(manager->create_partition(filthy, compacted()).ok());
    ASSERT_TRUE(manager->create_partition(plain, TopicConfig()).ok());
    append_updates(*manager, somewhat, env, 2, 3);
    append_updates(*manager, filthy, env, 3, 3);
    append_updates(*manager, plain, env, 5, 3);
    ASSERT_TRUE(manager->run_cleaner_once(now_ms(env)).ok());  // both are all dirty: ratio 1 ties
    auto first = manager->run_cleaner_once(now_ms(env));
    ASSERT_TRUE(first.ok() && first->has_value());
    append_updates(*manager, somewhat, env, 1, 3);
    append_updates(*manager, filthy, env, 3, 3);  // filthy's dirty share is now larger
    auto next = manager->run_cleaner_once(now_ms(env));
    ASSERT_TRUE(next.ok() && next->has_value());
    EXPECT_EQ((*next)->tp, filthy);
    EXPECT_GT((*next)->result.dirty_ratio, 0.5);
    auto after = manager->run_cleaner_once(now_ms(env));
    ASSERT_TRUE(after.ok() && after->has_value());
    EXPECT_EQ((*after)->tp, somewhat);
    auto idle = manager->run_cleaner_once(now_ms(env));
    ASSERT_TRUE(idle.ok());
    EXPECT_FALSE(idle->has_value()) << "nothing dirty is left, and `plain` is not compacted";
    EXPECT_EQ(read_all(*manager->find(plain)).size(), 15u);
    ASSERT_TRUE(manager->close().ok());
  }));
}

TEST(LogManagerCleaner, TheDirtyRatioGateIsStrictlyGreater) {
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    auto manager = open_manager(env);
    const TopicPartition tp{"gate", 0};
    ASSERT_TRUE(manager->create_partition(tp, compacted({{"min.cleanable.dirty.ratio", "0.5"}})).ok());
    append_updates(*manager, tp, env, 1, 2);
    ASSERT_TRUE(manager->run_cleaner_once(now_ms(env)).ok());  // all dirty: cleaned, checkpoint at 2
    ASSERT_EQ(manager->cleaner_checkpoint(tp), 2);
    append_updates(*manager, tp, env, 1, 2);  // equal sizes: ratio exactly 0.5, not above it
    auto gated = manager->run_cleaner_once(now_ms(env));
    ASSERT_TRUE(gated.ok());
    EXPECT_FALSE(gated->has_value());
    append_updates(*manager, tp, env, 1, 2);
    auto cleaned = manager->run_cleaner_once(now_ms(env));
    ASSERT_TRUE(cleaned.ok() && cleaned->has_value());
    EXPECT_EQ(offsets(read_all(*manager->find(tp))), (std::vector<int64_t>{4, 5}));
    ASSERT_TRUE(manager->close().ok());
  }));
}

TEST(LogManagerCleaner, ACorruptCheckpointFileOnlyCostsARepeatedPass) {
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    auto manager = open_manager(env);
    const TopicPartition tp{"t", 0};
    ASSERT_TRUE(manager->create_partition(tp, compacted()).ok());
    append_updates(*manager, tp, env, 2, 2);
    ASSERT_TRUE(manager->close().ok());
    ASSERT_TRUE(write_file_atomically(env.fs, "data/cleaner-offset-checkpoint", "data/x.tmp", as_bytes("junk"))
                    .ok());
    auto reopened = open_manager(env);
    ASSERT_NE(reopened, nullptr);
    EXPECT_EQ(reopened->cleaner_checkpoint(tp), 0);
    auto cleaned = reopened->run_cleaner_once(now_ms(env));
    ASSERT_TRUE(cleaned.ok() && cleaned->has_value());
    EXPECT_EQ(offsets(read_all(*reopened->find(tp))), (std::vector<int64_t>{2, 3}));
    ASSERT_TRUE(reopened->close().ok());
  }));
}

// compact,delete: retention moves the log start and the cleaner compacts what is left, taking turns.
TEST(LogManagerCleaner, CompactDeleteRunsRetentionAndTheCleanerConcurrentlyWithAppends) {
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    BrokerStorageConfig broker;
    broker.log_cleaner_backoff_ms = 300;
    broker.log_retention_check_interval_ms = 700;
    auto manager = open_manager(env, broker);
    const TopicPartition tp{"both", 0};
    ASSERT_TRUE(manager->create_partition(
        tp, compacted({{"cleanup.policy", "compact,delete"}, {"retention.ms", "20000"}, {"segment.ms", "500"}})).ok());
    manager->start();
    for (int i = 0; i < 400; ++i) {
      // The first 100 keys are never updated again: only retention can remove them.
      const std::string key = i < 100 ? "u" + std::to_string(i) : "k" + std::to_string(i % 7);
      ASSERT_TRUE(manager->append(tp, one_record(key, std::to_string(i), now_ms(env))).ok());
      if (i % 50 == 0) {
        ASSERT_TRUE(manager->delete_records(tp, manager->find(tp)->log_start_offset()).ok());
      }
      env.scheduler.sleep_for(std::chrono::milliseconds(150));
    }
    PartitionLog& log = *manager->find(tp);
    const std::vector<Seen> seen = read_all(log);
    EXPECT_GT(log.log_start_offset(), 0) << "retention evicted the old prefix";
    EXPECT_EQ(latest_per_key(seen).count("u99"), 0u) << "expired by retention.ms";
    EXPECT_GT(manager->cleaner_checkpoint(tp), log.log_start_offset()) << "the cleaner made progress";
    EXPECT_LT(seen.size(), 200u) << "compaction removed superseded values";
    for (size_t i = 1; i < seen.size(); ++i) EXPECT_LT(seen[i - 1].offset, seen[i].offset);
    const auto latest = latest_per_key(seen);
    EXPECT_EQ(latest.size(), 7u);
    EXPECT_EQ(latest.at("k0"), std::optional<std::string>("399")) << "the newest value always survives";
    ASSERT_TRUE(manager->close().ok());
  }));
}

}  // namespace
}  // namespace sluice::storage
