// MetadataImage: what each record does to the image, and each refusal with the Kafka error its proposer answers
// with. A refused record must leave the image as it was (applied index aside): `refused` checks that every time.
#include <gtest/gtest.h>

#include <functional>

#include "core/cluster/metadata/image.h"
#include "tests/core/cluster/metadata_test_util.h"

namespace sluice::cluster::metadata {
namespace {

using testing::broker_record;
using testing::error_of;
using testing::topic_id;
using testing::topic_record;

class MetadataImageTest : public ::testing::Test {
 protected:
  // Applies `record` at the next index; expects it to apply.
  void applies(const Record& record) {
    const Status outcome = image_.apply(next_index(), record);
    ASSERT_TRUE(outcome.ok()) << record_type_name(record_type(record)) << ": " << outcome.to_string();
  }
  // Applies `record` at the next index; expects a refusal, and the image unchanged but for its applied index.
  Status refused(const Record& record) {
    MetadataImage expected = image_;
    const Index index = next_index();
    const Status outcome = image_.apply(index, record);
    EXPECT_FALSE(outcome.ok()) << record_type_name(record_type(record));
    expected.apply(index, Batch{});
    EXPECT_EQ(image_, expected) << "a refused " << record_type_name(record_type(record)) << " changed the image";
    EXPECT_EQ(image_.digest(), expected.digest());
    return outcome;
  }
  Index next_index() { return image_.applied_index() + 1 + (image_.applied_index() % 3); }  // gaps are allowed

  void register_brokers(int32_t count) {
    for (int32_t id = 0; id < count; ++id) applies(broker_record(id));
  }

