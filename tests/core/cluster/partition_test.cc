// cluster::Partition on one simulated node, over a real log manager: appends at each acks level and durability,
// the acknowledgement wait, reads that never pass the high watermark, the leader-epoch checks, producer-state
// de-duplication, DeleteRecords, and a partition removed under a holder.
#include "core/cluster/partition.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/cluster/partition_manager.h"
#include "core/protocol/error_codes.h"
#include "core/protocol/messages/list_offsets.h"
#include "tests/core/storage/log_test_util.h"

namespace sluice::cluster {
namespace {

using namespace storage::log_testing;
using storage::TopicPartition;

constexpr int32_t kNodeId = 7;
const TopicPartition kTp{"events", 0};

// A log manager over "data" and the partitions over it, on the node's main fiber.
struct Rig {
  explicit Rig(Env env, MutationSet mutations = {}) : env(env), logs(open_log_manager(env)) {
    partitions = std::make_unique<PartitionManager>(env, kNodeId, *logs, mutations);
    partitions->start();
  }
  ~Rig() {
    partitions->stop();
    EXPECT_TRUE(logs->close().ok());
  }
  std::shared_ptr<Partition> create(const std::map<std::string, std::string>& overrides = {},
                                    const TopicPartition& tp = kTp) {
    auto created = partitions->create(tp, topic_config_with(overrides), "");
    EXPECT_TRUE(created.ok()) << created.status().to_string();
    return created.ok() ? *created : nullptr;
  }
  int64_t now_ms() const { return to_unix_ms(env.clock.wall_now()); }
  Instant deadline() const { return env.clock.now() + std::chrono::seconds(30); }  // a produce's timeout_ms

  Env env;
  std::unique_ptr<storage::LogManager> logs;
  std::unique_ptr<PartitionManager> partitions;
};

Result<Appended> append(Partition& partition, const Bytes& batch, Acks acks) {
  std::vector<storage::RecordError> record_errors;
  return partition.append_records(batch, acks, &record_errors);
}

ErrorCode error_of_result(const auto& result) { return result.ok() ? ErrorCode::kNone : to_error_code(result.status()); }

int64_t records_read(Partition& partition, int64_t offset) {
  Result<PartitionRead> read = partition.read({.offset = offset}, 1 << 20, /*min_one_batch=*/true);
  EXPECT_TRUE(read.ok()) << read.status().to_string();
  if (!read.ok()) return -1;
  int64_t count = 0;
  for (const storage::BatchHeader& header : headers_of(read->data.records)) count += header.last_offset_delta + 1;
  return count;
}

TEST(Partition, OneNodeLeadsInTheInitialEpochWithItselfAsTheOnlyReplica) {
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    Rig rig(env);
    std::shared_ptr<Partition> partition = rig.create();
    EXPECT_EQ(partition->leader(), kNodeId);
    EXPECT_TRUE(partition->is_leader());
    EXPECT_EQ(partition->leader_epoch(), kInitialLeaderEpoch);
    EXPECT_EQ(partition->replicas(), std::vector<int32_t>{kNodeId});
    EXPECT_EQ(partition->in_sync_replicas(), std::vector<int32_t>{kNodeId});
    EXPECT_EQ(rig.partitions->find(kTp), partition);
    EXPECT_EQ(rig.partitions->partitions(), std::vector<TopicPartition>{kTp});
  }));
}

