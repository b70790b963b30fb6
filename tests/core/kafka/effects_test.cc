// Declared effects through the broker's one boot path (NodeOptions::effects): the partitions CreateTopics makes,
// and the removals DeleteRecords and DeleteTopics make, reported before the client hears of them.
#include <gtest/gtest.h>

#include "core/protocol/messages/delete_records.h"
#include "core/protocol/messages/delete_topics.h"
#include "core/storage/effects.h"
#include "tests/core/kafka/admin_test_util.h"

namespace sluice::kafka {
namespace {

using namespace testing;
using Kind = storage::LogEffect::Kind;

// Every effect, and whether the client had its answer when each came.
class RecordingSink final : public storage::EffectSink {
 public:
  void record(const storage::LogEffect& effect) override {
    effects.push_back(effect);
    answered_before.push_back(answered);
  }
  std::vector<storage::LogEffect> effects;
  std::vector<bool> answered_before;
  bool answered = false;  // the test sets it once the answer it waits for arrived
};

TEST(KafkaEffects, CreateTopicsDeleteRecordsAndDeleteTopicsAreDeclaredBeforeTheyAreAnswered) {
  BrokerHarness harness;
  RecordingSink sink;
  harness.set_effects(&sink);
  ASSERT_TRUE(harness.run([&](Env, KafkaClient& client, Broker& broker) {
    create_topic(client, "t", 2);
    ASSERT_EQ(sink.effects.size(), 2u);
    for (int32_t p = 0; p < 2; ++p) {
      EXPECT_EQ(sink.effects[p].kind, Kind::kPartitionCreated);
      EXPECT_EQ(sink.effects[p].tp, (storage::TopicPartition{"t", p}));
    }
    append_records(broker, {"t", 0}, 6);
    protocol::DeleteRecordsRequest trim;
    trim.topics.push_back({"t", {{0, 4}}});
    auto trimmed = client.call<protocol::DeleteRecordsResponse>(trim, 2);
    ASSERT_TRUE(trimmed.ok()) << trimmed.status().to_string();
    sink.answered = true;
    ASSERT_EQ(sink.effects.size(), 3u);
    EXPECT_EQ(sink.effects[2].kind, Kind::kLogStartAdvanced);
    EXPECT_EQ(sink.effects[2].reason, storage::LogEffect::Reason::kDeleteRecords);
    EXPECT_EQ(sink.effects[2].tp, (storage::TopicPartition{"t", 0}));
    EXPECT_EQ(sink.effects[2].from, 0);
    EXPECT_EQ(sink.effects[2].to, 4);
    EXPECT_FALSE(sink.answered_before[2]);
    sink.answered = false;
    protocol::DeleteTopicsRequest drop;
    drop.topic_names = {"t"};
    auto dropped = client.call<protocol::DeleteTopicsResponse>(drop, 3);
    ASSERT_TRUE(dropped.ok()) << dropped.status().to_string();
    sink.answered = true;
    ASSERT_EQ(sink.effects.size(), 5u);
    for (size_t i = 3; i < 5; ++i) {
      EXPECT_EQ(sink.effects[i].kind, Kind::kPartitionDeleted);
      EXPECT_FALSE(sink.answered_before[i]);
    }
    EXPECT_EQ(sink.effects[3].tp, (storage::TopicPartition{"t", 0}));
    EXPECT_EQ(sink.effects[3].from, 4);
    EXPECT_EQ(sink.effects[3].to, 6);
    EXPECT_EQ(sink.effects[4].tp, (storage::TopicPartition{"t", 1}));
  }));
}

}  // namespace
}  // namespace sluice::kafka