  MetadataImage image_;
};

TEST_F(MetadataImageTest, AnEmptyImageHasNothingAndAppliedIndexZero) {
  EXPECT_EQ(image_.applied_index(), 0u);
  EXPECT_TRUE(image_.brokers().empty());
  EXPECT_TRUE(image_.topics().empty());
  EXPECT_EQ(image_.next_producer_id(), 0);
  EXPECT_EQ(image_.invariant_violation(), "");
}

TEST_F(MetadataImageTest, ARegisteredBrokerKeepsItsEndpointAndTheIndexAsItsEpoch) {
  image_.apply(5, RegisterBroker{2, "b2.example", 9093, "rack-a", 7}).ignore();
  const BrokerRegistration* broker = image_.broker(2);
  ASSERT_NE(broker, nullptr);
  EXPECT_EQ(broker->host, "b2.example");
  EXPECT_EQ(broker->port, 9093);
  EXPECT_EQ(broker->rack, "rack-a");
  EXPECT_EQ(broker->incarnation, 7u);
  EXPECT_EQ(broker->broker_epoch, 5u);
  EXPECT_EQ(image_.applied_index(), 5u);
  EXPECT_EQ(image_.broker_ids(), std::vector<int32_t>{2});
}

TEST_F(MetadataImageTest, ARestartReRegistersAndARetryChangesNothing) {
  applies(RegisterBroker{1, "old", 9092, std::nullopt, 3});
  const Index first_epoch = image_.broker(1)->broker_epoch;
  applies(RegisterBroker{1, "old", 9092, std::nullopt, 3});  // the same proposal committed twice
  EXPECT_EQ(image_.broker(1)->broker_epoch, first_epoch);
  applies(RegisterBroker{1, "new", 9094, std::nullopt, 4});
  EXPECT_EQ(image_.broker(1)->host, "new");
  EXPECT_GT(image_.broker(1)->broker_epoch, first_epoch);
}

TEST_F(MetadataImageTest, AnOlderOrConflictingIncarnationIsRefused) {
  applies(RegisterBroker{1, "a", 9092, std::nullopt, 5});
  EXPECT_EQ(refused(RegisterBroker{1, "a", 9092, std::nullopt, 4}).code(), Code::kAlreadyExists);
  EXPECT_EQ(refused(RegisterBroker{1, "b", 9092, std::nullopt, 5}).code(), Code::kAlreadyExists);
  EXPECT_EQ(refused(RegisterBroker{1, "a", 9092, "rack", 5}).code(), Code::kAlreadyExists);
}

TEST_F(MetadataImageTest, ARegistrationWithoutAUsableEndpointIsRefused) {
  EXPECT_EQ(error_of(refused(RegisterBroker{-1, "h", 9092, std::nullopt, 1})), ErrorCode::kInvalidRequest);
  EXPECT_EQ(error_of(refused(RegisterBroker{1, "", 9092, std::nullopt, 1})), ErrorCode::kInvalidRequest);
  EXPECT_EQ(error_of(refused(RegisterBroker{1, "h", 0, std::nullopt, 1})), ErrorCode::kInvalidRequest);
  EXPECT_EQ(error_of(refused(RegisterBroker{1, "h", 65536, std::nullopt, 1})), ErrorCode::kInvalidRequest);
  EXPECT_EQ(error_of(refused(RegisterBroker{1, "h", 9092, "", 1})), ErrorCode::kInvalidRequest);
}

TEST_F(MetadataImageTest, ACreatedTopicIsFoundByNameAndByIdWithItsConfigsAndReplicas) {
  register_brokers(3);
  CreateTopic create = topic_record("orders", topic_id(1), {{0, 1}, {1, 2}, {2, 0}});
  create.configs = {{"cleanup.policy", "compact"}, {"retention.ms", "1000"}};
  applies(create);
  const TopicImage* topic = image_.topic("orders");
  ASSERT_NE(topic, nullptr);
  EXPECT_EQ(image_.topic(topic_id(1)), topic);
  EXPECT_EQ(topic->partition_count(), 3);
  EXPECT_EQ(topic->replication_factor(), 2);
  EXPECT_EQ(topic->partitions[1].replicas, (std::vector<int32_t>{1, 2}));
  EXPECT_EQ(topic->partitions[1].preferred_leader(), 1);
  EXPECT_EQ(topic->partitions[1].leader, kNoLeader);
  EXPECT_EQ(topic->configs, create.configs);
}

TEST_F(MetadataImageTest, CreatingAnExistingTopicIsRefusedWithTopicAlreadyExists) {
  register_brokers(1);
  applies(topic_record("t", topic_id(1), {{0}}));
  EXPECT_EQ(error_of(refused(topic_record("t", topic_id(2), {{0}}))), ErrorCode::kTopicAlreadyExists);
  EXPECT_EQ(error_of(refused(topic_record("t", topic_id(1), {{0}}))), ErrorCode::kTopicAlreadyExists)
      << "the same proposal committed twice: its proposer recognises its own id";
  EXPECT_EQ(error_of(refused(topic_record("u", topic_id(1), {{0}}))), ErrorCode::kInvalidRequest) << "id taken";
}

TEST_F(MetadataImageTest, TopicNamesFollowKafkasRulesAndMayNotCollide) {
  register_brokers(1);
  for (const std::string& name : {std::string(), std::string("."), std::string(".."), std::string(250, 'a'),
                                  std::string("a/b"), std::string("caf\xc3\xa9")}) {
    EXPECT_EQ(error_of(refused(topic_record(name, topic_id(1), {{0}}))), ErrorCode::kInvalidTopicException) << name;
  }
  applies(topic_record(std::string(249, 'a'), topic_id(2), {{0}}));
  applies(topic_record("metrics.daily", topic_id(3), {{0}}));
  EXPECT_EQ(error_of(refused(topic_record("metrics_daily", topic_id(4), {{0}}))), ErrorCode::kInvalidTopicException);
  applies(topic_record("metrics-daily", topic_id(5), {{0}}));
}

TEST_F(MetadataImageTest, ReservedTopicIdsAreRefused) {
  register_brokers(1);
  TopicId one;
  one.bytes[15] = 1;
  EXPECT_EQ(error_of(refused(topic_record("t", TopicId{}, {{0}}))), ErrorCode::kInvalidRequest);
  EXPECT_EQ(error_of(refused(topic_record("t", one, {{0}}))), ErrorCode::kInvalidRequest);
}

TEST_F(MetadataImageTest, ReplicasMustBeRegisteredDistinctNonEmptyAndOfOneReplicationFactor) {
  register_brokers(3);
  EXPECT_EQ(error_of(refused(topic_record("t", topic_id(1), {}))), ErrorCode::kInvalidPartitions);
  EXPECT_EQ(error_of(refused(topic_record("t", topic_id(1), {{0, 7}}))), ErrorCode::kInvalidReplicaAssignment)
      << "broker 7 is not registered";
  EXPECT_EQ(error_of(refused(topic_record("t", topic_id(1), {{1, 1}}))), ErrorCode::kInvalidReplicaAssignment);
  EXPECT_EQ(error_of(refused(topic_record("t", topic_id(1), {std::vector<int32_t>{}}))),
            ErrorCode::kInvalidReplicaAssignment);
  EXPECT_EQ(error_of(refused(topic_record("t", topic_id(1), {{0, 1}, {2}}))), ErrorCode::kInvalidReplicaAssignment);
  CreateTopic gap = topic_record("t", topic_id(1), {{0}, {1}});
  gap.partitions[1].partition = 2;
  EXPECT_EQ(error_of(refused(gap)), ErrorCode::kInvalidReplicaAssignment);
  CreateTopic unnamed_config = topic_record("t", topic_id(1), {{0}});
  unnamed_config.configs[""] = "x";
  EXPECT_EQ(error_of(refused(unnamed_config)), ErrorCode::kInvalidConfig);
  applies(topic_record("t", topic_id(1), {{0, 1}, {2, 0}}));
}

TEST_F(MetadataImageTest, DeleteTopicByNameOrIdAndUnknownOnesAreRefused) {
  register_brokers(1);
  applies(topic_record("a", topic_id(1), {{0}}));
  applies(topic_record("b", topic_id(2), {{0}}));
  EXPECT_EQ(error_of(refused(DeleteTopic{TopicRef{"zzz", {}}})), ErrorCode::kUnknownTopicOrPartition);
  EXPECT_EQ(error_of(refused(DeleteTopic{TopicRef{"", topic_id(9)}})), ErrorCode::kUnknownTopicId);
  EXPECT_EQ(error_of(refused(DeleteTopic{TopicRef{"a", topic_id(2)}})), ErrorCode::kUnknownTopicId)
      << "the name and the id name different topics";
  EXPECT_EQ(error_of(refused(DeleteTopic{TopicRef{}})), ErrorCode::kInvalidRequest);
  applies(DeleteTopic{TopicRef{"a", {}}});
  applies(DeleteTopic{TopicRef{"", topic_id(2)}});
  EXPECT_TRUE(image_.topics().empty());
  EXPECT_EQ(image_.topic(topic_id(1)), nullptr);
  EXPECT_EQ(error_of(refused(DeleteTopic{TopicRef{"a", {}}})), ErrorCode::kUnknownTopicOrPartition);
}

TEST_F(MetadataImageTest, ADeleteProposedForAnOldIncarnationOfANameMissesTheNewTopic) {
  register_brokers(1);
  applies(topic_record("t", topic_id(1), {{0}}));
  applies(DeleteTopic{TopicRef{"t", topic_id(1)}});
  applies(topic_record("t", topic_id(2), {{0}}));
  EXPECT_EQ(error_of(refused(DeleteTopic{TopicRef{"t", topic_id(1)}})), ErrorCode::kUnknownTopicId);
  EXPECT_NE(image_.topic("t"), nullptr);
}

TEST_F(MetadataImageTest, AlterTopicConfigSetsAndDeletesInOrder) {
  register_brokers(1);
  CreateTopic create = topic_record("t", topic_id(1), {{0}});
  create.configs = {{"retention.ms", "1"}, {"segment.bytes", "2"}};
  applies(create);
  applies(AlterTopicConfig{TopicRef{"t", {}},
                           {{"retention.ms", std::nullopt}, {"cleanup.policy", "compact"}, {"segment.bytes", "3"},
                            {"cleanup.policy", "delete"}}});
  EXPECT_EQ(image_.topic("t")->configs,
            (std::map<std::string, std::string>{{"cleanup.policy", "delete"}, {"segment.bytes", "3"}}));
  applies(AlterTopicConfig{TopicRef{"t", {}}, {{"not.set", std::nullopt}}});  // deleting an absent override
  EXPECT_EQ(error_of(refused(AlterTopicConfig{TopicRef{"x", {}}, {{"a", "b"}}})), ErrorCode::kUnknownTopicOrPartition);
  EXPECT_EQ(error_of(refused(AlterTopicConfig{TopicRef{"t", {}}, {{"retention.ms", "5"}, {"", "b"}}})),
            ErrorCode::kInvalidConfig)
      << "all or nothing: the first change must not stay";
}

TEST_F(MetadataImageTest, CreatePartitionsContinuesTheNumberingWithTheTopicsReplicationFactor) {
  register_brokers(3);
  applies(topic_record("t", topic_id(1), {{0, 1}}));
  EXPECT_EQ(error_of(refused(CreatePartitions{TopicRef{"t", {}}, {}})), ErrorCode::kInvalidPartitions);
  EXPECT_EQ(error_of(refused(CreatePartitions{TopicRef{"t", {}}, {{2, {1, 2}}}})),
            ErrorCode::kInvalidReplicaAssignment)
      << "partition 1 comes next";
  EXPECT_EQ(error_of(refused(CreatePartitions{TopicRef{"t", {}}, {{1, {1, 2, 0}}}})),
            ErrorCode::kInvalidReplicaAssignment)
      << "replication factor 3 on a topic of 2";
  EXPECT_EQ(error_of(refused(CreatePartitions{TopicRef{"t", {}}, {{1, {1, 9}}}})),
            ErrorCode::kInvalidReplicaAssignment);
  EXPECT_EQ(error_of(refused(CreatePartitions{TopicRef{"u", {}}, {{1, {1, 2}}}})),
            ErrorCode::kUnknownTopicOrPartition);
  applies(CreatePartitions{TopicRef{"", topic_id(1)}, {{1, {1, 2}}, {2, {2, 0}}}});
  EXPECT_EQ(image_.topic("t")->partition_count(), 3);
  EXPECT_EQ(image_.topic("t")->partitions[2].replicas, (std::vector<int32_t>{2, 0}));
}

TEST_F(MetadataImageTest, RecordLeaderKeepsTheNewestEpochAndOneLeaderPerEpoch) {
  register_brokers(3);
  applies(topic_record("t", topic_id(1), {{0, 1}, {1, 2}}));
  applies(RecordLeader{TopicRef{"t", {}}, 0, 1, 4});
  EXPECT_EQ(image_.topic("t")->partitions[0].leader, 1);
  EXPECT_EQ(image_.topic("t")->partitions[0].leader_epoch, 4);
  applies(RecordLeader{TopicRef{"t", {}}, 0, 1, 4});  // reported twice
  EXPECT_EQ(error_of(refused(RecordLeader{TopicRef{"t", {}}, 0, 0, 3})), ErrorCode::kFencedLeaderEpoch);
  EXPECT_EQ(error_of(refused(RecordLeader{TopicRef{"t", {}}, 0, 0, 4})), ErrorCode::kFencedLeaderEpoch)
      << "epoch 4 already had leader 1";
  EXPECT_EQ(error_of(refused(RecordLeader{TopicRef{"t", {}}, 0, 2, 5})), ErrorCode::kInvalidRequest)
      << "node 2 is not a replica of t-0";
  EXPECT_EQ(error_of(refused(RecordLeader{TopicRef{"t", {}}, 2, 1, 5})), ErrorCode::kUnknownTopicOrPartition);
  EXPECT_EQ(error_of(refused(RecordLeader{TopicRef{"t", {}}, 0, 1, -2})), ErrorCode::kInvalidRequest);
  applies(RecordLeader{TopicRef{"t", {}}, 0, kNoLeader, 4});  // leadership lost within the epoch
  applies(RecordLeader{TopicRef{"t", {}}, 0, 0, 5});
  EXPECT_EQ(image_.topic("t")->partitions[0].leader, 0);
  EXPECT_EQ(image_.topic("t")->partitions[1].leader, kNoLeader) << "the other partition is untouched";
}

TEST_F(MetadataImageTest, ProducerIdBlocksStartAtZeroAndFollowOnPerNode) {
  register_brokers(2);
  Result<AllocateProducerIds> first = allocate_producer_ids(image_, 0);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(*first, (AllocateProducerIds{0, 0, kProducerIdBlockSize}));
  applies(*first);
  applies(*allocate_producer_ids(image_, 1));
  applies(*allocate_producer_ids(image_, 0, 10));
  EXPECT_EQ(image_.next_producer_id(), 2010);
  EXPECT_EQ(image_.producer_id_blocks().at(0), (ProducerIdBlock{0, 2000, 10}));
  EXPECT_EQ(image_.producer_id_blocks().at(1), (ProducerIdBlock{1, 1000, 1000}));
}

TEST_F(MetadataImageTest, TwoNodesAllocatingFromTheSameImageGetOneBlockEachAfterARetry) {
  register_brokers(2);
  const AllocateProducerIds from_node0 = *allocate_producer_ids(image_, 0);
  const AllocateProducerIds from_node1 = *allocate_producer_ids(image_, 1);  // the same, stale, image
  applies(from_node0);
  EXPECT_EQ(refused(from_node1).code(), Code::kAlreadyExists);
  applies(*allocate_producer_ids(image_, 1));
  EXPECT_EQ(image_.producer_id_blocks().at(1).first_producer_id, kProducerIdBlockSize);
}

TEST_F(MetadataImageTest, AnUnregisteredNodeOrAnEmptyBlockGetsNoProducerIds) {
  register_brokers(1);
  EXPECT_EQ(allocate_producer_ids(image_, 5).status().code(), Code::kNotFound);
  EXPECT_EQ(refused(AllocateProducerIds{5, 0, 1000}).code(), Code::kNotFound);
  EXPECT_EQ(error_of(refused(AllocateProducerIds{0, 0, 0})), ErrorCode::kInvalidRequest);
  EXPECT_EQ(error_of(refused(AllocateProducerIds{0, 0, -5})), ErrorCode::kInvalidRequest);
}

TEST_F(MetadataImageTest, ABatchAppliesEachRecordWithItsOwnOutcomeAtOneIndex) {
  register_brokers(1);
  Batch batch{{topic_record("a", topic_id(1), {{0}}), topic_record("a", topic_id(2), {{0}}),
               topic_record("b", topic_id(3), {{0}})}};
  const std::vector<Status> outcomes = image_.apply(100, batch);
  ASSERT_EQ(outcomes.size(), 3u);
  EXPECT_TRUE(outcomes[0].ok());
  EXPECT_EQ(error_of(outcomes[1]), ErrorCode::kTopicAlreadyExists);
  EXPECT_TRUE(outcomes[2].ok());
  EXPECT_EQ(image_.applied_index(), 100u);
  EXPECT_EQ(image_.topics().size(), 2u);
}

TEST_F(MetadataImageTest, AnEntryIsDecodedThenApplied) {
  const EntryOutcome registered = image_.apply_entry(1, encode_record(broker_record(0)));
  EXPECT_TRUE(registered.decode.ok());
  ASSERT_EQ(registered.records.size(), 1u);
  EXPECT_TRUE(registered.records[0].ok());
  EXPECT_NE(image_.broker(0), nullptr);
}

TEST_F(MetadataImageTest, ALeadersNoOpAndAnUndecodableEntryOnlyAdvanceTheIndex) {
  register_brokers(1);
  MetadataImage before = image_;
  const EntryOutcome noop = image_.apply_entry(50, "");
  EXPECT_TRUE(noop.decode.ok());
  EXPECT_TRUE(noop.records.empty());
  const EntryOutcome garbage = image_.apply_entry(51, "\x01garbage");
  EXPECT_EQ(garbage.decode.code(), Code::kCorruption);
  EXPECT_TRUE(garbage.records.empty());
  EXPECT_EQ(image_.applied_index(), 51u);
  before.apply(51, Batch{});
  EXPECT_EQ(image_, before);
}

// Each record below changes one kind of state; the image that skipped it (same applied index) must differ in both
// equality and digest.
TEST_F(MetadataImageTest, TheDigestCoversEveryKindOfState) {
  auto changes_digest = [this](const Record& record) {
    MetadataImage skipped = image_;
    const Index index = next_index();
    ASSERT_TRUE(image_.apply(index, record).ok()) << record_type_name(record_type(record));
    skipped.apply(index, Batch{});
    EXPECT_NE(image_, skipped);
    EXPECT_NE(image_.digest(), skipped.digest()) << record_type_name(record_type(record));
  };
  changes_digest(broker_record(0));
  changes_digest(broker_record(1));
  changes_digest(RegisterBroker{1, "elsewhere", 9092, std::nullopt, 2});
  changes_digest(RegisterBroker{1, "elsewhere", 9093, std::nullopt, 3});
  changes_digest(RegisterBroker{1, "elsewhere", 9093, "rack", 4});
  changes_digest(topic_record("t", topic_id(1), {{0, 1}}));
  changes_digest(AlterTopicConfig{TopicRef{"t", {}}, {{"a", "b"}}});
  changes_digest(AlterTopicConfig{TopicRef{"t", {}}, {{"a", "c"}}});
  changes_digest(CreatePartitions{TopicRef{"t", {}}, {{1, {1, 0}}}});
  changes_digest(RecordLeader{TopicRef{"t", {}}, 1, 1, 0});
  changes_digest(RecordLeader{TopicRef{"t", {}}, 1, 1, 1});
  changes_digest(RecordLeader{TopicRef{"t", {}}, 1, kNoLeader, 1});
  changes_digest(*allocate_producer_ids(image_, 1));
  changes_digest(*allocate_producer_ids(image_, 1, 5));
  changes_digest(DeleteTopic{TopicRef{"t", {}}});
  const uint64_t before = image_.digest();
  image_.apply(image_.applied_index() + 1, Batch{});
  EXPECT_NE(image_.digest(), before) << "the applied index is part of the image";
}

// Two histories that differ in one field of one record (or in the index of one entry) build images that differ,
// and so do their digests: every field the records carry reaches the digest.
TEST(MetadataImageDigest, HistoriesDifferingInOneFieldGiveDifferentDigests) {
  using Step = std::pair<Index, Record>;
  const std::vector<Step> base{
      {1, RegisterBroker{0, "h0", 9092, std::nullopt, 1}},
      {2, RegisterBroker{1, "h1", 9092, "r", 1}},
      {4, CreateTopic{"t", topic_id(1), {{"k", "v"}}, {{0, {0, 1}}, {1, {1, 0}}}}},
      {5, RecordLeader{TopicRef{"t", {}}, 0, 0, 3}},
      {6, AllocateProducerIds{1, 0, 1000}},
  };
  auto build = [](const std::vector<Step>& steps) {
    MetadataImage image;
    for (const auto& [index, record] : steps) EXPECT_TRUE(image.apply(index, record).ok());
    return image;
  };
  const MetadataImage reference = build(base);
  std::vector<std::function<void(std::vector<Step>&)>> variations{
      [](auto& s) { std::get<RegisterBroker>(s[0].second).host = "h9"; },
      [](auto& s) { std::get<RegisterBroker>(s[0].second).port = 9093; },
      [](auto& s) { std::get<RegisterBroker>(s[0].second).rack = "r"; },
      [](auto& s) { std::get<RegisterBroker>(s[1].second).rack = "q"; },
      [](auto& s) { std::get<RegisterBroker>(s[0].second).incarnation = 2; },
      [](auto& s) { s[1].first = 3; },  // broker 1's epoch
      [](auto& s) {
        std::get<CreateTopic>(s[2].second).name = "u";
        std::get<RecordLeader>(s[3].second).topic.name = "u";
      },
      [](auto& s) { std::get<CreateTopic>(s[2].second).topic_id = topic_id(2); },
      [](auto& s) { std::get<CreateTopic>(s[2].second).configs = {{"k", "w"}}; },
      [](auto& s) { std::get<CreateTopic>(s[2].second).configs = {{"j", "v"}}; },
      [](auto& s) { std::get<CreateTopic>(s[2].second).partitions[1].replicas = {0, 1}; },
      [](auto& s) { std::get<CreateTopic>(s[2].second).partitions.pop_back(); },
      [](auto& s) { std::get<RecordLeader>(s[3].second).leader = 1; },
      [](auto& s) { std::get<RecordLeader>(s[3].second).leader_epoch = 4; },
      [](auto& s) { std::get<AllocateProducerIds>(s[4].second).node_id = 0; },
      [](auto& s) { std::get<AllocateProducerIds>(s[4].second).count = 999; },
  };
  for (size_t v = 0; v < variations.size(); ++v) {
    std::vector<Step> steps = base;
    variations[v](steps);
    const MetadataImage varied = build(steps);
    EXPECT_EQ(varied.applied_index(), reference.applied_index()) << "variation " << v;
    EXPECT_NE(varied, reference) << "variation " << v;
    EXPECT_NE(varied.digest(), reference.digest()) << "variation " << v;
  }
}

TEST_F(MetadataImageTest, EqualImagesHaveEqualDigestsWhateverTheirHistoryOfRefusals) {
  register_brokers(2);
  const Index last = image_.applied_index() + 1;
  image_.apply(last, Batch{});
  MetadataImage other;
  for (const auto& [id, broker] : image_.brokers()) {
    ASSERT_TRUE(other.apply(broker.broker_epoch, broker_record(id)).ok());
  }
  EXPECT_EQ(other.apply(last, DeleteTopic{TopicRef{"nothing", {}}}).code(), Code::kNotFound);
  EXPECT_EQ(other, image_);
  EXPECT_EQ(other.digest(), image_.digest());
}

}  // namespace
}  // namespace sluice::cluster::metadata