// The manager keeps its partitions in a lookup order of its own (the number first); partitions() still lists them
// in TopicPartition's order, which is the order everything that walks them (retention, metadata) relies on.
TEST(Partition, TheManagerFindsPartitionsByNameAndListsThemInTopicPartitionOrder) {
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    Rig rig(env);
    const std::vector<TopicPartition> made = {{"b", 1}, {"a", 10}, {"aa", 0}, {"a", 2}, {"b", 0}, {"ab", 2}};
    std::map<TopicPartition, std::shared_ptr<Partition>> by_name;
    for (const TopicPartition& tp : made) by_name[tp] = rig.create({}, tp);
    std::vector<TopicPartition> sorted = made;
    std::ranges::sort(sorted);
    EXPECT_EQ(rig.partitions->partitions(), sorted);
    for (const auto& [tp, partition] : by_name) {
      ASSERT_NE(partition, nullptr);
      EXPECT_EQ(rig.partitions->find(tp), partition) << tp.to_string();
      EXPECT_EQ(rig.partitions->find(std::string_view(tp.topic), tp.partition), partition) << tp.to_string();
    }
    for (const TopicPartition& absent : std::vector<TopicPartition>{{"a", 3}, {"c", 0}, {"", 0}, {"b", -1}}) {
      EXPECT_EQ(rig.partitions->find(absent), nullptr) << absent.to_string();
    }
    EXPECT_TRUE(rig.partitions->remove({"a", 2}).ok());
    EXPECT_EQ((rig.partitions->find("a", 2)), nullptr);
    EXPECT_EQ((rig.partitions->find("a", 10)), (by_name[{"a", 10}]));
    std::erase(sorted, TopicPartition{"a", 2});
    EXPECT_EQ(rig.partitions->partitions(), sorted);
  }));
}

TEST(Partition, AReplicatedTopicAnswersEveryAcksLevelAtOnce) {
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    Rig rig(env);
    std::shared_ptr<Partition> partition = rig.create();
    int64_t expected_base = 0;
    for (Acks acks : {Acks::kNone, Acks::kLeader, Acks::kAll}) {
      Result<Appended> appended = append(*partition, batch_of(2, rig.now_ms()), acks);
      ASSERT_TRUE(appended.ok()) << appended.status().to_string();
      EXPECT_EQ(appended->result.base_offset, expected_base);
      EXPECT_EQ(appended->end_offset(), expected_base + 2);
      EXPECT_FALSE(appended->awaits_acknowledgement);
      EXPECT_FALSE(appended->duplicate);
      EXPECT_EQ(partition->high_watermark(), appended->end_offset()) << "one node: committed once appended";
      EXPECT_TRUE(partition->wait_acknowledged(appended->end_offset(), acks, rig.deadline()).ok());
      expected_base += 2;
    }
    EXPECT_EQ(partition->log_end_offset(), 6);
  }));
}

TEST(Partition, APersistedTopicAwaitsItsSyncAtEveryAcksLevelAndHidesTheRecordsUntilThen) {
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    Rig rig(env);
    std::shared_ptr<Partition> partition = rig.create({{"durability", "persisted"}});
    for (Acks acks : {Acks::kNone, Acks::kLeader, Acks::kAll}) {
      const int64_t before = partition->log_end_offset();
      Result<Appended> appended = append(*partition, batch_of(3, rig.now_ms()), acks);
      ASSERT_TRUE(appended.ok()) << appended.status().to_string();
      ASSERT_TRUE(appended->awaits_acknowledgement) << "appended, not yet synced";
      EXPECT_EQ(partition->high_watermark(), before) << "a consumer must not see what a power loss could take back";
      EXPECT_EQ(records_read(*partition, before), 0);
      ASSERT_TRUE(partition->wait_acknowledged(appended->end_offset(), acks, rig.deadline()).ok());
      EXPECT_EQ(partition->high_watermark(), appended->end_offset());
      EXPECT_EQ(records_read(*partition, before), 3);
    }
  }));
}

TEST(Partition, AcksAllIsRefusedBelowMinInsyncReplicasBeforeAnythingIsAppended) {
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    Rig rig(env);
    std::shared_ptr<Partition> partition = rig.create({{"min.insync.replicas", "2"}});
    EXPECT_EQ(error_of_result(append(*partition, batch_of(1, rig.now_ms()), Acks::kAll)),
              ErrorCode::kNotEnoughReplicas);
    EXPECT_EQ(partition->log_end_offset(), 0);
    EXPECT_TRUE(append(*partition, batch_of(1, rig.now_ms()), Acks::kLeader).ok()) << "acks=1 is not checked";
    EXPECT_TRUE(append(*partition, batch_of(1, rig.now_ms()), Acks::kNone).ok()) << "nor is acks=0";
    EXPECT_EQ(partition->log_end_offset(), 2);
  }));
}

