// The classic group member against the simulated coordinator: two members join one generation with disjoint
// assignments covering every partition, stay in it by heartbeating past the session timeout, commit and read back
// their offsets, and the one that stays takes every partition after the other leaves.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <set>

#include "core/client/client.h"
#include "tests/core/client/client_test_util.h"

namespace sluice::client {
namespace {

using namespace testing;

GroupConfig group_config() {
  GroupConfig config;
  config.group_id = "readers";
  config.topics = {"orders", "users"};
  config.session_timeout = 6s;
  config.rebalance_timeout = 10s;
  config.heartbeat_interval = 500ms;
  return config;
}

std::vector<TopicPartitionId> every_partition() {
  std::vector<TopicPartitionId> all;
  for (int32_t p = 0; p < 4; ++p) all.push_back({"orders", p});
  for (int32_t p = 0; p < 3; ++p) all.push_back({"users", p});
  return all;
}

void create_topics(Client& client) {
  ASSERT_TRUE(client.create_topic({"orders", 4, 1, {}}).ok());
  ASSERT_TRUE(client.create_topic({"users", 3, 1, {}}).ok());
}

// Joins every member that has no generation or must rejoin, concurrently (a rebalance waits for all of them),
// until they hold one generation.
void settle(Env env, const std::vector<GroupMember*>& members) {
  for (int round = 0; round < 10; ++round) {
    std::vector<FiberRef> joins;
    for (GroupMember* member : members) {
      if (member->generation() >= 0 && !member->needs_rejoin()) continue;
      joins.push_back(env.scheduler.spawn("join", [env, member] {
        const Status joined = member->join(env.clock.now() + 60s);
        EXPECT_TRUE(joined.ok()) << joined.to_string();
      }));
    }
    for (const FiberRef& join : joins) env.scheduler.join(join);
    env.scheduler.sleep_for(2s);  // heartbeats learn of a rebalance another join started
    std::set<int32_t> generations;
    bool rejoin = false;
    for (GroupMember* member : members) {
      generations.insert(member->generation());
      rejoin = rejoin || member->needs_rejoin();
    }
    if (generations.size() == 1 && !rejoin) return;
  }
  ADD_FAILURE() << "the members did not settle into one generation";
}

TEST(ClientGroup, TwoMembersShareThePartitionsHeartbeatCommitAndRebalanceWhenOneLeaves) {
  ClientHarness harness;
  ASSERT_TRUE(harness.run([&](Env env) {
    Client first_client(env, harness.client_config());
    Client second_client(env, harness.client_config());
    create_topics(first_client);
    GroupMember a(first_client, group_config());
    GroupMember b(second_client, group_config());
    settle(env, {&a, &b});
    EXPECT_NE(a.member_id(), b.member_id());
    EXPECT_FALSE(a.member_id().empty());
    EXPECT_GE(a.generation(), 1);

    std::vector<TopicPartitionId> both = a.assignment();
    both.insert(both.end(), b.assignment().begin(), b.assignment().end());
    std::sort(both.begin(), both.end());
    EXPECT_EQ(both, every_partition()) << "disjoint and complete";
    EXPECT_EQ(a.assignment().size() + b.assignment().size(), 7u);
    EXPECT_GE(a.assignment().size(), 3u);
    EXPECT_GE(b.assignment().size(), 3u);

    const int32_t generation = a.generation();
    env.scheduler.sleep_for(20s);  // well past the session timeout: only heartbeats keep them in
    EXPECT_EQ(a.generation(), generation);
    EXPECT_FALSE(a.needs_rejoin());
    EXPECT_FALSE(b.needs_rejoin());

    std::map<TopicPartitionId, int64_t> a_offsets, b_offsets;
    for (const TopicPartitionId& tp : a.assignment()) a_offsets[tp] = 10 + tp.partition;
    for (const TopicPartitionId& tp : b.assignment()) b_offsets[tp] = 100 + tp.partition;
    ASSERT_TRUE(a.commit(a_offsets).ok());
    ASSERT_TRUE(b.commit(b_offsets).ok());
    Result<std::map<TopicPartitionId, int64_t>> committed = a.committed(every_partition());
    ASSERT_TRUE(committed.ok()) << committed.status().to_string();
    for (const auto& [tp, offset] : a_offsets) EXPECT_EQ(committed->at(tp), offset) << tp.to_string();
    for (const auto& [tp, offset] : b_offsets) EXPECT_EQ(committed->at(tp), offset) << tp.to_string();

    ASSERT_TRUE(b.leave().ok());
    EXPECT_EQ(b.generation(), -1);
    const Instant until = env.clock.now() + 5s;
    while (!a.needs_rejoin() && env.clock.now() < until) env.scheduler.sleep_for(100ms);
    EXPECT_TRUE(a.needs_rejoin()) << "a heartbeat learnt of the rebalance";
    ASSERT_TRUE(a.join(env.clock.now() + 30s).ok());
    EXPECT_GT(a.generation(), generation);
    EXPECT_EQ(a.assignment(), every_partition()) << "the one left takes everything";
    EXPECT_FALSE(a.needs_rejoin());
    ASSERT_TRUE(a.leave().ok());
  }));
}

TEST(ClientGroup, CommittedOffsetsAreMinusOneUntilCommittedAndReadableWithoutJoining) {
  ClientHarness harness;
  ASSERT_TRUE(harness.run([&](Env env) {
    Client client(env, harness.client_config());
    create_topics(client);
    GroupMember outsider(client, group_config());
    Result<std::map<TopicPartitionId, int64_t>> none = outsider.committed({{"orders", 0}, {"users", 2}});
    ASSERT_TRUE(none.ok()) << none.status().to_string();
    EXPECT_EQ(none->at({"orders", 0}), -1);
    EXPECT_EQ(none->at({"users", 2}), -1);

    GroupMember member(client, group_config());
    ASSERT_TRUE(member.join(env.clock.now() + 30s).ok());
    EXPECT_EQ(member.assignment(), every_partition());
    ASSERT_TRUE(member.commit({{{"orders", 0}, 5}}).ok());
    Result<std::map<TopicPartitionId, int64_t>> one = outsider.committed({{"orders", 0}, {"users", 2}});
    ASSERT_TRUE(one.ok()) << one.status().to_string();
    EXPECT_EQ(one->at({"orders", 0}), 5);
    EXPECT_EQ(one->at({"users", 2}), -1);
    Result<std::map<TopicPartitionId, int64_t>> all = outsider.committed({});
    ASSERT_TRUE(all.ok()) << all.status().to_string();
    EXPECT_EQ(all->size(), 1u) << "every partition the group committed";
  }));
}

TEST(ClientGroup, AMemberCutOffPastItsSessionMustRejoinAndCanRejoin) {
  ClientHarness harness;
  ASSERT_TRUE(harness.run([&](Env env) {
    Client client(env, harness.client_config());
    create_topics(client);
    GroupMember member(client, group_config());
    ASSERT_TRUE(member.join(env.clock.now() + 30s).ok());
    const int32_t generation = member.generation();
    harness.network().partition(harness.broker_node(), harness.client_node());
    env.scheduler.sleep_for(10s);  // the coordinator expires the member's session
    harness.network().heal();
    const Instant until = env.clock.now() + 10s;
    while (!member.needs_rejoin() && env.clock.now() < until) env.scheduler.sleep_for(100ms);
    ASSERT_TRUE(member.needs_rejoin());
    const Status stale = member.commit({{{"orders", 0}, 1}});
    EXPECT_FALSE(stale.ok()) << "a commit with the lost generation is refused";
    ASSERT_TRUE(member.join(env.clock.now() + 30s).ok());
    EXPECT_GT(member.generation(), generation);
    EXPECT_TRUE(member.commit({{{"orders", 0}, 1}}).ok());
  }));
}

}  // namespace
}  // namespace sluice::client
