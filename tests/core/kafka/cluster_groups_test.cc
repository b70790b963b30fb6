// Consumer groups on a cluster (issue 22 step 7): __consumer_offsets is a replicated topic (offsets.topic.replication
// .factor replicas), FindCoordinator names the leader of the group's partition on every node, the other nodes answer
// the group's requests NOT_COORDINATOR, and when the coordinator's node is killed the partition's new leader loads
// the group from the replicated log: an acknowledged commit is still there. The cluster: cluster_test_util.h.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/group/coordinator.h"
#include "core/protocol/messages/delete_topics.h"
#include "core/protocol/messages/find_coordinator.h"
#include "core/protocol/messages/offset_commit.h"
#include "core/protocol/messages/offset_fetch.h"
#include "tests/core/kafka/admin_test_util.h"
#include "tests/core/kafka/cluster_test_util.h"

namespace sluice::kafka::testing {
namespace {

using protocol::FindCoordinatorRequest;
using protocol::FindCoordinatorResponse;
using protocol::OffsetCommitRequest;
using protocol::OffsetCommitResponse;
using protocol::OffsetFetchRequest;
using protocol::OffsetFetchResponse;

constexpr int16_t kCoordinatorLoadInProgress = 14;
constexpr int16_t kCoordinatorNotAvailable = 15;
constexpr int16_t kNotCoordinator = 16;
const std::string kGroup = "payments";

// The coordinator node `id` names for the group (-1: an error, or no answer).
int32_t coordinator_seen_by(Env env, int32_t id) {
  KafkaClient client = connect(env, id);
  FindCoordinatorRequest find;
  find.key = kGroup;
  auto answer = client.call<FindCoordinatorResponse>(find, 3);
  if (!answer.ok() || answer->error_code != 0) return -1;
  return answer->node_id;
}

// The coordinator every node of `ids` names, once they agree and it is not `not_this` (-1 if they never do).
int32_t agreed_coordinator(Env env, const std::vector<int32_t>& ids, int32_t not_this = -1) {
  for (int attempt = 0; attempt < 300; ++attempt) {
    int32_t agreed = -1;
    bool same = true;
    for (int32_t id : ids) {
      const int32_t seen = coordinator_seen_by(env, id);
      if (seen < 0 || (agreed >= 0 && seen != agreed)) same = false;
      agreed = seen;
    }
    if (same && agreed >= 0 && agreed != not_this) return agreed;
    env.scheduler.sleep_for(100ms);
  }
  return -1;
}

// A standalone commit (no generation) of `offset` for orders-0 at node `id`: its error (-100: no answer).
int16_t commit_at(Env env, int32_t id, int64_t offset) {
  KafkaClient client = connect(env, id);
  OffsetCommitRequest request;
  request.group_id = kGroup;
  request.topics = {{"orders", {{0, offset, -1, -1, "m"}}}};
  auto response = client.call<OffsetCommitResponse>(request, 8);
  if (!response.ok()) return -100;
  return response->topics.at(0).partitions.at(0).error_code;
}

// Commits until the coordinator has loaded the partition (COORDINATOR_LOAD_IN_PROGRESS before).
int16_t commit_when_loaded(Env env, int32_t id, int64_t offset) {
  int16_t error = kCoordinatorLoadInProgress;
  for (int attempt = 0; attempt < 100 && error == kCoordinatorLoadInProgress; ++attempt) {
    error = commit_at(env, id, offset);
    if (error == kCoordinatorLoadInProgress) env.scheduler.sleep_for(100ms);
  }
  return error;
}

// OffsetFetch of orders-0 at node `id`: {error, offset} (error -100: no answer); retried while loading.
std::pair<int16_t, int64_t> fetch_at(Env env, int32_t id) {
  for (int attempt = 0; attempt < 100; ++attempt) {
    KafkaClient client = connect(env, id);
    OffsetFetchRequest request;
    request.group_id = kGroup;
    request.topics = std::vector<OffsetFetchRequest::Topic>{{"orders", {0}}};
    auto response = client.call<OffsetFetchResponse>(request, 5);
    if (!response.ok()) return {-100, -1};
    if (response->error_code != kCoordinatorLoadInProgress) {
      const int64_t offset = response->error_code == 0 ? response->topics.at(0).partitions.at(0).committed_offset : -1;
      return {response->error_code, offset};
    }
    env.scheduler.sleep_for(100ms);
  }
  return {kCoordinatorLoadInProgress, -1};
}

TEST(ClusterGroups, FindCoordinatorNamesThePartitionLeaderAndOtherNodesAnswerNotCoordinator) {
  KafkaCluster c;
  const std::vector<int32_t> all{1, 2, 3};
  ASSERT_TRUE(c.run_until([&] { return c.registered(all); }));
  int32_t coordinator = -1;
  ASSERT_TRUE(c.on_client([&](Env env) {
    KafkaClient admin = connect(env, 1);
    create_topic(admin, "orders", 1);
    coordinator = agreed_coordinator(env, all);
    ASSERT_GE(coordinator, 1);
    // Kafka's partitionFor: abs(Java hashCode) % offsets.topic.num.partitions, whose leader coordinates.
    const int32_t partition = group::partition_for_group(kGroup, 3);
    const auto offsets = c.broker(coordinator)->partitions().find({"__consumer_offsets", partition});
    ASSERT_NE(offsets, nullptr);
    EXPECT_TRUE(offsets->is_leader());
    EXPECT_EQ(offsets->replicas().size(), 3u) << "offsets.topic.replication.factor, capped at 3 brokers";
    EXPECT_EQ(commit_when_loaded(env, coordinator, 7), 0);
    for (int32_t id : all) {
      if (id == coordinator) continue;
      EXPECT_EQ(commit_at(env, id, 8), kNotCoordinator) << "node " << id << " does not lead the group's partition";
      EXPECT_EQ(fetch_at(env, id).first, kNotCoordinator) << "node " << id;
    }
    EXPECT_EQ(fetch_at(env, coordinator), std::make_pair(int16_t{0}, int64_t{7}));
  }));
  EXPECT_TRUE(c.broker(coordinator)->groups().coordinates(kGroup));
  for (int32_t id : all) {
    if (id != coordinator) EXPECT_FALSE(c.broker(id)->groups().coordinates(kGroup)) << "node " << id;
  }
}

void coordinator_failover(uint64_t seed) {
  KafkaCluster c(3, seed);
  const std::vector<int32_t> all{1, 2, 3};
  ASSERT_TRUE(c.run_until([&] { return c.registered(all); }));
  int32_t first = -1;
  ASSERT_TRUE(c.on_client([&](Env env) {
    KafkaClient admin = connect(env, 1);
    create_topic(admin, "orders", 1);
    first = agreed_coordinator(env, all);
    ASSERT_GE(first, 1);
    for (int64_t offset = 10; offset <= 50; offset += 10) ASSERT_EQ(commit_when_loaded(env, first, offset), 0);
  }));
  ASSERT_GE(first, 1);
  c.crash(first);
  std::vector<int32_t> rest;
  for (int32_t id : all) {
    if (id != first) rest.push_back(id);
  }
  int32_t second = -1;
  ASSERT_TRUE(c.on_client([&](Env env) {
    second = agreed_coordinator(env, rest, first);
    ASSERT_GE(second, 1) << "a surviving replica leads the group's partition";
    EXPECT_EQ(fetch_at(env, second), std::make_pair(int16_t{0}, int64_t{50})) << "the acknowledged commit survived";
    ASSERT_EQ(commit_when_loaded(env, second, 60), 0);
  }));
  // The old coordinator comes back as a follower of the partition: it answers NOT_COORDINATOR, and the group's
  // offsets stay where the new coordinator put them.
  c.boot(first);
  ASSERT_TRUE(c.run_until([&] { return c.registered(all); }));
  ASSERT_TRUE(c.on_client([&](Env env) {
    const int32_t now = agreed_coordinator(env, all);
    ASSERT_GE(now, 1);
    if (now != first) {
      EXPECT_EQ(commit_at(env, first, 1), kNotCoordinator);
    }
    EXPECT_EQ(fetch_at(env, now), std::make_pair(int16_t{0}, int64_t{60}));
  }));
}

// Kafka's onPartitionsDeleted: a topic deleted through a node that does not coordinate the group still leaves the
// group's committed offsets, because every node's reconciler tells its coordinator.
TEST(ClusterGroups, ATopicDeletedThroughAnotherNodeLeavesTheGroupsOffsets) {
  KafkaCluster c;
  const std::vector<int32_t> all{1, 2, 3};
  ASSERT_TRUE(c.run_until([&] { return c.registered(all); }));
  ASSERT_TRUE(c.on_client([&](Env env) {
    KafkaClient admin = connect(env, 1);
    create_topic(admin, "orders", 1);
    const int32_t coordinator = agreed_coordinator(env, all);
    ASSERT_GE(coordinator, 1);
    ASSERT_EQ(commit_when_loaded(env, coordinator, 40), 0);
    ASSERT_EQ(fetch_at(env, coordinator), std::make_pair(int16_t{0}, int64_t{40}));
    const int32_t other = coordinator == 1 ? 2 : 1;
    KafkaClient deleter = connect(env, other);
    protocol::DeleteTopicsRequest request;
    request.topic_names = {"orders"};
    request.timeout_ms = 10000;
    auto deleted = deleter.call<protocol::DeleteTopicsResponse>(request, 4);
    ASSERT_TRUE(deleted.ok()) << deleted.status().to_string();
    ASSERT_EQ(deleted->responses.at(0).error_code, 0);
    std::pair<int16_t, int64_t> after{-1, 40};
    for (int attempt = 0; attempt < 50 && after.second != -1; ++attempt) {
      env.scheduler.sleep_for(100ms);
      after = fetch_at(env, coordinator);
    }
    EXPECT_EQ(after, std::make_pair(int16_t{0}, int64_t{-1})) << "the deleted topic's offset left the group";
  }));
}

TEST(ClusterGroups, TheCoordinatorMovesWithItsPartitionAndKeepsAcknowledgedCommits) {
  for (uint64_t seed : {3, 4, 5}) {
    SCOPED_TRACE(seed);
    coordinator_failover(seed);
  }
}

// The planted bug answers a commit at the leader's own append: a commit cut off from its followers is acknowledged
// and then lost with the coordinator's node. acks=all semantics refuse it (COORDINATOR_NOT_AVAILABLE once the quorum
// wait times out).
TEST(ClusterGroups, ACommitIsAnsweredOnlyOnceAQuorumHoldsIt) {
  for (const bool planted : {false, true}) {
    SCOPED_TRACE(planted);
    MutationSet mutations;
    if (planted) mutations.add(Mutation::kCoordinatorCommitBeforeQuorum);
    KafkaCluster c(3, 9, mutations);
    const std::vector<int32_t> all{1, 2, 3};
    ASSERT_TRUE(c.run_until([&] { return c.registered(all); }));
    int32_t coordinator = -1;
    ASSERT_TRUE(c.on_client([&](Env env) {
      KafkaClient admin = connect(env, 1);
      create_topic(admin, "orders", 1);
      coordinator = agreed_coordinator(env, all);
      ASSERT_GE(coordinator, 1);
      ASSERT_EQ(commit_when_loaded(env, coordinator, 5), 0);
    }));
    // The other two nodes go down: the coordinator alone cannot commit anything.
    for (int32_t id : all) {
      if (id != coordinator) c.crash(id);
    }
    ASSERT_TRUE(c.on_client([&](Env env) {
      const int16_t error = commit_at(env, coordinator, 6);
      if (planted) {
        EXPECT_EQ(error, 0) << "the planted bug answers at the local append";
      } else {
        EXPECT_TRUE(error == kCoordinatorNotAvailable || error == kNotCoordinator) << error;
      }
    }));
  }
}

}  // namespace
}  // namespace sluice::kafka::testing