TEST(Partition, AnInvalidBatchIsRefusedWithItsRecordErrors) {
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    Rig rig(env);
    std::shared_ptr<Partition> partition = rig.create({{"cleanup.policy", "compact"}});
    std::vector<storage::RecordError> record_errors;
    Result<Appended> refused =
        partition->append_records(one_record(std::nullopt, "no key", rig.now_ms()), Acks::kLeader, &record_errors);
    EXPECT_EQ(error_of_result(refused), ErrorCode::kInvalidRecord) << "a compacted topic needs keys";
    EXPECT_EQ(record_errors.size(), 1u);
    EXPECT_EQ(partition->log_end_offset(), 0);
  }));
}

TEST(Partition, ReadsAndLatestOffsetsNeverPassTheHighWatermark) {
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    Rig rig(env);
    std::shared_ptr<Partition> partition = rig.create();
    const int64_t t0 = rig.now_ms();
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(append(*partition, batch_of(2, t0 + i), Acks::kAll).ok());
    // What the replication step will do: the high watermark (the commit index) trails the log end.
    rig.logs->find(kTp)->set_high_watermark(2);
    EXPECT_EQ(records_read(*partition, 0), 2) << "only the batch below the high watermark";
    EXPECT_EQ(records_read(*partition, 2), 0) << "nothing at the high watermark yet";
    Result<PartitionRead> read = partition->read({.offset = 0}, 1 << 20, true);
    ASSERT_TRUE(read.ok());
    EXPECT_EQ(read->data.high_watermark, 2);
    EXPECT_EQ(read->data.log_end_offset, 6);
    auto offset_for = [&](int64_t timestamp, ReadUpTo up_to) {
      auto found = partition->offset_for_timestamp(timestamp, up_to, kUndefinedEpoch);
      EXPECT_TRUE(found.ok()) << found.status().to_string();
      return found.ok() && found->has_value() ? (*found)->offset : -1;
    };
    EXPECT_EQ(offset_for(protocol::kLatestTimestamp, ReadUpTo::kHighWatermark), 2) << "a consumer's latest is the HW";
    EXPECT_EQ(offset_for(protocol::kLatestTimestamp, ReadUpTo::kLogEnd), 6);
    EXPECT_EQ(offset_for(t0, ReadUpTo::kHighWatermark), 0);
    EXPECT_EQ(offset_for(t0 + 1, ReadUpTo::kHighWatermark), -1) << "its first offset lies above the high watermark";
    EXPECT_EQ(offset_for(protocol::kMaxTimestamp, ReadUpTo::kHighWatermark), -1)
        << "the largest timestamp lies above the high watermark: none, as Kafka's filter answers";
    EXPECT_EQ(partition->legacy_offsets_before(protocol::kLatestTimestamp, 10, ReadUpTo::kHighWatermark).front(), 2);
    EXPECT_EQ(error_of_result(partition->delete_records(4)), ErrorCode::kOffsetOutOfRange) << "above the HW";
    Result<int64_t> to_high_watermark = partition->delete_records(-1);
    ASSERT_TRUE(to_high_watermark.ok());
    EXPECT_EQ(*to_high_watermark, 2);
    EXPECT_EQ(partition->log_start_offset(), 2);
  }));
}

