#include "core/client/consumer_protocol.h"

#include <algorithm>
#include <set>

#include "core/protocol/wire.h"

namespace sluice::client {

using protocol::Reader;
using protocol::Writer;

namespace {

constexpr int16_t kWrittenVersion = 0;
constexpr bool kClassic = false;  // these blobs never use the compact encodings

Status finish(const Reader& reader, std::string_view what) {
  if (reader.ok()) return Status();
  return corruption(std::string(what) + ": " + reader.status().message());
}

}  // namespace

Bytes encode_subscription(const std::vector<std::string>& topics) {
  Bytes out;
  Writer writer(&out);
  writer.put_int16(kWrittenVersion);
  writer.put_array_length("topics", topics.size(), kClassic);
  for (const std::string& topic : topics) writer.put_string("topic", topic, kClassic);
  writer.put_null(kClassic, /*wide=*/true);  // user_data
  SLUICE_ASSERT(writer.ok());                // topic names are bounded far below the string limit
  writer.finish();
  return out;
}

Result<std::vector<std::string>> decode_subscription(ByteView bytes) {
  Reader reader(bytes);
  const int16_t version = reader.read_int16("version");
  if (reader.ok() && version < 0) reader.fail("version", "negative");
  const int32_t count = reader.read_array_length("topics", kClassic);
  std::vector<std::string> topics;
  for (int32_t i = 0; i < count && reader.ok(); ++i) topics.push_back(reader.read_string("topic", kClassic));
  SLUICE_TRY(finish(reader, "consumer subscription"));
  return topics;
}

Bytes encode_assignment(const std::vector<TopicPartitionId>& partitions) {
  std::map<std::string, std::vector<int32_t>> by_topic;
  for (const TopicPartitionId& tp : partitions) by_topic[tp.topic].push_back(tp.partition);
  Bytes out;
  Writer writer(&out);
  writer.put_int16(kWrittenVersion);
  writer.put_array_length("assigned_partitions", by_topic.size(), kClassic);
  for (const auto& [topic, indexes] : by_topic) {
    writer.put_string("topic", topic, kClassic);
    writer.put_array_length("partitions", indexes.size(), kClassic);
    for (int32_t index : indexes) writer.put_int32(index);
  }
  writer.put_null(kClassic, /*wide=*/true);  // user_data
  SLUICE_ASSERT(writer.ok());
  writer.finish();
  return out;
}

Result<std::vector<TopicPartitionId>> decode_assignment(ByteView bytes) {
  std::vector<TopicPartitionId> partitions;
  if (bytes.empty()) return partitions;
  Reader reader(bytes);
  const int16_t version = reader.read_int16("version");
  if (reader.ok() && version < 0) reader.fail("version", "negative");
  const int32_t topics = reader.read_array_length("assigned_partitions", kClassic);
  for (int32_t t = 0; t < topics && reader.ok(); ++t) {
    const std::string topic = reader.read_string("topic", kClassic);
    const int32_t count = reader.read_array_length("partitions", kClassic);
    for (int32_t i = 0; i < count && reader.ok(); ++i) partitions.push_back({topic, reader.read_int32("partition")});
  }
  SLUICE_TRY(finish(reader, "consumer assignment"));
  std::sort(partitions.begin(), partitions.end());
  return partitions;
}

std::map<std::string, std::vector<TopicPartitionId>> range_assign(
    const std::map<std::string, std::vector<std::string>>& subscriptions,
    const std::map<std::string, int32_t>& partition_counts) {
  std::map<std::string, std::vector<TopicPartitionId>> assignment;
  std::map<std::string, std::vector<std::string>> members_by_topic;  // members in member-id order (map order)
  for (const auto& [member, topics] : subscriptions) {
    assignment[member];
    for (const std::string& topic : std::set<std::string>(topics.begin(), topics.end())) {
      members_by_topic[topic].push_back(member);
    }
  }
  for (const auto& [topic, members] : members_by_topic) {
    auto count = partition_counts.find(topic);
    if (count == partition_counts.end()) continue;
    const int32_t partitions = count->second;
    const int32_t share = partitions / static_cast<int32_t>(members.size());
    const int32_t extra = partitions % static_cast<int32_t>(members.size());
    int32_t next = 0;
    for (size_t i = 0; i < members.size(); ++i) {
      const int32_t take = share + (static_cast<int32_t>(i) < extra ? 1 : 0);
      for (int32_t p = next; p < next + take; ++p) assignment[members[i]].push_back({topic, p});
      next += take;
    }
    SLUICE_ASSERT(next == partitions);
  }
  return assignment;
}

}  // namespace sluice::client
