// The determinism rule, as properties: random histories of proposals (made from images that are often stale, so
// that many are refused) give the same outcomes and equal images, with equal digests, whether the entries are
// applied as records, as encoded payloads, or replayed again from index 1 as after a restart; refused entries
// change nothing but the applied index; and producer-id blocks never overlap however nodes race for them.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>

#include "core/cluster/metadata/image.h"
#include "core/cluster/metadata/placement.h"
#include "core/cluster/metadata/topic_identity.h"
#include "tests/core/cluster/metadata_test_util.h"

namespace sluice::cluster::metadata {
namespace {

// One proposal, interpreted against the proposer's (possibly stale) image: `kind` picks the record, the other
// fields its arguments.
struct Op {
  uint32_t kind = 0;
  uint32_t a = 0;
  uint32_t b = 0;
  uint32_t c = 0;
};

const std::vector<std::string> kNames{"orders", "payments", "a.b", "a_b", "x"};
const std::vector<std::string> kConfigs{"retention.ms", "cleanup.policy", "segment.bytes"};

std::vector<PartitionReplicas> any_replicas(const Op& op, int32_t first_partition, int32_t count) {
  std::vector<PartitionReplicas> partitions;
  for (int32_t i = 0; i < count; ++i) {
    // Node ids 0..6, of which only 0..5 can be registered: some of these name unknown brokers.
    partitions.push_back({first_partition + i, {static_cast<int32_t>((op.c + i) % 7)}});
  }
  return partitions;
}

TopicRef some_topic(const MetadataImage& image, const Op& op) {
  const std::string& name = kNames[op.b % kNames.size()];
  const TopicImage* topic = image.topic(name);
  switch (op.c % 3) {
    case 0: return TopicRef{name, {}};
    case 1: return TopicRef{"", topic ? topic->id : testing::topic_id(static_cast<uint8_t>(op.a))};
    default: return TopicRef{name, topic ? topic->id : TopicId{}};
  }
}

Record create_topic(const MetadataImage& image, const Op& op, Random& random) {
  CreateTopic r{kNames[op.b % kNames.size()], new_topic_id(random), {}, {}};
  if (op.a % 9 == 0 && !image.topics().empty()) r.topic_id = image.topics().begin()->second.id;  // a taken id
  if (op.a % 2 == 0) r.configs[kConfigs[op.c % kConfigs.size()]] = std::to_string(op.a % 100);
  const auto partitions = static_cast<int32_t>(op.c % 5);  // 0 is refused
  const auto replication_factor = static_cast<int16_t>(1 + op.a % 3);
  Result<ReplicaAssignment> placed = assign_replicas(image.broker_ids(), partitions, replication_factor, random);
  r.partitions = placed.ok() ? numbered_partitions(*placed, 0) : any_replicas(op, 0, partitions);
  return r;
}

Record create_partitions(const MetadataImage& image, const Op& op) {
  CreatePartitions r{some_topic(image, op), {}};
  const TopicImage* topic = image.topic(kNames[op.b % kNames.size()]);
  const auto added = static_cast<int32_t>(op.a % 3);
  if (topic == nullptr) {
    r.partitions = any_replicas(op, 0, added);
    return r;
  }
  Result<ReplicaAssignment> placed = assign_added_partitions(image.broker_ids(), *topic, added);
  r.partitions = placed.ok() ? numbered_partitions(*placed, topic->partition_count())
                             : any_replicas(op, topic->partition_count(), added);
  return r;
}

Record alter_topic_config(const MetadataImage& image, const Op& op) {
  AlterTopicConfig r{some_topic(image, op), {}};
  for (uint32_t i = 0; i < op.a % 4; ++i) {
    std::optional<std::string> value;
    if ((op.c >> i) % 2 == 0) value = std::to_string(op.a + i);
    r.changes.push_back(ConfigChange{kConfigs[(op.b + i) % kConfigs.size()], value});
  }
  return r;
}

Record allocate(const MetadataImage& image, const Op& op) {
  const auto node = static_cast<int32_t>(op.a % 7);
  Result<AllocateProducerIds> block = allocate_producer_ids(image, node, static_cast<int32_t>(1 + op.b % 2000));
  if (block.ok()) return *block;
  return AllocateProducerIds{node, image.next_producer_id(), 1000};
}

Record record_leader(const MetadataImage& image, const Op& op) {
  RecordLeader r{some_topic(image, op), static_cast<int32_t>(op.a % 4), kNoLeader, static_cast<int32_t>(op.c % 6)};
  const TopicImage* topic = image.topic(kNames[op.b % kNames.size()]);
  if (topic && r.partition < topic->partition_count() && op.b % 5 != 0) {
    const std::vector<int32_t>& replicas = topic->partitions[static_cast<size_t>(r.partition)].replicas;
    r.leader = replicas[op.c % replicas.size()];
  }
  return r;
}

Record proposal(const MetadataImage& image, const Op& op, Random& random) {
  switch (op.kind % 7) {
    case 0: {
      const auto node = static_cast<int32_t>(op.a % 6);
      std::optional<std::string> rack;
      if (op.c % 3 == 0) rack = "rack-" + std::to_string(node % 2);
      return RegisterBroker{node, "host-" + std::to_string(op.b % 2), 9092, rack, op.c % 4};
    }
    case 1: return create_topic(image, op, random);
    case 2: return DeleteTopic{some_topic(image, op)};
    case 3: return alter_topic_config(image, op);
    case 4: return create_partitions(image, op);
    case 5: return allocate(image, op);
    default: return record_leader(image, op);
  }
}

rc::Gen<Op> op_gen() {
  return rc::gen::build<Op>(rc::gen::set(&Op::kind, rc::gen::inRange<uint32_t>(0, 1000)),
                            rc::gen::set(&Op::a, rc::gen::inRange<uint32_t>(0, 1000)),
                            rc::gen::set(&Op::b, rc::gen::inRange<uint32_t>(0, 1000)),
                            rc::gen::set(&Op::c, rc::gen::inRange<uint32_t>(0, 1000)));
}

bool same_outcome(const Status& a, const Status& b) {
  return a.code() == b.code() && a.protocol_error() == b.protocol_error() && a.message() == b.message();
}

RC_GTEST_PROP(MetadataDeterminism, RecordsPayloadsAndReplaysBuildEqualImages, ()) {
  // Most histories start with some brokers registered, so that topics can be placed.
  std::vector<Op> ops;
  for (uint32_t node = *rc::gen::inRange<uint32_t>(0, 7); node > 0; --node) ops.push_back(Op{0, node - 1, 0, 1});
  const std::vector<Op> more = *rc::gen::container<std::vector<Op>>(*rc::gen::inRange<size_t>(1, 150), op_gen());
  ops.insert(ops.end(), more.begin(), more.end());
  Random random(*rc::gen::arbitrary<uint64_t>());
  MetadataImage by_records;
  MetadataImage by_payloads;
  std::vector<std::pair<Index, std::string>> log;
  Batch batch;
  // Every proposal of an entry is made from the image before the entry: a batch is as stale as it is long.
  MetadataImage proposer_view;
  Index index = 0;
  for (size_t i = 0; i < ops.size(); ++i) {
    if (batch.records.empty()) proposer_view = by_records;
    batch.records.push_back(proposal(proposer_view, ops[i], random));
    if (ops[i].kind % 3 != 0 && i + 1 != ops.size()) continue;  // the entry grows
    index += 1 + ops[i].a % 3;
    const MetadataImage before = by_records;
    const std::vector<Status> outcomes = by_records.apply(index, batch);
    const std::string payload = encode_batch(batch);
    const EntryOutcome entry = by_payloads.apply_entry(index, payload);
    RC_ASSERT(entry.decode.ok());
    RC_ASSERT(entry.records.size() == outcomes.size());
    for (size_t r = 0; r < outcomes.size(); ++r) RC_ASSERT(same_outcome(entry.records[r], outcomes[r]));
    if (std::none_of(outcomes.begin(), outcomes.end(), [](const Status& s) { return s.ok(); })) {
      MetadataImage unchanged = before;
      unchanged.apply(index, Batch{});
      RC_ASSERT(by_records == unchanged);
    }
    RC_ASSERT(by_records == by_payloads);
    RC_ASSERT(by_records.digest() == by_payloads.digest());
    log.emplace_back(index, payload);
    batch.records.clear();
  }
  RC_ASSERT(by_records.invariant_violation().empty());
  MetadataImage replayed;  // a restarted node applies the log again from its first entry
  for (const auto& [entry_index, payload] : log) replayed.apply_entry(entry_index, payload);
  RC_ASSERT(replayed == by_records);
  RC_ASSERT(replayed.digest() == by_records.digest());
}

// Nodes race for producer-id blocks from images of various staleness; the accepted blocks tile [0, next) without
// overlap, each node's latest block is recorded, and the refused ones say the block was taken.
RC_GTEST_PROP(MetadataDeterminism, ProducerIdBlocksNeverOverlap, ()) {
  MetadataImage image;
  Index index = 0;
  for (int32_t node = 0; node < 4; ++node) RC_ASSERT(image.apply(++index, testing::broker_record(node)).ok());
  std::vector<MetadataImage> views{image};  // images proposers may still hold
  std::vector<ProducerIdBlock> accepted;
  const auto rounds = *rc::gen::inRange<int>(1, 200);
  for (int round = 0; round < rounds; ++round) {
    const auto node = *rc::gen::inRange<int32_t>(0, 4);
    const MetadataImage& view = views[*rc::gen::inRange<size_t>(0, views.size())];
    const auto count = *rc::gen::element<int32_t>(1, 7, kProducerIdBlockSize);
    Result<AllocateProducerIds> block = allocate_producer_ids(view, node, count);
    RC_ASSERT(block.ok());
    const Status outcome = image.apply(++index, *block);
    if (outcome.ok()) {
      accepted.push_back(ProducerIdBlock{node, block->first_producer_id, count});
      RC_ASSERT(image.producer_id_blocks().at(node) == accepted.back());
    } else {
      RC_ASSERT(outcome.code() == Code::kAlreadyExists);
      RC_ASSERT(block->first_producer_id < image.next_producer_id());
    }
    views.push_back(image);
  }
  int64_t expected_first = 0;
  for (const ProducerIdBlock& block : accepted) {
    RC_ASSERT(block.first_producer_id == expected_first);
    expected_first = block.end();
  }
  RC_ASSERT(image.next_producer_id() == expected_first);
}

}  // namespace
}  // namespace sluice::cluster::metadata
