// Placement: Kafka 3.9's rack-unaware assignment (AdminUtils), checked against the assignment Kafka documents and
// tests for brokers 0..4, 10 partitions, replication factor 3 and start index 0, then as properties over random
// clusters: RF distinct registered replicas per partition, preferred leaders and replicas spread evenly, Kafka's
// errors, and added partitions that continue the round robin.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <set>

#include "core/cluster/metadata/placement.h"
#include "tests/core/cluster/metadata_test_util.h"

namespace sluice::cluster::metadata {
namespace {

using testing::error_of;

std::vector<int32_t> ids(int32_t n, int32_t step = 1) {
  std::vector<int32_t> brokers;
  for (int32_t i = 0; i < n; ++i) brokers.push_back(100 + i * step);
  return brokers;
}

std::pair<int32_t, int32_t> min_max(const std::map<int32_t, int32_t>& counts) {
  auto [low, high] = std::minmax_element(counts.begin(), counts.end(),
                                         [](const auto& a, const auto& b) { return a.second < b.second; });
  return {low->second, high->second};
}

TEST(MetadataPlacement, MatchesKafkasDocumentedAssignmentForFiveBrokers) {
  // AdminUtils' Javadoc table and AdminZkClientTest.testReplicaAssignment: brokers 0..4, fixed start index 0.
  const ReplicaAssignment expected{{0, 1, 2}, {1, 2, 3}, {2, 3, 4}, {3, 4, 0}, {4, 0, 1},
                                   {0, 2, 3}, {1, 3, 4}, {2, 4, 0}, {3, 0, 1}, {4, 1, 2}};
  Result<ReplicaAssignment> assignment = assign_replicas_from({0, 1, 2, 3, 4}, 10, 3, PlacementStart{0, 0, 0});
  ASSERT_TRUE(assignment.ok()) << assignment.status().to_string();
  EXPECT_EQ(*assignment, expected);
}

TEST(MetadataPlacement, TheStartIndexRotatesTheLeadersAndTheShiftTheFollowers) {
  Result<ReplicaAssignment> rotated = assign_replicas_from({0, 1, 2, 3}, 4, 2, PlacementStart{2, 1, 0});
  ASSERT_TRUE(rotated.ok());
  EXPECT_EQ(*rotated, (ReplicaAssignment{{2, 0}, {3, 1}, {0, 2}, {1, 3}}));
  Result<ReplicaAssignment> second_round = assign_replicas_from({0, 1, 2, 3}, 2, 2, PlacementStart{2, 1, 4});
  ASSERT_TRUE(second_round.ok());
  EXPECT_EQ(*second_round, (ReplicaAssignment{{2, 1}, {3, 2}})) << "partition 4 starts round two: shift 2";
}

TEST(MetadataPlacement, RefusesAsKafkaDoes) {
  Random random(1);
  EXPECT_EQ(error_of(assign_replicas(ids(3), 0, 1, random).status()), ErrorCode::kInvalidPartitions);
  EXPECT_EQ(error_of(assign_replicas(ids(3), -4, 1, random).status()), ErrorCode::kInvalidPartitions);
  EXPECT_EQ(error_of(assign_replicas(ids(3), 2, 0, random).status()), ErrorCode::kInvalidReplicationFactor);
  EXPECT_EQ(error_of(assign_replicas(ids(3), 2, -1, random).status()), ErrorCode::kInvalidReplicationFactor);
  EXPECT_EQ(error_of(assign_replicas(ids(3), 2, 4, random).status()), ErrorCode::kInvalidReplicationFactor);
  EXPECT_EQ(error_of(assign_replicas({}, 2, 1, random).status()), ErrorCode::kInvalidReplicationFactor);
  EXPECT_EQ(error_of(assign_replicas(ids(3), 0, 0, random).status()), ErrorCode::kInvalidPartitions)
      << "Kafka checks the partition count first";
  Random untouched(1);
  EXPECT_EQ(random.next_u64(), untouched.next_u64()) << "a refusal draws nothing";
}

TEST(MetadataPlacement, TheStartIndexAndThenTheShiftAreDrawnUniformly) {
  const std::vector<int32_t> brokers = ids(5);
  std::set<int32_t> first_leaders;
  std::set<int32_t> first_followers;
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    Random random(seed);
    Random same(seed);
    const ReplicaAssignment drawn = *assign_replicas(brokers, 6, 2, random);
    const auto start_index = static_cast<int32_t>(same.uniform(brokers.size()));
    const auto replica_shift = static_cast<int32_t>(same.uniform(brokers.size()));
    ASSERT_EQ(drawn, *assign_replicas_from(brokers, 6, 2, PlacementStart{start_index, replica_shift, 0}));
    ASSERT_EQ(random.next_u64(), same.next_u64()) << "two draws, no more";
    first_leaders.insert(drawn[0][0]);
    first_followers.insert(drawn[0][1]);
  }
  EXPECT_EQ(first_leaders.size(), brokers.size()) << "every broker leads partition 0 for some seed";
  EXPECT_EQ(first_followers.size(), brokers.size());
}

TEST(MetadataPlacement, TheSameSeedGivesTheSamePlacement) {
  Random a(42);
  Random b(42);
  EXPECT_EQ(*assign_replicas(ids(7), 30, 3, a), *assign_replicas(ids(7), 30, 3, b));
}

TEST(MetadataPlacement, SingleBrokerAndFullReplication) {
  Random random(3);
  EXPECT_EQ(*assign_replicas({5}, 3, 1, random), (ReplicaAssignment{{5}, {5}, {5}}));
  const ReplicaAssignment full = *assign_replicas(ids(4), 9, 4, random);
  for (const std::vector<int32_t>& replicas : full) {
    EXPECT_EQ(std::set<int32_t>(replicas.begin(), replicas.end()).size(), 4u);
  }
}

TEST(MetadataPlacement, AddedPartitionsContinueFromPartitionZerosLeader) {
  const std::vector<int32_t> brokers{0, 1, 2, 3, 4};
  TopicImage topic{"t", {}, {}, {}};
  const ReplicaAssignment existing = *assign_replicas_from(brokers, 3, 2, PlacementStart{2, 4, 0});
  for (const std::vector<int32_t>& replicas : existing) {
    topic.partitions.push_back(PartitionImage{replicas});
  }
  ASSERT_EQ(topic.partitions[0].preferred_leader(), 2);
  Result<ReplicaAssignment> added = assign_added_partitions(brokers, topic, 4);
  ASSERT_TRUE(added.ok());
  // Kafka: start index and shift both at broker 2's index, numbering from partition 3.
  EXPECT_EQ(*added, *assign_replicas_from(brokers, 4, 2, PlacementStart{2, 2, 3}));
  EXPECT_EQ(preferred_leaders(*added), (std::vector<int32_t>{0, 1, 2, 3})) << "(3 + 2) mod 5 = 0 leads partition 3";
  EXPECT_EQ(error_of(assign_added_partitions(brokers, topic, 0).status()), ErrorCode::kInvalidPartitions);
}

TEST(MetadataPlacement, AddedPartitionsStartAtTheFirstBrokerAtOrAfterAGoneLeader) {
  TopicImage topic{"t", {}, {}, {PartitionImage{{7, 1}}}};
  EXPECT_EQ(preferred_leaders(*assign_added_partitions({1, 5, 9}, topic, 2)), (std::vector<int32_t>{1, 5}))
      << "broker 9 (index 2) is the first at or after 7, and partition 1 goes to index (1 + 2) mod 3 = 0";
  topic.partitions[0].replicas = {12, 1};
  EXPECT_EQ(preferred_leaders(*assign_added_partitions({1, 5, 9}, topic, 1)), (std::vector<int32_t>{5}))
      << "none at or after 12: index 0";
}

TEST(MetadataPlacement, NumberedPartitionsAndLeaderCountsOverAnImage) {
  const ReplicaAssignment assignment{{1, 2}, {2, 1}, {1, 2}};
  const std::vector<PartitionReplicas> numbered = numbered_partitions(assignment, 4);
  ASSERT_EQ(numbered.size(), 3u);
  EXPECT_EQ(numbered[0], (PartitionReplicas{4, {1, 2}}));
  EXPECT_EQ(numbered[2], (PartitionReplicas{6, {1, 2}}));
  EXPECT_EQ(preferred_leader_counts({1, 2, 3}, assignment), (std::map<int32_t, int32_t>{{1, 2}, {2, 1}, {3, 0}}));

  MetadataImage image;
  for (int32_t id : {1, 2, 3}) ASSERT_TRUE(image.apply(image.applied_index() + 1, testing::broker_record(id)).ok());
  ASSERT_TRUE(image.apply(10, CreateTopic{"a", testing::topic_id(1), {}, numbered_partitions(assignment, 0)}).ok());
  ASSERT_TRUE(image.apply(11, testing::topic_record("b", testing::topic_id(2), {{3}, {2}})).ok());
  EXPECT_EQ(preferred_leader_counts(image), (std::map<int32_t, int32_t>{{1, 2}, {2, 2}, {3, 1}}));
}

// Every partition gets `rf` distinct replicas, all among the brokers; preferred leaders differ by at most one
// between brokers (exactly equal when the partitions are a multiple of the brokers), and so do replica counts in
// that case.
RC_GTEST_PROP(MetadataPlacementProperty, ReplicasAreDistinctAndSpreadEvenly, (uint64_t seed)) {
  const auto n = *rc::gen::inRange<int32_t>(1, 12);
  const auto rf = *rc::gen::inRange<int16_t>(1, static_cast<int16_t>(n + 1));
  const auto rounds = *rc::gen::inRange<int32_t>(1, 6);
  const bool whole_rounds = *rc::gen::arbitrary<bool>();
  const int32_t partitions = whole_rounds ? rounds * n : *rc::gen::inRange<int32_t>(1, 6 * n);
  const std::vector<int32_t> brokers = ids(n, *rc::gen::inRange<int32_t>(1, 4));
  Random random(seed);
  Result<ReplicaAssignment> assignment = assign_replicas(brokers, partitions, rf, random);
  RC_ASSERT(assignment.ok());
  RC_ASSERT(assignment->size() == static_cast<size_t>(partitions));
  std::map<int32_t, int32_t> replica_counts;
  for (int32_t broker : brokers) replica_counts[broker] = 0;
  for (const std::vector<int32_t>& replicas : *assignment) {
    RC_ASSERT(replicas.size() == static_cast<size_t>(rf));
    RC_ASSERT(std::set<int32_t>(replicas.begin(), replicas.end()).size() == replicas.size());
    for (int32_t replica : replicas) {
      RC_ASSERT(std::binary_search(brokers.begin(), brokers.end(), replica));
      ++replica_counts[replica];
    }
  }
  const auto [low, high] = min_max(preferred_leader_counts(brokers, *assignment));
  RC_ASSERT(high - low <= 1);
  if (whole_rounds) {
    RC_ASSERT(low == high);
    const auto [replicas_low, replicas_high] = min_max(replica_counts);
    RC_ASSERT(replicas_low == replicas_high);
  }
}

RC_GTEST_PROP(MetadataPlacementProperty, AReplicationFactorAboveTheBrokersIsRefused, (uint64_t seed)) {
  const auto n = *rc::gen::inRange<int32_t>(0, 10);
  const auto rf = *rc::gen::inRange<int16_t>(static_cast<int16_t>(n + 1), 40);
  Random random(seed);
  Result<ReplicaAssignment> assignment = assign_replicas(ids(n), *rc::gen::inRange<int32_t>(1, 50), rf, random);
  RC_ASSERT(!assignment.ok());
  RC_ASSERT(error_of(assignment.status()) == ErrorCode::kInvalidReplicationFactor);
}

// A topic grown by CreatePartitions keeps its preferred leaders round robin over all its partitions.
RC_GTEST_PROP(MetadataPlacementProperty, GrowingATopicKeepsLeadersEven, (uint64_t seed)) {
  const auto n = *rc::gen::inRange<int32_t>(1, 9);
  const std::vector<int32_t> brokers = ids(n);
  Random random(seed);
  TopicImage topic{"t", {}, {}, {}};
  const auto rf = *rc::gen::inRange<int16_t>(1, static_cast<int16_t>(n + 1));
  const ReplicaAssignment existing = *assign_replicas(brokers, *rc::gen::inRange<int32_t>(1, 20), rf, random);
  for (const std::vector<int32_t>& replicas : existing) {
    topic.partitions.push_back(PartitionImage{replicas});
  }
  const auto added = *rc::gen::inRange<int32_t>(1, 20);
  Result<ReplicaAssignment> more = assign_added_partitions(brokers, topic, added);
  RC_ASSERT(more.ok());
  ReplicaAssignment all;
  for (const PartitionImage& partition : topic.partitions) all.push_back(partition.replicas);
  for (const std::vector<int32_t>& replicas : *more) {
    RC_ASSERT(replicas.size() == static_cast<size_t>(rf));
    RC_ASSERT(std::set<int32_t>(replicas.begin(), replicas.end()).size() == replicas.size());
    all.push_back(replicas);
  }
  const auto [low, high] = min_max(preferred_leader_counts(brokers, all));
  RC_ASSERT(high - low <= 1);
}

}  // namespace
}  // namespace sluice::cluster::metadata
