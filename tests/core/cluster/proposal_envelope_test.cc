// The metadata proposals' envelope and the rule that applies only the first copy of each (proposal_envelope.h), and
// the partitions' raft group ids (raft_groups.h).
#include "core/cluster/proposal_envelope.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "core/cluster/metadata/records.h"
#include "core/cluster/raft_groups.h"
#include "core/env/random.h"

namespace sluice::cluster {
namespace {

TEST(ProposalEnvelope, RoundTripsAndIsToldApartFromAMetadataBatch) {
  const std::string batch = metadata::encode_record(metadata::RegisterBroker{1, "n1", 9092, std::nullopt, 3});
  EXPECT_FALSE(is_envelope(batch));
  EXPECT_FALSE(is_envelope(""));
  const ProposalId id{7, 3, 42};
  const std::string payload = encode_envelope(id, batch);
  ASSERT_TRUE(is_envelope(payload));
  EXPECT_EQ(payload.size(), kEnvelopeHeaderBytes + batch.size());
  Result<ProposalEnvelope> decoded = decode_envelope(payload);
  ASSERT_TRUE(decoded.ok()) << decoded.status().to_string();
  EXPECT_EQ(decoded->id, id);
  EXPECT_EQ(decoded->batch, batch);
}

TEST(ProposalEnvelope, TruncationsAndZeroIdsAreRefused) {
  const std::string payload = encode_envelope(ProposalId{1, 1, 1}, "x");
  for (size_t n = 0; n < payload.size(); ++n) {
    EXPECT_FALSE(decode_envelope(payload.substr(0, n)).ok()) << n;
  }
  for (size_t field = 0; field < 3; ++field) {
    std::string zero = payload;
    for (size_t i = 0; i < 8; ++i) zero[1 + 8 * field + i] = '\0';
    EXPECT_EQ(decode_envelope(zero).status().code(), Code::kCorruption) << field;
  }
}

TEST(ProposalFilter, AdmitsTheFirstCopyOnlyAndNothingBehindALaterProposalOfTheSameNode) {
  ProposalFilter filter;
  EXPECT_TRUE(filter.admit({1, 1, 1}));
  EXPECT_FALSE(filter.admit({1, 1, 1})) << "a copy";
  EXPECT_TRUE(filter.admit({2, 1, 1})) << "another node's ids are its own";
  EXPECT_TRUE(filter.admit({1, 1, 3}));
  EXPECT_FALSE(filter.admit({1, 1, 2})) << "a straggler behind a later proposal";
  EXPECT_TRUE(filter.admit({1, 2, 1})) << "a restart's incarnation is above every earlier sequence";
  EXPECT_FALSE(filter.admit({1, 1, 9})) << "the previous incarnation's proposals never apply after it";
  EXPECT_EQ(filter.last(1), std::make_pair(uint64_t{2}, uint64_t{1}));
  EXPECT_EQ(filter.last(5), std::make_pair(uint64_t{0}, uint64_t{0}));
}

TEST(RaftGroups, PartitionGroupIdsAreFixedNonZeroAndDistinct) {
  metadata::TopicId topic;
  for (size_t i = 0; i < topic.bytes.size(); ++i) topic.bytes[i] = static_cast<uint8_t>(i + 1);
  // The formula is a format: these values must never change.
  EXPECT_EQ(partition_group_id(topic, 0), partition_group_id(topic, 0));
  const raft::GroupId pinned0 = partition_group_id(topic, 0);
  const raft::GroupId pinned7 = partition_group_id(topic, 7);
  EXPECT_EQ(pinned0, 0x1791947e3c7a31aeULL);  // from an independent computation of the formula
  EXPECT_EQ(pinned7, 0x19ee2c81bc9bdaa5ULL);
  Random rng(5);
  std::set<raft::GroupId> seen;
  for (int t = 0; t < 200; ++t) {
    metadata::TopicId id;
    for (uint8_t& b : id.bytes) b = static_cast<uint8_t>(rng.uniform(256));
    if (id.is_zero()) continue;
    for (int32_t p = 0; p < 50; ++p) {
      const raft::GroupId g = partition_group_id(id, p);
      EXPECT_NE(g, kMetadataGroup);
      EXPECT_TRUE(seen.insert(g).second) << "a collision among 10000 partitions";
    }
  }
}

}  // namespace
}  // namespace sluice::cluster
