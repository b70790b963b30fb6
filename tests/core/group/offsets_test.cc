// Committed offsets, the administrative APIs, the records in __consumer_offsets, the replay after a restart and
// offset expiry.
#include <gtest/gtest.h>

#include "core/group/records.h"
#include "core/storage/record_batch.h"
#include "tests/core/group/group_test_util.h"

namespace sluice::group::testing {
namespace {

using storage::log_testing::OneNode;

CommitRequest standalone(const std::string& group, std::vector<OffsetToCommit> offsets) {
  CommitRequest r;
  r.group_id = group;
  r.offsets = std::move(offsets);
  return r;
}

// A one-member group made Stable, subscribed to `topics`.
JoinResult stable_member(GroupCoordinator& c, const std::string& group, const std::vector<std::string>& topics) {
  const std::string id = member_id_for(c, group);
  JoinResult joined = c.join(join_request(group, id, {{"range", subscription(topics)}}));
  EXPECT_EQ(joined.error, ErrorCode::kNone);
  EXPECT_EQ(c.sync(sync_request(group, joined, {{id, bytes_of("all")}})).error, ErrorCode::kNone);
  return joined;
}

// Every record of the group's offsets partition, in order: (key, value) decoded.
std::vector<CoordinatorRecord> records_of(storage::LogManager& logs, int32_t partitions, const std::string& group) {
  std::vector<CoordinatorRecord> out;
  storage::PartitionLog* log = logs.find({std::string(kOffsetsTopic), partition_for_group(group, partitions)});
  if (log == nullptr) return out;
  for (const auto& seen : storage::log_testing::read_all(*log)) {
    if (!seen.key.has_value()) continue;
    std::optional<Bytes> value;
    if (seen.value.has_value()) value = bytes_of(*seen.value);
    const Bytes key = bytes_of(*seen.key);
    std::optional<ByteView> value_view;
    if (value.has_value()) value_view = ByteView(*value);
    auto decoded = decode_record(key, value_view);
    EXPECT_TRUE(decoded.ok()) << decoded.status().to_string();
    if (decoded.ok() && decoded->has_value()) out.push_back(**decoded);
  }
  return out;
}

TEST(GroupRecords, KeysAndValuesHaveKafkasLayout) {
  auto key = encode_record(OffsetRecord{"g", "t", 5, OffsetRecord::Value{42, 3, "m", 1000, std::nullopt}});
  ASSERT_TRUE(key.ok());
  EXPECT_EQ(key->key, (Bytes{0, 1, 0, 1, 'g', 0, 1, 't', 0, 0, 0, 5})) << "OffsetCommitKey v1";
  EXPECT_EQ(key->value, (Bytes{0, 3, 0, 0, 0, 0, 0, 0, 0, 42, 0, 0, 0, 3, 0, 1, 'm', 0, 0, 0, 0, 0, 0, 3, 0xe8}))
      << "OffsetCommitValue v3: offset, leader epoch, metadata, commit timestamp";
  auto v1 = encode_record(OffsetRecord{"g", "t", 5, OffsetRecord::Value{42, 3, "", 1000, 2000}});
  ASSERT_TRUE(v1.ok());
  EXPECT_EQ(v1->value, (Bytes{0, 1, 0, 0, 0, 0, 0, 0, 0, 42, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0xe8, 0, 0, 0, 0, 0, 0, 7,
                              0xd0}))
      << "v1 when an expire timestamp exists: no leader epoch";
  auto tombstone = encode_record(GroupRecord{"g", std::nullopt});
  ASSERT_TRUE(tombstone.ok());
  EXPECT_EQ(tombstone->key, (Bytes{0, 2, 0, 1, 'g'})) << "GroupMetadataKey v2";
  EXPECT_FALSE(tombstone->value.has_value());
  GroupRecord::Value value{"consumer", 7, "range", "m1", 99, {}};
  value.members.push_back(GroupMemberRecord{"m1", std::nullopt, "c", "/h", 300, 10, bytes_of("s"), bytes_of("a")});
  auto group = encode_record(GroupRecord{"g", value});
  ASSERT_TRUE(group.ok());
  EXPECT_EQ(group->value->at(1), 3) << "GroupMetadataValue v3";
  auto decoded = decode_record(group->key, ByteView(*group->value));
  ASSERT_TRUE(decoded.ok() && decoded->has_value());
  const auto& back = std::get<GroupRecord>(**decoded);
  ASSERT_TRUE(back.value.has_value());
  EXPECT_EQ(back.value->generation, 7);
  EXPECT_EQ(back.value->leader, "m1");
  ASSERT_EQ(back.value->members.size(), 1u);
  EXPECT_EQ(back.value->members[0].assignment, bytes_of("a"));
  EXPECT_EQ(back.value->members[0].rebalance_timeout_ms, 300);
}

TEST(GroupRecords, PartitionForGroupIsKafkas) {
  EXPECT_EQ(java_string_hash(""), 0);
  EXPECT_EQ(java_string_hash("hello"), 99162322);
  EXPECT_EQ(java_string_hash("my-group"), -1906497762);
  EXPECT_EQ(java_string_hash("groupé"), -1237460406) << "UTF-16 code units";
  EXPECT_EQ(java_string_hash("g😀"), 1871882) << "a surrogate pair";
  EXPECT_EQ(partition_for_group("my-group", 50), 12) << "Utils.abs, not a mask";
  EXPECT_EQ(partition_for_group("console-consumer-12345", 50), 6);
  EXPECT_EQ(partition_for_group("polygenelubricants", 50), 0) << "hash INT32_MIN counts as 0";
}

TEST(GroupOffsets, StandaloneCommitsFetchesAndTheirErrors) {
  OneNode node;
  ASSERT_TRUE(node.run([](Env env) {
    Rig rig(env);
    GroupCoordinator& c = rig.c();
    const std::vector<ErrorCode> errors = c.commit(standalone(
        "g", {offset("orders", 0, 10), offset("orders", 9, 1), offset("nope", 0, 1),
              offset("orders", 1, 20, std::string(4097, 'x')), offset("orders", 2, 30, std::nullopt)}));
    EXPECT_EQ(errors, (std::vector<ErrorCode>{ErrorCode::kNone, ErrorCode::kUnknownTopicOrPartition,
                                              ErrorCode::kUnknownTopicOrPartition, ErrorCode::kOffsetMetadataTooLarge,
                                              ErrorCode::kNone}));
    const FetchResult some = c.fetch("g", std::vector<storage::TopicPartition>{{"orders", 0}, {"orders", 3}});
    ASSERT_EQ(some.partitions.size(), 2u);
    EXPECT_EQ(some.partitions[0].offset, 10);
    EXPECT_EQ(some.partitions[0].metadata, "m");
    EXPECT_EQ(some.partitions[1].offset, -1) << "no commit: -1";
    EXPECT_EQ(some.partitions[1].leader_epoch, -1);
    const FetchResult all = c.fetch("g", std::nullopt);
    ASSERT_EQ(all.partitions.size(), 2u) << "null topics: every committed partition";
    EXPECT_EQ(all.partitions[1].offset, 30);
    EXPECT_EQ(all.partitions[1].metadata, "");
    EXPECT_TRUE(c.fetch("unknown", std::nullopt).partitions.empty());
    CommitRequest generation = standalone("absent", {offset("orders", 0, 1)});
    generation.generation_id = 4;
    EXPECT_EQ(c.commit(generation), std::vector<ErrorCode>{ErrorCode::kIllegalGeneration});
    EXPECT_EQ(c.find_group("g")->state, GroupState::kEmpty);
    EXPECT_EQ(c.find_group("g")->protocol_type, std::nullopt) << "a group that only stores offsets";
  }));
}

TEST(GroupOffsets, MemberCommitsAreCheckedAgainstTheGeneration) {
  OneNode node;
  ASSERT_TRUE(node.run([](Env env) {
    Rig rig(env);
    GroupCoordinator& c = rig.c();
    const JoinResult m = stable_member(c, "g", {"orders"});
    CommitRequest good = standalone("g", {offset("orders", 0, 5)});
    good.generation_id = m.generation_id;
    good.member_id = m.member_id;
    EXPECT_EQ(c.commit(good), std::vector<ErrorCode>{ErrorCode::kNone});
    CommitRequest stale = good;
    stale.generation_id = m.generation_id - 1;
    EXPECT_EQ(c.commit(stale), std::vector<ErrorCode>{ErrorCode::kIllegalGeneration});
    CommitRequest stranger = good;
    stranger.member_id = "ghost";
    EXPECT_EQ(c.commit(stranger), std::vector<ErrorCode>{ErrorCode::kUnknownMemberId});
    EXPECT_EQ(c.commit(standalone("g", {offset("orders", 0, 6)})), std::vector<ErrorCode>{ErrorCode::kUnknownMemberId})
        << "a non-empty group takes commits from members only";
    // A second member joins and everyone rejoins: CompletingRebalance refuses commits with 27.
    std::optional<JoinResult> other;
    join_async(env, c, join_request("g", member_id_for(c, "g")), other);
    env.scheduler.sleep_for(1ms);
    CommitRequest preparing = good;
    EXPECT_EQ(c.commit(preparing), std::vector<ErrorCode>{ErrorCode::kNone}) << "PreparingRebalance still commits";
    const JoinResult again = c.join(join_request("g", m.member_id, {{"range", subscription({"orders"})}}));
    ASSERT_EQ(again.error, ErrorCode::kNone);
    CommitRequest completing = good;
    completing.generation_id = again.generation_id;
    EXPECT_EQ(c.commit(completing), std::vector<ErrorCode>{ErrorCode::kRebalanceInProgress});
    EXPECT_EQ(c.fetch("g", std::nullopt).partitions.at(0).offset, 5);
    // The second member's join was answered with the rebalance; its fiber writes `other`, which must outlive it.
    while (!other.has_value()) env.scheduler.sleep_for(1ms);
    EXPECT_EQ(other->error, ErrorCode::kNone);
    EXPECT_EQ(other->generation_id, again.generation_id);
  }));
}

TEST(GroupAdmin, DeleteGroupsOffsetDeleteListAndDescribe) {
  OneNode node;
  ASSERT_TRUE(node.run([](Env env) {
    Rig rig(env);
    GroupCoordinator& c = rig.c();
    const JoinResult m = stable_member(c, "busy", {"orders"});
    CommitRequest commit = standalone("busy", {offset("orders", 0, 5), offset("audit", 1, 7)});
    commit.generation_id = m.generation_id;
    commit.member_id = m.member_id;
    ASSERT_EQ(c.commit(commit), (std::vector<ErrorCode>{ErrorCode::kNone, ErrorCode::kNone}));
    ASSERT_EQ(c.commit(standalone("idle", {offset("orders", 1, 9)})), std::vector<ErrorCode>{ErrorCode::kNone});

    const OffsetDeleteResult subscribed = c.delete_offsets("busy", {{"orders", 0}, {"audit", 1}, {"nope", 0}});
    EXPECT_EQ(subscribed.error, ErrorCode::kNone);
    EXPECT_EQ(subscribed.partitions, (std::vector<ErrorCode>{ErrorCode::kGroupSubscribedToTopic, ErrorCode::kNone,
                                                             ErrorCode::kUnknownTopicOrPartition}));
    EXPECT_EQ(c.fetch("busy", std::nullopt).partitions.size(), 1u);
    EXPECT_EQ(c.delete_offsets("ghost", {{"orders", 0}}).error, ErrorCode::kGroupIdNotFound);

    const ListResult stable = c.list({"stable"});
    ASSERT_EQ(stable.groups.size(), 1u) << "states match case-insensitively";
    EXPECT_EQ(stable.groups[0].group_id, "busy");
    EXPECT_EQ(stable.groups[0].protocol_type, "consumer");
    EXPECT_EQ(c.list({}).groups.size(), 2u);

    const GroupDescription busy = c.describe("busy");
    EXPECT_EQ(busy.state, "Stable");
    EXPECT_EQ(busy.protocol, "range");
    ASSERT_EQ(busy.members.size(), 1u);
    EXPECT_EQ(busy.members[0].assignment, bytes_of("all"));
    EXPECT_EQ(busy.members[0].metadata, subscription({"orders"}));
    EXPECT_EQ(busy.members[0].client_host, "/10.0.0.1");
    EXPECT_EQ(c.describe("ghost").state, "Dead");

    EXPECT_EQ(c.delete_groups({"busy", "ghost", "idle"}),
              (std::vector<ErrorCode>{ErrorCode::kNonEmptyGroup, ErrorCode::kGroupIdNotFound, ErrorCode::kNone}));
    EXPECT_EQ(c.find_group("idle"), nullptr);
    EXPECT_EQ(c.fetch("idle", std::vector<storage::TopicPartition>{{"orders", 1}}).partitions[0].offset, -1);
    const auto records = records_of(*rig.logs, 4, "idle");
    ASSERT_GE(records.size(), 3u);
    const auto* last = std::get_if<GroupRecord>(&records.back());
    ASSERT_NE(last, nullptr);
    EXPECT_FALSE(last->value.has_value()) << "a group tombstone";
    const auto* offset_tombstone = std::get_if<OffsetRecord>(&records[records.size() - 2]);
    ASSERT_NE(offset_tombstone, nullptr);
    EXPECT_FALSE(offset_tombstone->value.has_value());
    EXPECT_EQ(c.delete_groups({""}), std::vector<ErrorCode>{ErrorCode::kGroupIdNotFound}) << "\"\" is a valid id here";
  }));
}

TEST(GroupOffsets, APersistedTopicsCommitIsSyncedBeforeItIsAnswered) {
  OneNode node;
  ASSERT_TRUE(node.run([](Env env) {
    Rig rig(env);
    GroupCoordinator& c = rig.c();
    rig.topics->add("ledger", 1, /*persisted=*/true);
    ASSERT_EQ(c.commit(standalone("g", {offset("orders", 0, 1)})), std::vector<ErrorCode>{ErrorCode::kNone});
    storage::PartitionLog* log = rig.logs->find({std::string(kOffsetsTopic), partition_for_group("g", 4)});
    ASSERT_NE(log, nullptr);
    const uint64_t before = log->stats().sync_rounds;
    EXPECT_EQ(log->recovery_point(), 0) << "a replicated commit is not synced";
    ASSERT_EQ(c.commit(standalone("g", {offset("ledger", 0, 1)})), std::vector<ErrorCode>{ErrorCode::kNone});
    EXPECT_GT(log->stats().sync_rounds, before);
    EXPECT_EQ(log->recovery_point(), log->log_end_offset()) << "synced through the commit";
  }));
}

TEST(GroupOffsets, ARestartReplaysEveryGroupFromTheOffsetsTopic) {
  OneNode node;
  constexpr int kGroups = 40;
  std::string member;
  int32_t generation = 0;
  ASSERT_TRUE(node.run([&](Env env) {
    Rig rig(env);
    GroupCoordinator& c = rig.c();
    for (int i = 0; i < kGroups; ++i) {
      const std::string group = "group-" + std::to_string(i);
      ASSERT_EQ(c.commit(standalone(group, {offset("orders", i % 4, 100 + i), offset("audit", 0, i)})),
                (std::vector<ErrorCode>{ErrorCode::kNone, ErrorCode::kNone}));
    }
    ASSERT_EQ(c.commit(standalone("group-3", {offset("orders", 3, 999)})), std::vector<ErrorCode>{ErrorCode::kNone});
    ASSERT_EQ(c.delete_groups({"group-7"}), std::vector<ErrorCode>{ErrorCode::kNone});
    const JoinResult m = stable_member(c, "live", {"orders"});
    member = m.member_id;
    generation = m.generation_id;
  }));
  ASSERT_TRUE(node.run([&](Env env) {
    auto opened = storage::LogManager::open(env, "data", storage::BrokerStorageConfig{});
    ASSERT_TRUE(opened.ok());
    FakeTopics topics(**opened);
    topics.add("orders", 4);
    topics.add("audit", 2);
    GroupCoordinator c(env, **opened, topics, fast_config());
    c.start();
    EXPECT_TRUE(c.loading());
    EXPECT_EQ(c.join(join_request("g", "")).error, ErrorCode::kCoordinatorLoadInProgress);
    EXPECT_EQ(c.fetch("group-1", std::nullopt).error, ErrorCode::kCoordinatorLoadInProgress);
    EXPECT_EQ(c.list({}).error, ErrorCode::kCoordinatorLoadInProgress);
    c.wait_loaded();
    EXPECT_EQ(c.group_count(), static_cast<size_t>(kGroups));  // 40 - group-7 + live
    for (int i = 0; i < kGroups; ++i) {
      const FetchResult fetched = c.fetch("group-" + std::to_string(i), std::nullopt);
      EXPECT_EQ(fetched.partitions.size(), i == 7 ? 0u : 2u) << i;
    }
    const FetchResult three = c.fetch("group-3", std::vector<storage::TopicPartition>{{"orders", 3}});
    EXPECT_EQ(three.partitions[0].offset, 999) << "the latest commit wins";
    const Group* live = c.find_group("live");
    ASSERT_NE(live, nullptr);
    EXPECT_EQ(live->state, GroupState::kStable);
    EXPECT_EQ(live->generation, generation);
    EXPECT_EQ(c.heartbeat({"live", generation, member, std::nullopt}), ErrorCode::kNone) << "members carry on";
    EXPECT_EQ(c.describe("live").members.at(0).assignment, bytes_of("all"));
    env.scheduler.sleep_for(11s);  // no heartbeat: the loaded member expires like any other
    EXPECT_EQ(c.heartbeat({"live", generation, member, std::nullopt}), ErrorCode::kUnknownMemberId);
    c.stop();
    EXPECT_TRUE((*opened)->close().ok());
  }));
}

TEST(GroupOffsets, EmptyGroupsOffsetsExpireIntoTombstones) {
  OneNode node;
  ASSERT_TRUE(node.run([](Env env) {
    CoordinatorConfig config = fast_config();
    config.offsets_retention_ms = 60000;
    config.offsets_retention_check_interval_ms = 5000;
    Rig rig(env, config);
    GroupCoordinator& c = rig.c();
    ASSERT_EQ(c.commit(standalone("old", {offset("orders", 0, 1)})), std::vector<ErrorCode>{ErrorCode::kNone});
    const JoinResult m = stable_member(c, "busy", {"orders"});
    CommitRequest commit = standalone("busy", {offset("orders", 1, 2)});
    commit.generation_id = m.generation_id;
    commit.member_id = m.member_id;
    ASSERT_EQ(c.commit(commit), std::vector<ErrorCode>{ErrorCode::kNone});
    for (int i = 0; i < 14; ++i) {  // 70 s, the member heartbeating
      env.scheduler.sleep_for(5s);
      ASSERT_EQ(c.heartbeat(heartbeat_request("busy", m)), ErrorCode::kNone);
    }
    EXPECT_EQ(c.find_group("old"), nullptr) << "expired, and the empty group with it";
    EXPECT_EQ(c.fetch("old", std::vector<storage::TopicPartition>{{"orders", 0}}).partitions[0].offset, -1);
    EXPECT_EQ(c.fetch("busy", std::nullopt).partitions.size(), 1u) << "a subscribed topic of a Stable group stays";
    const auto records = records_of(*rig.logs, 4, "old");
    ASSERT_FALSE(records.empty());
    const auto* last = std::get_if<GroupRecord>(&records.back());
    ASSERT_NE(last, nullptr);
    EXPECT_FALSE(last->value.has_value());
  }));
}

}  // namespace
}  // namespace sluice::group::testing