TEST(Partition, WithoutMinOneBatchAFirstBatchOverTheLimitIsLeftOut) {
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    Rig rig(env);
    std::shared_ptr<Partition> partition = rig.create();
    const Bytes batch = batch_of(4, rig.now_ms());
    ASSERT_TRUE(append(*partition, batch, Acks::kLeader).ok());
    auto bytes_read = [&](size_t max_bytes, bool min_one_batch) {
      Result<PartitionRead> read = partition->read({.offset = 0}, max_bytes, min_one_batch);
      EXPECT_TRUE(read.ok());
      return read.ok() ? read->data.records.size() : 0;
    };
    EXPECT_EQ(bytes_read(1, true), batch.size()) << "KIP-74: the first batch comes whole";
    EXPECT_EQ(bytes_read(1, false), 0u);
    EXPECT_EQ(bytes_read(0, false), 0u);
    EXPECT_EQ(bytes_read(batch.size(), false), batch.size());
    EXPECT_EQ(error_of_result(partition->read({.offset = 5}, 100, true)), ErrorCode::kOffsetOutOfRange);
  }));
}

TEST(Partition, TheLeaderEpochFencesStaleAndUnknownEpochsAndFindsDivergence) {
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    Rig rig(env);
    std::shared_ptr<Partition> partition = rig.create();
    ASSERT_TRUE(append(*partition, batch_of(3, rig.now_ms()), Acks::kLeader).ok());
    EXPECT_EQ(partition->check_leader_epoch(kUndefinedEpoch), ErrorCode::kNone);
    EXPECT_EQ(partition->check_leader_epoch(0), ErrorCode::kNone);
    EXPECT_EQ(partition->check_leader_epoch(1), ErrorCode::kUnknownLeaderEpoch);
    EXPECT_EQ(error_of_result(partition->read({.offset = 0, .current_leader_epoch = 1}, 100, true)),
              ErrorCode::kUnknownLeaderEpoch);
    EXPECT_EQ(error_of_result(partition->offset_for_timestamp(protocol::kLatestTimestamp, ReadUpTo::kHighWatermark,
                                                              /*current_leader_epoch=*/3)),
              ErrorCode::kUnknownLeaderEpoch);
    Result<EpochEndOffset> end = partition->last_offset_for_leader_epoch(kUndefinedEpoch, 0);
    ASSERT_TRUE(end.ok());
    EXPECT_EQ(*end, (EpochEndOffset{0, 3})) << "the only epoch ends at the log end";
    EXPECT_EQ(*partition->last_offset_for_leader_epoch(0, 5), EpochEndOffset{}) << "a newer epoch is undefined";
    EXPECT_EQ(error_of_result(partition->last_offset_for_leader_epoch(2, 0)), ErrorCode::kUnknownLeaderEpoch);

    Result<PartitionRead> same = partition->read({.offset = 3, .last_fetched_epoch = 0}, 100, true);
    ASSERT_TRUE(same.ok());
    EXPECT_FALSE(same->diverging.has_value());
    Result<PartitionRead> ahead = partition->read({.offset = 5, .last_fetched_epoch = 0}, 100, true);
    ASSERT_TRUE(ahead.ok()) << ahead.status().to_string();
    ASSERT_TRUE(ahead->diverging.has_value()) << "the fetcher holds offsets epoch 0 never reached here";
    EXPECT_EQ(*ahead->diverging, (EpochEndOffset{0, 3}));
    EXPECT_TRUE(ahead->data.records.empty());
    EXPECT_EQ(error_of_result(partition->read({.offset = 0, .last_fetched_epoch = 4}, 100, true)),
              ErrorCode::kOffsetOutOfRange);
  }));
}

