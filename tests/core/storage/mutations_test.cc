// The storage's planted bugs (core/base/mutations.h) really bite: each test runs the same body through a LogManager
// without the mutation and with it, and the two differ in the way the mutation says.
#include <gtest/gtest.h>

#include <map>

#include "core/storage/log_manager.h"
#include "tests/core/storage/log_test_util.h"

namespace sluice::storage {
namespace {

using namespace log_testing;

const TopicPartition kTp{"t", 0};

MutationSet just(Mutation mutation) {
  MutationSet set;
  set.add(mutation);
  return set;
}

std::unique_ptr<LogManager> open_manager(Env env, const MutationSet& mutations) {
  BrokerStorageConfig broker;
  broker.mutations = mutations;
  return open_log_manager(env, broker);
}

TopicConfig compacted() {
  return topic_config_with({{"cleanup.policy", "compact"}, {"min.cleanable.dirty.ratio", "0.01"}});
}

int64_t now_ms(Env env) { return to_unix_ms(env.clock.wall_now()); }

// Twenty acknowledged appends to a persisted topic, then the power goes while the log is open: how many of the
// acknowledged offsets the reopened log no longer has.
size_t acknowledged_lost_to_power_loss(const MutationSet& mutations, uint64_t seed) {
  OneNode world(seed);
  std::vector<int64_t> acked;
  bool appended = false;
  world.node().boot([&](Env env) {
    auto manager = open_manager(env, mutations);
    ASSERT_TRUE(manager->create_partition(kTp, topic_config_with({{"durability", "persisted"}})).ok());
    for (int i = 0; i < 20; ++i) {
      auto result = manager->append(kTp, one_record("k", "v" + std::to_string(i), now_ms(env)));
      ASSERT_TRUE(result.ok()) << result.status().to_string();
      acked.push_back(result->base_offset);
    }
    appended = true;
    env.scheduler.sleep_for(std::chrono::hours(1));  // open when the power goes
  });
  EXPECT_TRUE(world.world().run_until([&] { return appended; }, world.world().now() + std::chrono::minutes(1)));
  world.node().power_loss();
  size_t lost = 0;
  EXPECT_TRUE(world.run([&](Env env) {
    auto manager = open_manager(env, mutations);
    const int64_t end = manager->find(kTp)->log_end_offset();
    for (int64_t offset : acked) lost += offset >= end ? 1 : 0;
    ASSERT_TRUE(manager->close().ok());
  }));
  return lost;
}

TEST(StorageMutations, SkipPersistedFsyncLosesAcknowledgedWritesToAPowerLoss) {
  size_t lost_with = 0;
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    EXPECT_EQ(acknowledged_lost_to_power_loss({}, seed), 0u) << "seed " << seed;
    lost_with += acknowledged_lost_to_power_loss(just(Mutation::kSkipPersistedFsync), seed);
  }
  EXPECT_GT(lost_with, 0u);
}

// Offsets handed out for "a", "b", "c", then a clean restart, then for "d"; and what the log holds at the end.
struct Offsets {
  std::vector<int64_t> acked;
  std::vector<Seen> held;
};

Offsets offsets_across_a_restart(const MutationSet& mutations) {
  Offsets out;
  OneNode world;
  EXPECT_TRUE(world.run([&](Env env) {
    auto manager = open_manager(env, mutations);
    ASSERT_TRUE(manager->create_partition(kTp, TopicConfig()).ok());
    for (const char* value : {"a", "b", "c"}) {
      auto result = manager->append(kTp, one_record("k", value, now_ms(env)));
      ASSERT_TRUE(result.ok());
      out.acked.push_back(result->base_offset);
    }
    ASSERT_TRUE(manager->close().ok());
    auto reopened = open_manager(env, mutations);
    auto result = reopened->append(kTp, one_record("k", "d", now_ms(env)));
    ASSERT_TRUE(result.ok());
    out.acked.push_back(result->base_offset);
    out.held = read_all(*reopened->find(kTp));
    ASSERT_TRUE(reopened->close().ok());
  }));
  return out;
}

TEST(StorageMutations, OffsetsReusedAfterRecoveryHandsOutAnOffsetTwice) {
  const Offsets right = offsets_across_a_restart({});
  EXPECT_EQ(right.acked, (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(offsets(right.held), (std::vector<int64_t>{0, 1, 2, 3}));
  const Offsets planted = offsets_across_a_restart(just(Mutation::kOffsetsReusedAfterRecovery));
  EXPECT_EQ(planted.acked, (std::vector<int64_t>{0, 1, 2, 2})) << "\"c\" and \"d\" were both acknowledged at 2";
  ASSERT_EQ(offsets(planted.held), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(planted.held.back().value, "d");
}

// A batch 20 s old under retention.ms = 100 s: where one retention check leaves the log start.
int64_t log_start_after_retention(const MutationSet& mutations) {
  int64_t log_start = -1;
  OneNode world;
  EXPECT_TRUE(world.run([&](Env env) {
    auto manager = open_manager(env, mutations);
    ASSERT_TRUE(manager->create_partition(kTp, topic_config_with({{"retention.ms", "100000"}})).ok());
    ASSERT_TRUE(manager->append(kTp, batch_of(3, now_ms(env) - 20000)).ok());
    ASSERT_TRUE(manager->append(kTp, batch_of(2, now_ms(env))).ok());
    ASSERT_TRUE(manager->run_retention(now_ms(env)).ok());
    log_start = manager->find(kTp)->log_start_offset();
    ASSERT_TRUE(manager->close().ok());
  }));
  return log_start;
}

TEST(StorageMutations, RetentionEvictsUnexpiredBatches) {
  EXPECT_EQ(log_start_after_retention({}), 0) << "20 s is within retention.ms";
  EXPECT_EQ(log_start_after_retention(just(Mutation::kRetentionEvictsUnexpired)), 3) << "judged by 10 s";
}

// Keys k0..k9 written twice ("<key>@0", then "<key>@1"), each round in its own closed segment, then one cleaner
// pass: what a reader sees as each key's latest value.
std::map<std::string, std::optional<std::string>> latest_after_compaction(const MutationSet& mutations) {
  std::map<std::string, std::optional<std::string>> latest;
  OneNode world;
  EXPECT_TRUE(world.run([&](Env env) {
    auto manager = open_manager(env, mutations);
    ASSERT_TRUE(manager->create_partition(kTp, compacted()).ok());
    for (int round = 0; round < 2; ++round) {
      for (int k = 0; k < 10; ++k) {
        const std::string key = "k" + std::to_string(k);
        ASSERT_TRUE(manager->append(kTp, one_record(key, key + "@" + std::to_string(round), now_ms(env))).ok());
      }
      ASSERT_TRUE(manager->find(kTp)->roll().ok());
    }
    auto cleaned = manager->run_cleaner_once(now_ms(env));
    ASSERT_TRUE(cleaned.ok() && cleaned->has_value() && (*cleaned)->result.cleaned);
    latest = latest_per_key(read_all(*manager->find(kTp)));
    ASSERT_TRUE(manager->close().ok());
  }));
  return latest;
}

TEST(StorageMutations, CompactionDropsTheLatestValueOfSomeKeys) {
  std::map<std::string, std::optional<std::string>> written;
  for (int k = 0; k < 10; ++k) written["k" + std::to_string(k)] = "k" + std::to_string(k) + "@1";
  EXPECT_EQ(latest_after_compaction({}), written);
  const auto planted = latest_after_compaction(just(Mutation::kCompactionDropsLatest));
  size_t older_as_latest = 0;
  for (const auto& [key, value] : planted) {
    if (value != written.at(key)) {
      EXPECT_EQ(value, key + "@0") << "the older value stands in for the dropped latest one";
      ++older_as_latest;
    }
  }
  EXPECT_GT(older_as_latest, 0u);
  EXPECT_LT(older_as_latest, written.size()) << "only the keys whose digest is even";
}

// "k" = "v", then its tombstone, then other keys, in closed segments; one cleaner pass well before the tombstone's
// delete horizon (delete.retention.ms, a day by default): whether a reader still sees the tombstone.
bool tombstone_visible_after_first_pass(const MutationSet& mutations) {
  bool visible = false;
  OneNode world;
  EXPECT_TRUE(world.run([&](Env env) {
    auto manager = open_manager(env, mutations);
    ASSERT_TRUE(manager->create_partition(kTp, compacted()).ok());
    ASSERT_TRUE(manager->append(kTp, one_record("k", "v", now_ms(env))).ok());
    ASSERT_TRUE(manager->append(kTp, one_record("k", std::nullopt, now_ms(env))).ok());
    ASSERT_TRUE(manager->append(kTp, one_record("other", "w", now_ms(env))).ok());
    ASSERT_TRUE(manager->find(kTp)->roll().ok());
    auto cleaned = manager->run_cleaner_once(now_ms(env));
    ASSERT_TRUE(cleaned.ok() && cleaned->has_value() && (*cleaned)->result.cleaned);
    const auto latest = latest_per_key(read_all(*manager->find(kTp)));
    EXPECT_EQ(latest.at("other"), "w");
    visible = latest.count("k") == 1 && latest.at("k") == std::nullopt;
    ASSERT_TRUE(manager->close().ok());
  }));
  return visible;
}

TEST(StorageMutations, TombstoneBeforeHorizonRemovesItOnTheFirstPass) {
  EXPECT_TRUE(tombstone_visible_after_first_pass({}));
  EXPECT_FALSE(tombstone_visible_after_first_pass(just(Mutation::kTombstoneBeforeHorizon)));
}

}  // namespace
}  // namespace sluice::storage
