// Static members (group.instance.id, KIP-345) and group.max.size on the simulated clock: a restarting instance takes
// its old place under a new member id, the old id is fenced, and a full group turns new members away.
#include <gtest/gtest.h>

#include <algorithm>

#include "tests/core/group/group_test_util.h"

namespace sluice::group::testing {
namespace {

using storage::log_testing::OneNode;

JoinRequest static_join(const std::string& instance, const std::string& member_id = "",
                        std::vector<Protocol> protocols = {{"range", subscription({"orders"})}},
                        int32_t session_ms = 10000, int32_t rebalance_ms = 30000) {
  JoinRequest r = join_request("g", member_id, std::move(protocols), session_ms, rebalance_ms);
  r.group_instance_id = instance;
  return r;
}

HeartbeatRequest static_heartbeat(const JoinResult& joined, const std::string& instance) {
  return HeartbeatRequest{"g", joined.generation_id, joined.member_id, instance};
}

SyncRequest static_sync(const JoinResult& joined, const std::string& instance,
                        std::vector<std::pair<std::string, Bytes>> assignments = {}) {
  SyncRequest r = sync_request("g", joined, std::move(assignments));
  r.group_instance_id = instance;
  return r;
}

// Static members "i-a" and "i-b" joined together and synced (a gets "A", b gets "B"): the group is Stable.
std::pair<JoinResult, JoinResult> stable_static_pair(Env env, GroupCoordinator& c, int32_t rebalance_ms = 30000) {
  std::optional<JoinResult> ra, rb;
  join_async(env, c, static_join("i-a", "", {{"range", subscription({"orders"})}}, 10000, rebalance_ms), ra);
  join_async(env, c, static_join("i-b", "", {{"range", subscription({"orders"})}}, 10000, rebalance_ms), rb);
  env.scheduler.sleep_for(2s);
  EXPECT_TRUE(ra.has_value() && rb.has_value()) << "static members join at once, without MEMBER_ID_REQUIRED";
  if (!ra.has_value() || !rb.has_value()) return {};
  EXPECT_EQ(ra->error, ErrorCode::kNone);
  EXPECT_EQ(rb->error, ErrorCode::kNone);
  EXPECT_TRUE(ra->member_id.starts_with("i-a-")) << ra->member_id;
  const std::vector<std::pair<std::string, Bytes>> plan = {{ra->member_id, bytes_of("A")},
                                                           {rb->member_id, bytes_of("B")}};
  std::optional<SyncResult> sa, sb;
  sync_async(env, c, static_sync(*ra, "i-a", plan), sa);
  sync_async(env, c, static_sync(*rb, "i-b", plan), sb);
  EXPECT_TRUE(wait_until(env, [&] { return sa.has_value() && sb.has_value(); }));
  EXPECT_EQ(c.find_group("g")->state, GroupState::kStable);
  return {*ra, *rb};
}

// group.max.size = 2.
CoordinatorConfig max_size_two() {
  CoordinatorConfig config = fast_config();
  config.max_size = 2;
  return config;
}

TEST(StaticMembership, ARestartedInstanceTakesItsPlaceUnderANewIdWithoutARebalance) {
  OneNode node;
  ASSERT_TRUE(node.run([](Env env) {
    Rig rig(env);
    GroupCoordinator& c = rig.c();
    const auto [a, b] = stable_static_pair(env, c);
    ASSERT_EQ(a.leader_id, a.member_id);
    // Instance a restarts: a JoinGroup without its member id.
    const JoinResult back = c.join(static_join("i-a"));
    ASSERT_EQ(back.error, ErrorCode::kNone);
    EXPECT_NE(back.member_id, a.member_id);
    EXPECT_TRUE(back.member_id.starts_with("i-a-")) << back.member_id;
    EXPECT_EQ(back.generation_id, a.generation_id) << "no new generation";
    EXPECT_EQ(back.leader_id, a.member_id) << "before v9 a returning leader is told the old id, so it does not assign";
    EXPECT_TRUE(back.members.empty());
    const Group* group = c.find_group("g");
    EXPECT_EQ(group->state, GroupState::kStable);
    EXPECT_EQ(group->leader, back.member_id) << "the leadership moved with the instance";
    EXPECT_EQ(group->members.size(), 2u);
    EXPECT_FALSE(group->has(a.member_id));
    EXPECT_EQ(c.heartbeat(static_heartbeat(b, "i-b")), ErrorCode::kNone) << "the other member saw no rebalance";
    EXPECT_EQ(c.heartbeat(static_heartbeat(a, "i-a")), ErrorCode::kFencedInstanceId) << "the old process is fenced";
    const SyncResult synced = c.sync(static_sync(back, "i-a"));
    ASSERT_EQ(synced.error, ErrorCode::kNone);
    EXPECT_EQ(synced.assignment, bytes_of("A")) << "the instance keeps its partitions";
    EXPECT_EQ(c.heartbeat(static_heartbeat(back, "i-a")), ErrorCode::kNone);
    // The replacement is in __consumer_offsets: a restarted coordinator knows the new id.
    const GroupDescription described = c.describe("g");
    ASSERT_EQ(described.members.size(), 2u);
    bool found = false;
    for (const MemberDescription& m : described.members) found = found || m.member_id == back.member_id;
    EXPECT_TRUE(found);
  }));
}

// JoinGroup v9 (KIP-814): the returning leader is told it leads, with the members, but to skip the assignment;
// a follower's answer is as before v9.
TEST(StaticMembership, AReturningLeaderOfV9SkipsTheAssignment) {
  OneNode node;
  ASSERT_TRUE(node.run([](Env env) {
    Rig rig(env);
    GroupCoordinator& c = rig.c();
    const auto [a, b] = stable_static_pair(env, c);
    ASSERT_EQ(a.leader_id, a.member_id);
    JoinRequest rejoin = static_join("i-a");
    rejoin.supports_skip_assignment = true;
    const JoinResult back = c.join(rejoin);
    ASSERT_EQ(back.error, ErrorCode::kNone);
    EXPECT_EQ(back.generation_id, a.generation_id) << "no new generation";
    EXPECT_EQ(back.leader_id, back.member_id) << "it knows it leads";
    EXPECT_TRUE(back.skip_assignment);
    EXPECT_EQ(back.members.size(), 2u) << "the leader's member list, for watching their metadata";
    EXPECT_EQ(c.find_group("g")->state, GroupState::kStable);
    EXPECT_EQ(c.sync(static_sync(back, "i-a")).assignment, bytes_of("A")) << "the Stable group's assignment stays";
    JoinRequest follower = static_join("i-b");
    follower.supports_skip_assignment = true;
    const JoinResult b2 = c.join(follower);
    ASSERT_EQ(b2.error, ErrorCode::kNone);
    EXPECT_FALSE(b2.skip_assignment);
    EXPECT_EQ(b2.leader_id, back.member_id);
    EXPECT_TRUE(b2.members.empty());
  }));
}

TEST(StaticMembership, TheReplacementSurvivesACoordinatorRestart) {
  OneNode node;
  std::string new_id;
  ASSERT_TRUE(node.run([&new_id](Env env) {
    Rig rig(env);
    GroupCoordinator& c = rig.c();
    stable_static_pair(env, c);
    const JoinResult back = c.join(static_join("i-a"));
    ASSERT_EQ(back.error, ErrorCode::kNone);
    new_id = back.member_id;
  }));
  ASSERT_TRUE(node.run([&new_id](Env env) {
    Rig rig(env);
    const Group* group = rig.c().find_group("g");
    ASSERT_NE(group, nullptr);
    EXPECT_TRUE(group->has(new_id)) << "the stored group names the new member id";
    EXPECT_EQ(group->static_member("i-a"), new_id);
  }));
}

TEST(StaticMembership, AFailedWriteOfTheReplacementPutsTheOldMemberBack) {
  OneNode node;
  ASSERT_TRUE(node.run([&node](Env env) {
    Rig rig(env);
    GroupCoordinator& c = rig.c();
    const auto [a, b] = stable_static_pair(env, c);
    node.disk().fail_next(DiskOp::kWrite, 1, "data/__consumer_offsets");
    rig.clean_close_expected = false;  // the failed append takes that offsets partition offline
    const JoinResult back = c.join(static_join("i-a"));
    EXPECT_EQ(back.error, ErrorCode::kCoordinatorNotAvailable);
    const Group* group = c.find_group("g");
    EXPECT_TRUE(group->has(a.member_id)) << "the old member is back under its own id";
    EXPECT_EQ(group->static_member("i-a"), a.member_id);
    EXPECT_EQ(group->leader, a.member_id);
    EXPECT_EQ(group->members.size(), 2u);
    EXPECT_EQ(c.heartbeat(static_heartbeat(a, "i-a")), ErrorCode::kNone) << "and it is not fenced";
  }));
}

TEST(StaticMembership, ARejoinThatChangesTheChosenProtocolRebalances) {
  OneNode node;
  ASSERT_TRUE(node.run([](Env env) {
    Rig rig(env);
    GroupCoordinator& c = rig.c();
    const Bytes m = subscription({"orders"});
    const JoinResult first = c.join(static_join("i-a", "", {{"range", m}, {"roundrobin", m}}));
    ASSERT_EQ(first.error, ErrorCode::kNone);
    ASSERT_EQ(c.sync(static_sync(first, "i-a", {{first.member_id, bytes_of("A")}})).error, ErrorCode::kNone);
    const JoinResult back = c.join(static_join("i-a", "", {{"roundrobin", m}, {"range", m}}));
    ASSERT_EQ(back.error, ErrorCode::kNone);
    EXPECT_EQ(back.generation_id, first.generation_id + 1) << "the vote now picks roundrobin: a new generation";
    EXPECT_EQ(back.protocol_name, "roundrobin");
    EXPECT_EQ(back.leader_id, back.member_id);
    EXPECT_EQ(back.members.size(), 1u) << "the leader assigns again";
  }));
}

TEST(StaticMembership, AJoinParkedUnderTheOldIdIsFencedWhenTheInstanceRejoins) {
  OneNode node;
  ASSERT_TRUE(node.run([](Env env) {
    Rig rig(env);
    GroupCoordinator& c = rig.c();
    const auto [a, b] = stable_static_pair(env, c);
    std::optional<JoinResult> old_a;
    join_async(env, c, static_join("i-a", a.member_id), old_a);  // a rejoins (leader: a rebalance starts)
    env.scheduler.sleep_for(10ms);
    ASSERT_EQ(c.find_group("g")->state, GroupState::kPreparingRebalance);
    EXPECT_FALSE(old_a.has_value());
    std::optional<JoinResult> new_a, b2;
    join_async(env, c, static_join("i-a"), new_a);
    env.scheduler.sleep_for(10ms);
    ASSERT_TRUE(old_a.has_value());
    EXPECT_EQ(old_a->error, ErrorCode::kFencedInstanceId);
    EXPECT_FALSE(new_a.has_value()) << "the new id waits for the rebalance";
    join_async(env, c, static_join("i-b", b.member_id), b2);
    env.scheduler.sleep_for(10ms);
    ASSERT_TRUE(new_a.has_value() && b2.has_value());
    EXPECT_EQ(new_a->error, ErrorCode::kNone);
    EXPECT_EQ(new_a->generation_id, a.generation_id + 1);
    EXPECT_EQ(new_a->leader_id, new_a->member_id);
    EXPECT_EQ(new_a->members.size(), 2u);
  }));
}

TEST(StaticMembership, AStaticMemberThatMissesARebalanceStaysUntilItsSessionExpires) {
  OneNode node;
  ASSERT_TRUE(node.run([](Env env) {
    Rig rig(env);
    GroupCoordinator& c = rig.c();
    const auto [a, b] = stable_static_pair(env, c, 3000);
    // A dynamic member arrives; only a rejoins. b's process is gone but its 10 s session has not run out.
    const std::string d = member_id_for(c, "g");
    std::optional<JoinResult> rd, ra;
    join_async(env, c, join_request("g", d, {{"range", subscription({"orders"})}}, 10000, 3000), rd);
    join_async(env, c, static_join("i-a", a.member_id, {{"range", subscription({"orders"})}}, 10000, 3000), ra);
    env.scheduler.sleep_for(3100ms);  // the rebalance timeout
    ASSERT_TRUE(rd.has_value() && ra.has_value());
    ASSERT_EQ(ra->error, ErrorCode::kNone);
    EXPECT_EQ(ra->generation_id, a.generation_id + 1);
    EXPECT_EQ(ra->members.size(), 3u) << "the absent static member is still in the generation";
    EXPECT_TRUE(c.find_group("g")->has(b.member_id));
    // It never syncs: the sync deadline removes it and the others rebalance without it.
    env.scheduler.sleep_for(3100ms);
    EXPECT_FALSE(c.find_group("g")->has(b.member_id));
  }));
}

TEST(StaticMembership, AFullGroupTurnsNewMembersAwayButNotItsOwn) {
  OneNode node;
  ASSERT_TRUE(node.run([](Env env) {
    Rig rig(env, max_size_two());
    GroupCoordinator& c = rig.c();
    const auto [a, b] = stable_static_pair(env, c);
    const JoinResult third = c.join(join_request("g", ""));
    EXPECT_EQ(third.error, ErrorCode::kGroupMaxSizeReached);
    EXPECT_EQ(third.member_id, "");
    EXPECT_EQ(c.join(static_join("i-c")).error, ErrorCode::kGroupMaxSizeReached);
    EXPECT_EQ(c.find_group("g")->members.size(), 2u);
    EXPECT_EQ(c.find_group("g")->state, GroupState::kStable) << "a refused join changes nothing";
    // Members of the group still rejoin, and a restarted instance still takes its own place.
    const JoinResult back = c.join(static_join("i-b"));
    EXPECT_EQ(back.error, ErrorCode::kNone);
    std::optional<JoinResult> ra, rb;
    join_async(env, c, static_join("i-a", a.member_id), ra);
    join_async(env, c, static_join("i-b", back.member_id), rb);
    env.scheduler.sleep_for(10ms);
    ASSERT_TRUE(ra.has_value() && rb.has_value());
    EXPECT_EQ(ra->error, ErrorCode::kNone);
    EXPECT_EQ(rb->error, ErrorCode::kNone);
    EXPECT_EQ(ra->generation_id, a.generation_id + 1);
  }));
}

TEST(StaticMembership, APendingMemberTurnedAwayByAFullGroupDoesNotHoldTheRebalance) {
  OneNode node;
  ASSERT_TRUE(node.run([](Env env) {
    Rig rig(env, max_size_two());
    GroupCoordinator& c = rig.c();
    const std::string a = member_id_for(c, "g");
    const JoinResult a1 = c.join(join_request("g", a));
    ASSERT_EQ(a1.error, ErrorCode::kNone);
    ASSERT_EQ(c.sync(sync_request("g", a1, {{a, bytes_of("A")}})).error, ErrorCode::kNone);
    const std::string b = member_id_for(c, "g");  // both handed ids while the group had room
    const std::string d = member_id_for(c, "g");
    std::optional<JoinResult> rd, ra;
    join_async(env, c, join_request("g", d), rd);  // the group is full now
    join_async(env, c, join_request("g", a), ra);
    env.scheduler.sleep_for(10ms);
    EXPECT_FALSE(ra.has_value()) << "b's pending id still counts as a member to wait for";
    const Instant turned_away = env.clock.now();
    EXPECT_EQ(c.join(join_request("g", b)).error, ErrorCode::kGroupMaxSizeReached);
    env.scheduler.sleep_for(10ms);
    ASSERT_TRUE(ra.has_value() && rd.has_value()) << "the rebalance completes once b is gone";
    EXPECT_LT(env.clock.now() - turned_away, 1s);
    EXPECT_EQ(ra->generation_id, a1.generation_id + 1);
    EXPECT_EQ(ra->members.size(), 2u);
  }));
}

TEST(StaticMembership, AGroupOverALoweredMaxSizeRebalancesOnLoadAndTurnsAwayTheLastToRejoin) {
  OneNode node;
  std::vector<std::string> ids;
  ASSERT_TRUE(node.run([&ids](Env env) {
    Rig rig(env);
    GroupCoordinator& c = rig.c();
    std::vector<std::optional<JoinResult>> joined(3);
    for (int i = 0; i < 3; ++i) ids.push_back(member_id_for(c, "g"));
    for (int i = 0; i < 3; ++i) join_async(env, c, join_request("g", ids[i]), joined[i]);
    env.scheduler.sleep_for(2s);
    for (const auto& j : joined) ASSERT_TRUE(j.has_value() && j->error == ErrorCode::kNone);
    std::vector<std::optional<SyncResult>> synced(3);
    for (int i = 0; i < 3; ++i) sync_async(env, c, sync_request("g", *joined[i]), synced[i]);
    ASSERT_TRUE(wait_until(env, [&] {
      return std::all_of(synced.begin(), synced.end(), [](const auto& s) { return s.has_value(); });
    }));
    ASSERT_EQ(c.find_group("g")->state, GroupState::kStable);
  }));
  ASSERT_TRUE(node.run([&ids](Env env) {
    Rig rig(env, max_size_two());
    GroupCoordinator& c = rig.c();
    ASSERT_EQ(c.find_group("g")->state, GroupState::kPreparingRebalance) << "3 members over a limit of 2";
    std::optional<JoinResult> first, second;
    join_async(env, c, join_request("g", ids[0]), first);
    join_async(env, c, join_request("g", ids[1]), second);
    env.scheduler.sleep_for(10ms);
    const JoinResult last = c.join(join_request("g", ids[2]));
    EXPECT_EQ(last.error, ErrorCode::kGroupMaxSizeReached);
    env.scheduler.sleep_for(10ms);
    ASSERT_TRUE(first.has_value() && second.has_value());
    EXPECT_EQ(first->error, ErrorCode::kNone);
    EXPECT_EQ(second->error, ErrorCode::kNone);
    EXPECT_EQ(c.find_group("g")->members.size(), 2u);
    EXPECT_FALSE(c.find_group("g")->has(ids[2]));
  }));
}

}  // namespace
}  // namespace sluice::group::testing