TEST(Partition, AnIdempotentRetryIsAnsweredWithItsOriginalOffsetsAndNotAppendedAgain) {
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    Rig rig(env);
    std::shared_ptr<Partition> partition = rig.create();
    const Bytes first = idempotent_batch(42, 0, 0, 3, rig.now_ms());
    Result<Appended> original = append(*partition, first, Acks::kAll);
    ASSERT_TRUE(original.ok()) << original.status().to_string();
    EXPECT_FALSE(original->duplicate);
    ASSERT_TRUE(append(*partition, idempotent_batch(42, 0, 3, 1, rig.now_ms()), Acks::kAll).ok());
    Result<Appended> retry = append(*partition, first, Acks::kAll);
    ASSERT_TRUE(retry.ok());
    EXPECT_TRUE(retry->duplicate);
    EXPECT_EQ(retry->result.base_offset, 0);
    EXPECT_EQ(retry->result.last_offset, 2);
    EXPECT_EQ(partition->log_end_offset(), 4) << "not appended again";
    EXPECT_EQ(error_of_result(append(*partition, idempotent_batch(42, 0, 9, 1, rig.now_ms()), Acks::kAll)),
              ErrorCode::kOutOfOrderSequenceNumber);
    Result<const PartitionProducers*> producers = partition->producers();
    ASSERT_TRUE(producers.ok());
    ASSERT_NE((*producers)->find(42), nullptr);
    EXPECT_EQ((*producers)->find(42)->batches.size(), 2u);
  }));
}

TEST(Partition, ARetryOfAnUnsyncedOriginalAwaitsTheOriginalsSync) {
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    Rig rig(env);
    std::shared_ptr<Partition> partition = rig.create({{"durability", "persisted"}});
    const Bytes batch = idempotent_batch(9, 0, 0, 2, rig.now_ms());
    Result<Appended> original = append(*partition, batch, Acks::kAll);
    ASSERT_TRUE(original.ok());
    ASSERT_TRUE(original->awaits_acknowledgement);
    Result<Appended> retry = append(*partition, batch, Acks::kAll);
    ASSERT_TRUE(retry.ok());
    EXPECT_TRUE(retry->duplicate);
    EXPECT_TRUE(retry->awaits_acknowledgement) << "not acknowledged before its original could be";
    ASSERT_TRUE(partition->wait_acknowledged(retry->end_offset(), Acks::kAll, rig.deadline()).ok());
    EXPECT_EQ(partition->high_watermark(), 2);
  }));
}

TEST(Partition, AppendsWakeLongPolls) {
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    Rig rig(env);
    std::shared_ptr<Partition> partition = rig.create();
    bool woken = false;
    FiberRef poll = env.scheduler.spawn("poll", [&] {
      AppendWatch watch(env.scheduler, 1);
      watch.watch(partition->appends());
      woken = watch.wait_until(env.clock.now() + std::chrono::seconds(10));
    });
    env.scheduler.sleep_for(std::chrono::milliseconds(1));
    ASSERT_TRUE(append(*partition, batch_of(1, rig.now_ms()), Acks::kLeader).ok());
    env.scheduler.join(poll);
    EXPECT_TRUE(woken);
  }));
}

// Kafka's DelayedFetch purgatory is keyed by partition: an append elsewhere leaves a long poll parked, a stopping
// broker (the manager's broker-wide signal) wakes it.
TEST(Partition, LongPollsWakeOnlyForTheirOwnPartitions) {
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    Rig rig(env);
    std::shared_ptr<Partition> watched = rig.create();
    std::shared_ptr<Partition> other = rig.create({}, TopicPartition{"other", 0});
    bool woken = false;
    Instant woken_at;
    FiberRef poll = env.scheduler.spawn("poll", [&] {
      AppendWatch watch(env.scheduler, 2);
      watch.watch(rig.partitions->broker_wide());
      watch.watch(watched->appends());
      woken = watch.wait_until(env.clock.now() + std::chrono::seconds(10));
      woken_at = env.clock.now();
    });
    env.scheduler.sleep_for(std::chrono::milliseconds(1));
    ASSERT_TRUE(append(*other, batch_of(1, rig.now_ms()), Acks::kLeader).ok());
    env.scheduler.sleep_for(std::chrono::milliseconds(5));
    EXPECT_FALSE(poll.done()) << "woken by another partition's append";
    const Instant notified = env.clock.now();
    rig.partitions->notify_appended();
    env.scheduler.join(poll);
    EXPECT_TRUE(woken);
    EXPECT_EQ(woken_at, notified);
  }));
}

