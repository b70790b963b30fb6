// DescribeQuorum (55) on three simulated brokers in cluster mode: the metadata raft group's leader answers for
// `__cluster_metadata` partition 0 with its raft status, every other node NOT_LEADER_OR_FOLLOWER, a request for
// another partition UNKNOWN_TOPIC_OR_PARTITION (as Kafka's KafkaRaftClient); a crashed follower's lag and last
// fetch stop moving; and the client's describe_metadata_quorum finds the leader from any bootstrap node and prints
// what kafka-metadata-quorum.sh prints.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <optional>
#include <vector>

#include "core/client/client.h"
#include "core/client/quorum.h"
#include "core/protocol/messages/describe_cluster.h"
#include "core/protocol/messages/describe_quorum.h"
#include "tests/core/kafka/cluster_test_util.h"

namespace sluice::kafka::testing {
namespace {

using protocol::DescribeQuorumRequest;
using protocol::DescribeQuorumResponse;

constexpr int16_t kUnknownTopicOrPartition = 3;

DescribeQuorumRequest metadata_partition_request() {
  DescribeQuorumRequest request;
  request.topics.push_back({protocol::kClusterMetadataTopic, {{0}}});
  return request;
}

// The one partition of an answer about __cluster_metadata-0.
DescribeQuorumResponse::Partition only_partition(const DescribeQuorumResponse& response) {
  EXPECT_EQ(response.error_code, 0);
  EXPECT_EQ(response.topics.size(), 1u);
  if (response.topics.size() != 1 || response.topics[0].partitions.size() != 1) return {};
  EXPECT_EQ(response.topics[0].topic_name, protocol::kClusterMetadataTopic);
  return response.topics[0].partitions[0];
}

const DescribeQuorumResponse::ReplicaState* replica(const DescribeQuorumResponse::Partition& p, int32_t id) {
  for (const auto& r : p.current_voters) {
    if (r.replica_id == id) return &r;
  }
  return nullptr;
}

// Asks every node at `version`; returns the leader's answer and checks the others refused.
std::optional<DescribeQuorumResponse::Partition> ask_every_node(Env env, int32_t nodes, int16_t version,
                                                                int32_t* leader) {
  std::optional<DescribeQuorumResponse::Partition> answer;
  for (int32_t id = 1; id <= nodes; ++id) {
    KafkaClient client = connect(env, id);
    Result<DescribeQuorumResponse> response =
        client.call<DescribeQuorumResponse>(metadata_partition_request(), version);
    EXPECT_TRUE(response.ok()) << response.status().to_string();
    if (!response.ok()) continue;
    const DescribeQuorumResponse::Partition p = only_partition(*response);
    if (p.error_code == 0) {
      EXPECT_FALSE(answer.has_value()) << "two leaders answered";
      answer = p;
      *leader = id;
    } else {
      EXPECT_EQ(p.error_code, kNotLeaderOrFollower) << "n" << id;
    }
  }
  return answer;
}

TEST(ClusterQuorum, TheLeaderDescribesTheMetadataQuorumAndOthersRefuse) {
  KafkaCluster c;
  const std::vector<int32_t> all{1, 2, 3};
  ASSERT_TRUE(c.run_until([&] { return c.registered(all); }));
  ASSERT_TRUE(c.on_client([&](Env env) {
    env.scheduler.sleep_for(2s);  // a few heartbeat rounds: every follower has answered the leader
    int32_t leader = 0;
    std::optional<DescribeQuorumResponse::Partition> p = ask_every_node(env, c.size(), 1, &leader);
    ASSERT_TRUE(p.has_value()) << "no node answered as the leader";
    KafkaClient client = connect(env, 1);
    auto cluster = client.call<protocol::DescribeClusterResponse>(protocol::DescribeClusterRequest{}, 0);
    ASSERT_TRUE(cluster.ok());
    EXPECT_EQ(cluster->controller_id, leader) << "DescribeCluster's controller is the quorum's leader";

    EXPECT_EQ(p->leader_id, leader);
    EXPECT_GE(p->leader_epoch, 1);
    EXPECT_GT(p->high_watermark, 0) << "the registrations are committed";
    ASSERT_EQ(p->current_voters.size(), 3u);
    EXPECT_TRUE(p->observers.empty());
    const int64_t now_ms = to_unix_ms(env.clock.wall_now());
    const auto* self = replica(*p, leader);
    ASSERT_NE(self, nullptr);
    EXPECT_GE(self->log_end_offset, p->high_watermark);
    EXPECT_NEAR(static_cast<double>(self->last_caught_up_timestamp), static_cast<double>(now_ms), 100.0);
    for (int32_t id : all) {
      if (id == leader) continue;
      const auto* follower = replica(*p, id);
      ASSERT_NE(follower, nullptr) << id;
      EXPECT_LE(follower->log_end_offset, self->log_end_offset);
      // Answered within the last few ticks (the test's raft tick is 50 ms) and caught up then.
      EXPECT_GT(follower->last_fetch_timestamp, now_ms - 1000) << id;
      EXPECT_LE(follower->last_fetch_timestamp, now_ms) << id;
      EXPECT_GT(follower->last_caught_up_timestamp, now_ms - 1000) << id;
    }

    // v0 has no timestamps; a request naming anything but __cluster_metadata-0 is refused per partition.
    int32_t leader_v0 = 0;
    std::optional<DescribeQuorumResponse::Partition> p0 = ask_every_node(env, c.size(), 0, &leader_v0);
    ASSERT_TRUE(p0.has_value());
    EXPECT_EQ(p0->current_voters[0].last_fetch_timestamp, -1);
    DescribeQuorumRequest other;
    other.topics.push_back({protocol::kClusterMetadataTopic, {{1}}});
    KafkaClient to_leader = connect(env, leader);
    auto refused = to_leader.call<DescribeQuorumResponse>(other, 1);
    ASSERT_TRUE(refused.ok());
    ASSERT_EQ(refused->topics.size(), 1u);
    ASSERT_EQ(refused->topics[0].partitions.size(), 1u);
    EXPECT_EQ(refused->topics[0].partitions[0].partition_index, 1);
    EXPECT_EQ(refused->topics[0].partitions[0].error_code, kUnknownTopicOrPartition);
  }));
}

TEST(ClusterQuorum, ACrashedFollowersLastFetchStopsWhileTheOthersMove) {
  KafkaCluster c;
  const std::vector<int32_t> all{1, 2, 3};
  ASSERT_TRUE(c.run_until([&] { return c.registered(all); }));
  int32_t leader = 0;
  ASSERT_TRUE(c.on_client([&](Env env) {
    env.scheduler.sleep_for(1s);
    ASSERT_TRUE(ask_every_node(env, c.size(), 1, &leader).has_value());
  }));
  const int32_t down = leader == 3 ? 2 : 3;
  const int32_t alive = 6 - leader - down;
  c.crash(down);
  ASSERT_TRUE(c.on_client([&](Env env) {
    env.scheduler.sleep_for(3s);
    KafkaClient client = connect(env, leader);
    auto response = client.call<DescribeQuorumResponse>(metadata_partition_request(), 1);
    ASSERT_TRUE(response.ok());
    const DescribeQuorumResponse::Partition p = only_partition(*response);
    ASSERT_EQ(p.error_code, 0) << "the leader keeps its quorum with one follower";
    const int64_t now_ms = to_unix_ms(env.clock.wall_now());
    const auto* gone = replica(p, down);
    const auto* here = replica(p, alive);
    ASSERT_NE(gone, nullptr);
    ASSERT_NE(here, nullptr);
    EXPECT_LT(gone->last_fetch_timestamp, now_ms - 2500) << "nothing heard from it for 3 s";
    EXPECT_GT(here->last_fetch_timestamp, now_ms - 500);

    // Through the project's client, bootstrapped to the crashed node's peer that is not the leader when it can be.
    client::ClientConfig config;
    config.bootstrap = {KafkaCluster::address(alive)};
    client::Client kafka(env, config);
    Result<client::QuorumDescription> described = client::describe_metadata_quorum(kafka);
    ASSERT_TRUE(described.ok()) << described.status().to_string();
    EXPECT_EQ(described->quorum.leader_id, leader);
    const std::string status = client::format_quorum_status(*described);
    EXPECT_NE(status.find(fmt::format("LeaderId:               {}\n", leader)), std::string::npos) << status;
    EXPECT_NE(status.find("CurrentVoters:          [1,2,3]\n"), std::string::npos) << status;
    const std::string replication = client::format_quorum_replication(*described, now_ms);
    EXPECT_NE(replication.find("NodeId LogEndOffset Lag"), std::string::npos) << replication;
    EXPECT_NE(replication.find("Leader"), std::string::npos) << replication;
    EXPECT_NE(replication.find("ms ago"), std::string::npos) << replication;
  }));
}

}  // namespace
}  // namespace sluice::kafka::testing
