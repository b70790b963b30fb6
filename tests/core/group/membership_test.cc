// The classic group state machine on the simulated clock: joins, syncs, heartbeats, leaves, session and rebalance
// timeouts, and every membership error code.
#include <gtest/gtest.h>

#include "tests/core/group/group_test_util.h"

namespace sluice::group::testing {
namespace {

using storage::log_testing::OneNode;

// One member from scratch to Stable: MEMBER_ID_REQUIRED, the join, the sync. Returns the join answer.
JoinResult stable_single(Env env, GroupCoordinator& c, const std::string& group, Bytes assignment) {
  const std::string id = member_id_for(c, group);
  JoinResult joined = c.join(join_request(group, id));
  EXPECT_EQ(joined.error, ErrorCode::kNone);
  const SyncResult synced = c.sync(sync_request(group, joined, {{id, std::move(assignment)}}));
  EXPECT_EQ(synced.error, ErrorCode::kNone);
  return joined;
}

// Two members joined together and synced (Stable): a's and b's join answers, in that order.
std::pair<JoinResult, JoinResult> stable_pair(Env env, GroupCoordinator& c, int32_t session_a, int32_t session_b,
                                              int32_t rebalance_ms, Bytes for_a = {}, Bytes for_b = {}) {
  const std::string a = member_id_for(c, "g");
  const std::string b = member_id_for(c, "g");
  std::optional<JoinResult> ra, rb;
  join_async(env, c, join_request("g", a, {{"range", {}}}, session_a, rebalance_ms), ra);
  join_async(env, c, join_request("g", b, {{"range", {}}}, session_b, rebalance_ms), rb);
  env.scheduler.sleep_for(2s);  // the initial delay, extended once as the second member arrived
  EXPECT_TRUE(ra.has_value() && rb.has_value());
  if (!ra.has_value() || !rb.has_value()) return {};
  std::optional<SyncResult> sa, sb;
  sync_async(env, c, sync_request("g", *ra, {{a, for_a}, {b, for_b}}), sa);
  sync_async(env, c, sync_request("g", *rb, {{a, for_a}, {b, for_b}}), sb);
  EXPECT_TRUE(wait_until(env, [&] { return sa.has_value() && sb.has_value(); }));
  EXPECT_EQ(c.find_group("g")->state, GroupState::kStable);
  return {*ra, *rb};
}

TEST(GroupMembership, OneMemberJoinsAfterTheInitialDelaySyncsAndHeartbeats) {
  OneNode node;
  ASSERT_TRUE(node.run([](Env env) {
    CoordinatorConfig config = fast_config();
    config.initial_rebalance_delay_ms = 3000;
    Rig rig(env, config);
    GroupCoordinator& c = rig.c();
    const JoinResult first = c.join(join_request("g", ""));
    ASSERT_EQ(first.error, ErrorCode::kMemberIdRequired);
    EXPECT_TRUE(first.member_id.starts_with("client-")) << first.member_id;
    EXPECT_EQ(c.find_group("g")->state, GroupState::kEmpty);
    const Instant start = env.clock.now();
    const JoinResult joined = c.join(join_request("g", first.member_id));
    EXPECT_GE(env.clock.now() - start, 3s) << "the first rebalance of an empty group waits the initial delay";
    ASSERT_EQ(joined.error, ErrorCode::kNone);
    EXPECT_EQ(joined.generation_id, 1);
    EXPECT_EQ(joined.leader_id, first.member_id);
    EXPECT_EQ(joined.protocol_name, "range");
    EXPECT_EQ(joined.protocol_type, "consumer");
    ASSERT_EQ(joined.members.size(), 1u) << "the leader gets the member list";
    EXPECT_EQ(joined.members[0].metadata, subscription({"orders"}));
    EXPECT_EQ(c.find_group("g")->state, GroupState::kCompletingRebalance);
    EXPECT_EQ(c.heartbeat(heartbeat_request("g", joined)), ErrorCode::kNone) << "alive while completing";
    const SyncResult synced = c.sync(sync_request("g", joined, {{first.member_id, bytes_of("p0-3")}}));
    ASSERT_EQ(synced.error, ErrorCode::kNone);
    EXPECT_EQ(synced.assignment, bytes_of("p0-3"));
    EXPECT_EQ(c.find_group("g")->state, GroupState::kStable);
    EXPECT_EQ(c.heartbeat(heartbeat_request("g", joined)), ErrorCode::kNone);
    EXPECT_EQ(c.sync(sync_request("g", joined)).assignment, bytes_of("p0-3")) << "Stable: the stored assignment";
  }));
}

TEST(GroupMembership, ASecondMemberRebalancesTheGroupAndFollowersWaitForTheLeadersSync) {
  OneNode node;
  ASSERT_TRUE(node.run([](Env env) {
    Rig rig(env);
    GroupCoordinator& c = rig.c();
    const JoinResult a = stable_single(env, c, "g", bytes_of("a:all"));
    const std::string b_id = member_id_for(c, "g");
    std::optional<JoinResult> b;
    join_async(env, c, join_request("g", b_id), b);
    env.scheduler.sleep_for(100ms);
    EXPECT_FALSE(b.has_value()) << "held until every known member rejoined";
    EXPECT_EQ(c.find_group("g")->state, GroupState::kPreparingRebalance);
    EXPECT_EQ(c.heartbeat(heartbeat_request("g", a)), ErrorCode::kRebalanceInProgress);
    const JoinResult a2 = c.join(join_request("g", a.member_id));
    env.scheduler.sleep_for(1ms);
    ASSERT_TRUE(b.has_value());
    ASSERT_EQ(a2.error, ErrorCode::kNone);
    ASSERT_EQ(b->error, ErrorCode::kNone);
    EXPECT_EQ(a2.generation_id, 2);
    EXPECT_EQ(b->generation_id, 2);
    EXPECT_EQ(a2.leader_id, a.member_id) << "the leader is kept";
    EXPECT_EQ(a2.members.size(), 2u);
    EXPECT_TRUE(b->members.empty()) << "only the leader gets the members";
    std::optional<SyncResult> b_sync;
    sync_async(env, c, sync_request("g", *b), b_sync);
    env.scheduler.sleep_for(100ms);
    EXPECT_FALSE(b_sync.has_value()) << "a follower waits for the leader's assignment";
    const SyncResult a_sync =
        c.sync(sync_request("g", a2, {{a.member_id, bytes_of("a:0,1")}, {b_id, bytes_of("b:2,3")}}));
    env.scheduler.sleep_for(1ms);
    ASSERT_TRUE(b_sync.has_value());
    EXPECT_EQ(a_sync.assignment, bytes_of("a:0,1"));
    EXPECT_EQ(b_sync->assignment, bytes_of("b:2,3"));
    EXPECT_EQ(c.heartbeat(heartbeat_request("g", a)), ErrorCode::kIllegalGeneration) << "the old generation";
  }));
}

TEST(GroupMembership, ProtocolIsChosenByVoteAmongProtocolsEveryMemberSupports) {
  OneNode node;
  ASSERT_TRUE(node.run([](Env env) {
    Rig rig(env);
    GroupCoordinator& c = rig.c();
    const Bytes m = subscription({"orders"});
    const std::string a = member_id_for(c, "g");
    const std::string b = member_id_for(c, "g");
    const std::string d = member_id_for(c, "g");
    std::optional<JoinResult> ra, rb, rd;
    join_async(env, c, join_request("g", a, {{"roundrobin", m}, {"range", m}, {"sticky", m}}), ra);
    join_async(env, c, join_request("g", b, {{"range", m}, {"roundrobin", m}}), rb);
    join_async(env, c, join_request("g", d, {{"range", m}, {"roundrobin", m}}), rd);
    env.scheduler.sleep_for(2s);  // the initial delay, extended once as members kept arriving
    ASSERT_TRUE(ra.has_value() && rb.has_value() && rd.has_value());
    EXPECT_EQ(ra->protocol_name, "range") << "two votes against one; sticky is not supported by all";
    const JoinResult odd = c.join(join_request("g", "", {{"sticky", m}}));
    EXPECT_EQ(odd.error, ErrorCode::kInconsistentGroupProtocol);
    JoinRequest other_type = join_request("g", "");
    other_type.protocol_type = "connect";
    EXPECT_EQ(c.join(other_type).error, ErrorCode::kInconsistentGroupProtocol);
    JoinRequest none = join_request("fresh", "", {});
    EXPECT_EQ(c.join(none).error, ErrorCode::kInconsistentGroupProtocol) << "an empty group needs a protocol";
  }));
}

TEST(GroupMembership, ErrorCodesForBadSessionsMembersAndGenerations) {
  OneNode node;
  ASSERT_TRUE(node.run([](Env env) {
    Rig rig(env);
    GroupCoordinator& c = rig.c();
    EXPECT_EQ(c.join(join_request("g", "", {{"range", {}}}, 5999)).error, ErrorCode::kInvalidSessionTimeout);
    EXPECT_EQ(c.join(join_request("g", "", {{"range", {}}}, 1800001)).error, ErrorCode::kInvalidSessionTimeout);
    EXPECT_EQ(c.join(join_request("", "")).error, ErrorCode::kInvalidGroupId);
    EXPECT_EQ(c.join(join_request("nowhere", "ghost")).error, ErrorCode::kUnknownMemberId);
    EXPECT_EQ(c.heartbeat({"nowhere", 1, "ghost", std::nullopt}), ErrorCode::kUnknownMemberId);
    EXPECT_EQ(c.sync({"nowhere", 1, "ghost", std::nullopt, std::nullopt, std::nullopt, {}}).error,
              ErrorCode::kUnknownMemberId);
    const JoinResult a = stable_single(env, c, "g", bytes_of("x"));
    EXPECT_EQ(c.heartbeat({"g", a.generation_id, "ghost", std::nullopt}), ErrorCode::kUnknownMemberId);
    EXPECT_EQ(c.heartbeat({"g", a.generation_id + 1, a.member_id, std::nullopt}), ErrorCode::kIllegalGeneration);
    SyncRequest stale = sync_request("g", a);
    stale.generation_id = 7;
    EXPECT_EQ(c.sync(stale).error, ErrorCode::kIllegalGeneration);
    SyncRequest wrong_protocol = sync_request("g", a);
    wrong_protocol.protocol_name = "roundrobin";
    EXPECT_EQ(c.sync(wrong_protocol).error, ErrorCode::kInconsistentGroupProtocol);
    EXPECT_EQ(c.join(join_request("g", "ghost")).error, ErrorCode::kUnknownMemberId);
    JoinRequest no_id_required = join_request("h", "");
    no_id_required.require_known_member_id = false;  // JoinGroup v0-3: admitted at once
    const JoinResult old_client = c.join(no_id_required);
    EXPECT_EQ(old_client.error, ErrorCode::kNone);
    EXPECT_EQ(old_client.generation_id, 1);
  }));
}

TEST(GroupMembership, ASilentMemberExpiresAfterItsSessionTimeoutAndItsPartitionsMove) {
  OneNode node;
  ASSERT_TRUE(node.run([](Env env) {
    Rig rig(env);
    GroupCoordinator& c = rig.c();
    const auto [ra, rb] = stable_pair(env, c, 10000, 10000, 30000, bytes_of("0,1"), bytes_of("2,3"));
    EXPECT_EQ(c.describe("g").members.at(0).assignment.size(), 3u);
    const JoinResult& leader = ra.leader_id == ra.member_id ? ra : rb;
    const JoinResult& follower = ra.leader_id == ra.member_id ? rb : ra;
    // The leader heartbeats every 3 s; the follower falls silent. Its 10 s session runs out.
    ErrorCode seen = ErrorCode::kNone;
    for (int i = 0; i < 6 && seen == ErrorCode::kNone; ++i) {
      env.scheduler.sleep_for(3s);
      seen = c.heartbeat(heartbeat_request("g", leader));
    }
    EXPECT_EQ(seen, ErrorCode::kRebalanceInProgress);
    EXPECT_FALSE(c.find_group("g")->has(follower.member_id));
    const JoinResult again = c.join(join_request("g", leader.member_id));
    ASSERT_EQ(again.error, ErrorCode::kNone);
    EXPECT_EQ(again.generation_id, leader.generation_id + 1);
    ASSERT_EQ(again.members.size(), 1u);
    const SyncResult all = c.sync(sync_request("g", again, {{leader.member_id, bytes_of("0,1,2,3")}}));
    EXPECT_EQ(all.assignment, bytes_of("0,1,2,3")) << "the partitions moved to the survivor";
    EXPECT_EQ(c.heartbeat(heartbeat_request("g", follower)), ErrorCode::kUnknownMemberId);
  }));
}

TEST(GroupMembership, TheRebalanceTimeoutRemovesMembersThatDidNotRejoin) {
  OneNode node;
  ASSERT_TRUE(node.run([](Env env) {
    Rig rig(env);
    GroupCoordinator& c = rig.c();
    const auto [ra, rb] = stable_pair(env, c, 10000, 60000, 20000);
    const std::string a = ra.member_id;
    const std::string b = rb.member_id;
    // b rejoins (new metadata); a keeps heartbeating but never rejoins.
    std::optional<JoinResult> b2;
    const Instant start = env.clock.now();
    join_async(env, c, join_request("g", b, {{"range", bytes_of("new")}}, 60000, 20000), b2);
    while (!b2.has_value()) {
      env.scheduler.sleep_for(2s);
      if (!b2.has_value()) {
        EXPECT_EQ(c.heartbeat(heartbeat_request("g", ra)), ErrorCode::kRebalanceInProgress);
      }
    }
    EXPECT_GE(env.clock.now() - start, 20s);
    EXPECT_LE(env.clock.now() - start, 23s);
    ASSERT_EQ(b2->error, ErrorCode::kNone);
    EXPECT_EQ(b2->leader_id, b) << "a new leader among those who rejoined";
    EXPECT_EQ(b2->members.size(), 1u);
    EXPECT_FALSE(c.find_group("g")->has(a));
  }));
}

TEST(GroupMembership, AMemberThatVanishesMidRebalanceDoesNotHoldTheGroup) {
  OneNode node;
  ASSERT_TRUE(node.run([](Env env) {
    Rig rig(env);
    GroupCoordinator& c = rig.c();
    const auto [ra, rb] = stable_pair(env, c, 10000, 10000, 300000);
    const std::string a = ra.member_id;
    // a rejoins; b's process died: no heartbeat, no rejoin. Its session (10 s) ends the wait, not the 300 s
    // rebalance timeout.
    std::optional<JoinResult> a2;
    join_async(env, c, join_request("g", a, {{"range", bytes_of("v2")}}, 10000, 300000), a2);
    env.scheduler.sleep_for(11s);
    ASSERT_TRUE(a2.has_value());
    EXPECT_EQ(a2->error, ErrorCode::kNone);
    EXPECT_EQ(a2->members.size(), 1u);
    EXPECT_EQ(c.find_group("g")->state, GroupState::kCompletingRebalance);
  }));
}

TEST(GroupMembership, LeaveGroupSingleAndBatchedAndPendingMembers) {
  OneNode node;
  ASSERT_TRUE(node.run([](Env env) {
    Rig rig(env);
    GroupCoordinator& c = rig.c();
    const auto [ra, rb] = stable_pair(env, c, 10000, 10000, 30000);
    const std::string a = ra.member_id;
    const std::string b = rb.member_id;
    const LeaveResult one = c.leave("g", {{b, std::nullopt}});
    EXPECT_EQ(one.error, ErrorCode::kNone);
    ASSERT_EQ(one.members.size(), 1u);
    EXPECT_EQ(one.members[0], ErrorCode::kNone);
    EXPECT_EQ(c.heartbeat(heartbeat_request("g", ra)), ErrorCode::kRebalanceInProgress) << "the other rejoins";
    const std::string pending = member_id_for(c, "g");
    const LeaveResult batch = c.leave("g", {{pending, std::nullopt}, {"ghost", std::nullopt}, {a, std::nullopt}});
    ASSERT_EQ(batch.members.size(), 3u);
    EXPECT_EQ(batch.members[0], ErrorCode::kNone) << "a pending member may leave";
    EXPECT_EQ(batch.members[1], ErrorCode::kUnknownMemberId);
    EXPECT_EQ(batch.members[2], ErrorCode::kNone);
    env.scheduler.sleep_for(10ms);
    EXPECT_EQ(c.find_group("g")->state, GroupState::kEmpty) << "nobody rejoined: the next generation is empty";
    EXPECT_EQ(c.find_group("g")->generation, 2);
    const LeaveResult unknown_group = c.leave("nowhere", {{"x", std::nullopt}});
    EXPECT_EQ(unknown_group.error, ErrorCode::kNone);
    EXPECT_EQ(unknown_group.members, std::vector<ErrorCode>{ErrorCode::kUnknownMemberId});
  }));
}

TEST(GroupMembership, APendingMemberIdExpiresAfterOneSessionTimeout) {
  OneNode node;
  ASSERT_TRUE(node.run([](Env env) {
    Rig rig(env);
    GroupCoordinator& c = rig.c();
    const std::string id = member_id_for(c, "g");
    env.scheduler.sleep_for(11s);
    EXPECT_EQ(c.join(join_request("g", id)).error, ErrorCode::kUnknownMemberId);
  }));
}

TEST(GroupMembership, StopAnswersParkedRequests) {
  OneNode node;
  ASSERT_TRUE(node.run([](Env env) {
    CoordinatorConfig config = fast_config();
    config.initial_rebalance_delay_ms = 60000;
    Rig rig(env, config);
    GroupCoordinator& c = rig.c();
    std::optional<JoinResult> parked;
    join_async(env, c, join_request("g", member_id_for(c, "g")), parked);
    env.scheduler.sleep_for(1s);
    ASSERT_FALSE(parked.has_value());
    c.shutdown();
    env.scheduler.sleep_for(1ms);
    ASSERT_TRUE(parked.has_value());
    EXPECT_EQ(parked->error, ErrorCode::kNotCoordinator);
    EXPECT_EQ(c.heartbeat({"g", 1, "x", std::nullopt}), ErrorCode::kCoordinatorNotAvailable);
  }));
}

}  // namespace
}  // namespace sluice::group::testing