TEST(Partition, DeleteRecordsFollowsTheTopicsPolicy) {
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    Rig rig(env);
    std::shared_ptr<Partition> compacted = rig.create({{"cleanup.policy", "compact"}}, {"table", 0});
    EXPECT_EQ(error_of_result(compacted->delete_records(0)), ErrorCode::kPolicyViolation);
    std::shared_ptr<Partition> partition = rig.create();
    ASSERT_TRUE(append(*partition, batch_of(4, rig.now_ms()), Acks::kLeader).ok());
    EXPECT_EQ(error_of_result(partition->delete_records(-2)), ErrorCode::kOffsetOutOfRange);
    Result<int64_t> moved = partition->delete_records(3);
    ASSERT_TRUE(moved.ok());
    EXPECT_EQ(*moved, 3);
    EXPECT_EQ(partition->log_start_offset(), 3);
    EXPECT_EQ(error_of_result(partition->read({.offset = 1}, 100, true)), ErrorCode::kOffsetOutOfRange);
  }));
}

TEST(Partition, AConfigChangeReachesTheProduceChecksAtOnce) {
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    Rig rig(env);
    std::shared_ptr<Partition> partition = rig.create();
    ASSERT_TRUE(append(*partition, batch_of(1, rig.now_ms()), Acks::kAll).ok());
    ASSERT_TRUE(rig.partitions->alter_config(kTp, topic_config_with({{"min.insync.replicas", "3"}})).ok());
    EXPECT_EQ(partition->config().min_insync_replicas, 3);
    EXPECT_EQ(rig.logs->topic_config(kTp)->min_insync_replicas, 3);
    EXPECT_EQ(error_of_result(append(*partition, batch_of(1, rig.now_ms()), Acks::kAll)),
              ErrorCode::kNotEnoughReplicas);
  }));
}

TEST(Partition, ARemovedPartitionAnswersUnknownToThoseStillHoldingIt) {
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    Rig rig(env);
    std::shared_ptr<Partition> held = rig.create();
    ASSERT_TRUE(append(*held, batch_of(2, rig.now_ms()), Acks::kLeader).ok());
    ASSERT_TRUE(rig.partitions->remove(kTp).ok());
    EXPECT_EQ(rig.partitions->find(kTp), nullptr);
    EXPECT_EQ(rig.partitions->remove(kTp).code(), Code::kNotFound);
    std::shared_ptr<Partition> recreated = rig.create();
    EXPECT_EQ(error_of_result(append(*held, batch_of(1, rig.now_ms()), Acks::kLeader)),
              ErrorCode::kUnknownTopicOrPartition);
    EXPECT_EQ(error_of_result(held->read({.offset = 0}, 100, true)), ErrorCode::kUnknownTopicOrPartition);
    EXPECT_EQ(recreated->log_end_offset(), 0) << "the old partition's holder never wrote to the new one";
  }));
}

TEST(Partition, AckBeforeAppendAnswersWithThePromisedOffsetsAndAppendsLater) {
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    MutationSet mutations;
    mutations.add(Mutation::kAckBeforeAppend);
    Rig rig(env, mutations);
    std::shared_ptr<Partition> partition = rig.create();
    Result<Appended> first = append(*partition, batch_of(2, rig.now_ms()), Acks::kAll);
    Result<Appended> second = append(*partition, batch_of(3, rig.now_ms()), Acks::kAll);
    ASSERT_TRUE(first.ok() && second.ok());
    EXPECT_EQ(first->result.base_offset, 0);
    EXPECT_EQ(second->result.base_offset, 2);
    EXPECT_FALSE(second->awaits_acknowledgement);
    EXPECT_EQ(partition->log_end_offset(), 0) << "answered before appended: the planted bug";
    env.scheduler.sleep_for(DeferredAppends::kDelay * 3);
    EXPECT_EQ(partition->log_end_offset(), 5);
  }));
}

}  // namespace
}  // namespace sluice::cluster
