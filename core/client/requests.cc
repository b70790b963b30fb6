// Builders and readers for the connection, metadata, produce, fetch and offset requests (requests.h).
#include "core/client/requests.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <limits>

#include "core/client/errors.h"
#include "core/storage/record_batch.h"

namespace sluice::client {

using protocol::FetchRequest;
using protocol::FetchResponse;
using protocol::ListOffsetsRequest;
using protocol::ListOffsetsResponse;
using protocol::MetadataRequest;
using protocol::MetadataResponse;
using protocol::ProduceRequest;
using protocol::ProduceResponse;

namespace {

int32_t to_ms(Duration d) {
  const int64_t ms = std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
  return static_cast<int32_t>(std::clamp<int64_t>(ms, 0, std::numeric_limits<int32_t>::max()));
}

uint16_t to_port(int32_t port) {
  return port >= 0 && port <= std::numeric_limits<uint16_t>::max() ? static_cast<uint16_t>(port) : 0;
}

}  // namespace

// ---- Connection, metadata ----

protocol::ApiVersionsRequest api_versions_request() {
  protocol::ApiVersionsRequest request;
  request.client_software_name = kSoftwareName;
  request.client_software_version = kSoftwareVersion;
  return request;
}

MetadataRequest metadata_request(const std::vector<std::string>& topics, bool allow_auto_create) {
  MetadataRequest request;
  if (topics.empty()) {
    request.topics = std::nullopt;
  } else {
    request.topics.emplace();
    for (const std::string& name : topics) request.topics->push_back({.name = name});
  }
  request.allow_auto_topic_creation = allow_auto_create;
  return request;
}

ClusterInfo cluster_info(const MetadataResponse& response) {
  ClusterInfo info;
  info.cluster_id = response.cluster_id.value_or("");
  info.controller_id = response.controller_id;
  for (const MetadataResponse::Broker& broker : response.brokers) {
    info.brokers.push_back({broker.node_id, Address{broker.host, to_port(broker.port)}});
  }
  for (const MetadataResponse::Topic& topic : response.topics) {
    // A null name answers only a lookup by id (v12+), which this client never makes.
    const std::string name = topic.name.value_or("");
    TopicInfo& out = info.topics[name];
    out.name = name;
    out.error_code = topic.error_code;
    for (const MetadataResponse::Partition& p : topic.partitions) {
      out.partitions.push_back(
          {p.partition_index, p.error_code, p.leader_id, p.leader_epoch, p.replica_nodes, p.isr_nodes});
    }
    std::sort(out.partitions.begin(), out.partitions.end(),
              [](const PartitionInfo& a, const PartitionInfo& b) { return a.partition < b.partition; });
  }
  return info;
}

// ---- Produce ----

ProduceRequest produce_request(int16_t acks, int32_t timeout_ms, const std::vector<PartitionRecords>& data) {
  ProduceRequest request;
  request.acks = acks;
  request.timeout_ms = timeout_ms;
  for (const PartitionRecords& part : data) {
    auto topic = std::find_if(request.topic_data.begin(), request.topic_data.end(),
                              [&](const ProduceRequest::TopicData& t) { return t.name == part.tp.topic; });
    if (topic == request.topic_data.end()) {
      topic = request.topic_data.insert(request.topic_data.end(), ProduceRequest::TopicData{part.tp.topic, {}});
    }
    topic->partition_data.push_back({part.tp.partition, protocol::Records::view(part.records)});
  }
  return request;
}

ProduceRequest produce_request(int16_t acks, int32_t timeout_ms, const TopicPartitionId& tp, ByteView records) {
  ProduceRequest request;
  request.acks = acks;
  request.timeout_ms = timeout_ms;
  ProduceRequest::TopicData& topic = request.topic_data.emplace_back();
  topic.name = tp.topic;
  topic.partition_data.push_back({tp.partition, protocol::Records::view(records)});
  return request;
}

Result<ProduceResponse::PartitionResponse> produce_answer(const ProduceResponse& response, const TopicPartitionId& tp) {
  for (const ProduceResponse::TopicResponse& topic : response.responses) {
    if (topic.name != tp.topic) continue;
    for (const ProduceResponse::PartitionResponse& partition : topic.partition_responses) {
      if (partition.index == tp.partition) return partition;
    }
  }
  return corruption(fmt::format("the produce answer does not mention {}", tp.to_string()));
}

Result<Bytes> build_record_batch(const std::vector<ProducerRecord>& records, int64_t now_ms,
                                 const storage::BatchOptions& options) {
  std::vector<storage::RecordRef> batch;  // views: the keys and values are copied once, into the batch
  batch.reserve(records.size());
  for (size_t i = 0; i < records.size(); ++i) {
    storage::RecordRef& record = batch.emplace_back();
    record.offset = static_cast<int64_t>(i);
    record.timestamp = records[i].timestamp_ms >= 0 ? records[i].timestamp_ms : now_ms;
    if (records[i].key.has_value()) record.key = ByteView(*records[i].key);
    if (records[i].value.has_value()) record.value = ByteView(*records[i].value);
  }
  return storage::build_batch(batch, options);
}

protocol::InitProducerIdRequest init_producer_id_request(int64_t producer_id, int16_t producer_epoch) {
  protocol::InitProducerIdRequest request;
  request.transactional_id = std::nullopt;  // idempotent, not transactional
  request.transaction_timeout_ms = 60000;   // the Java producer's transaction.timeout.ms; unused without one
  request.producer_id = producer_id;
  request.producer_epoch = producer_epoch;
  return request;
}

// ---- Fetch and offsets ----

namespace {
FetchRequest consumer_fetch(const FetchOptions& options) {
  FetchRequest request;
  request.replica_id = -1;  // a consumer
  request.max_wait_ms = to_ms(options.max_wait);
  request.min_bytes = options.min_bytes;
  request.max_bytes = options.max_bytes;
  request.isolation_level = protocol::kReadUncommitted;
  request.session_id = 0;  // sessionless full fetches (FetchMetadata.LEGACY)
  request.session_epoch = -1;
  return request;
}
FetchRequest::Partition fetch_partition(int32_t partition, int64_t offset, const FetchOptions& options) {
  FetchRequest::Partition fetched;
  fetched.partition = partition;
  fetched.fetch_offset = offset;
  fetched.partition_max_bytes = options.max_bytes;
  return fetched;
}
}  // namespace

FetchRequest fetch_request(const TopicPartitionId& tp, int64_t offset, const FetchOptions& options) {
  FetchRequest request = consumer_fetch(options);
  request.topics.push_back({.topic = tp.topic, .partitions = {fetch_partition(tp.partition, offset, options)}});
  return request;
}

FetchRequest fetch_request(std::span<const FetchPosition> positions, const FetchOptions& options) {
  FetchRequest request = consumer_fetch(options);
  for (const FetchPosition& position : positions) {
    auto topic = std::find_if(request.topics.begin(), request.topics.end(),
                              [&](const FetchRequest::Topic& t) { return t.topic == position.tp.topic; });
    if (topic == request.topics.end()) {
      request.topics.push_back({.topic = position.tp.topic, .partitions = {}});
      topic = request.topics.end() - 1;
      topic->partitions.reserve(positions.size());  // one allocation, not one per doubling
    }
    topic->partitions.push_back(fetch_partition(position.tp.partition, position.offset, options));
  }
  return request;
}

namespace {
// A record takes at least this many bytes in a batch (length, attributes, deltas, key and value lengths, headers).
constexpr size_t kMinFetchedRecordBytes = 7;
}  // namespace

Status decode_fetched_records(ByteView records, int64_t offset, std::vector<FetchedRecordView>* out,
                              std::vector<Bytes>* decompressed, int64_t* next_offset) {
  // Batch by batch, without a vector of them (storage::for_each_batch walks as split_batches does).
  return storage::for_each_batch(records, nullptr, [&](const storage::BatchSpan& span) -> Status {
    const storage::BatchHeader& header = span.header;
    const ByteView batch = records.subspan(span.position, header.size_bytes());
    if (!storage::batch_crc_ok(batch, header)) {
      return corruption(fmt::format("the fetched batch at offset {} fails its CRC", header.base_offset));
    }
    if (next_offset != nullptr && header.last_offset() >= offset) {
      *next_offset = std::max(*next_offset, header.last_offset() + 1);
    }
    if (header.control() || header.last_offset() < offset) return Status();
    // Straight into the answer, without a storage::Record (headers and all) per record first.
    const size_t before = out->size();
    // Room for the batch's records at once (the count bounded by what its bytes can hold), growing geometrically.
    const size_t needed = before + std::min<size_t>(static_cast<size_t>(std::max(header.record_count, 0)),
                                                    batch.size() / kMinFetchedRecordBytes);
    if (needed > out->capacity()) out->reserve(std::max(needed, 2 * out->capacity()));
    Bytes storage;
    const Status decoded = storage::for_each_record(
        batch, header,
        [&](const storage::DecodedRecord& record) {
          if (record.offset < offset) return;  // the batch starts below the offset asked for
          SLUICE_ASSERT(out->empty() || out->back().offset < record.offset);
          out->push_back({.offset = record.offset,
                          .timestamp = record.timestamp,
                          .batch_max_timestamp = header.max_timestamp,
                          .batch_leader_epoch = header.partition_leader_epoch,
                          .key = record.key,
                          .value = record.value});
        },
        &storage);
    if (!decoded.ok()) out->resize(before);  // none of a batch that does not decode whole
    // A moved vector keeps its buffer: the views into it stay valid in `decompressed`.
    if (decoded.ok() && !storage.empty()) decompressed->push_back(std::move(storage));
    return decoded;
  });
}

namespace {

FetchedRecord owned_record(const FetchedRecordView& view) {
  FetchedRecord record;
  record.offset = view.offset;
  record.timestamp = view.timestamp;
  record.batch_max_timestamp = view.batch_max_timestamp;
  record.batch_leader_epoch = view.batch_leader_epoch;
  if (view.key) record.key.emplace(view.key->begin(), view.key->end());
  if (view.value) record.value.emplace(view.value->begin(), view.value->end());
  return record;
}

void append_owned(const std::vector<FetchedRecordView>& views, std::vector<FetchedRecord>* out) {
  out->reserve(out->size() + views.size());
  for (const FetchedRecordView& view : views) out->push_back(owned_record(view));
}

}  // namespace

Status decode_fetched_records(ByteView records, int64_t offset, std::vector<FetchedRecord>* out, int64_t* next_offset) {
  std::vector<FetchedRecordView> views;
  std::vector<Bytes> decompressed;
  const Status decoded = decode_fetched_records(records, offset, &views, &decompressed, next_offset);
  append_owned(views, out);
  return decoded;
}

FetchResult owned_fetch_result(const FetchView& view) {
  FetchResult result;
  result.error_code = view.error_code;
  result.high_watermark = view.high_watermark;
  result.log_start_offset = view.log_start_offset;
  result.next_offset = view.next_offset;
  append_owned(view.records, &result.records);
  return result;
}

void detail::own_records(FetchResponse& response) {
  for (FetchResponse::Topic& topic : response.responses) {
    for (FetchResponse::Partition& partition : topic.partitions) {
      if (partition.records.is_null()) continue;
      const ByteView bytes = partition.records.bytes();
      partition.records = protocol::Records::own(Bytes(bytes.begin(), bytes.end()));
    }
  }
}

Result<FetchView> read_fetch_partition(const FetchResponse& response, const TopicPartitionId& tp, int64_t offset) {
  if (response.error_code != 0) return broker_error(response.error_code, "fetch " + tp.to_string());
  for (const FetchResponse::Topic& topic : response.responses) {
    if (topic.topic != tp.topic) continue;
    for (const FetchResponse::Partition& partition : topic.partitions) {
      if (partition.partition_index != tp.partition) continue;
      FetchView result;
      result.error_code = partition.error_code;
      result.high_watermark = partition.high_watermark;
      result.log_start_offset = partition.log_start_offset;
      if (partition.error_code == 0) {
        SLUICE_TRY(decode_fetched_records(partition.records.bytes(), offset, &result.records, &result.decompressed,
                                          &result.next_offset));
      }
      return result;
    }
  }
  return corruption(fmt::format("the fetch answer does not mention {}", tp.to_string()));
}

Result<FetchView> read_fetch(const FetchResponse& response, Bytes answer, const TopicPartitionId& tp, int64_t offset) {
  SLUICE_ASSIGN_OR_RETURN(FetchView result, read_fetch_partition(response, tp, offset));
  result.answer = std::move(answer);  // a move: the records' views still point into its buffer
  return result;
}

ListOffsetsRequest list_offsets_request(const TopicPartitionId& tp, int64_t timestamp) {
  ListOffsetsRequest request;
  request.replica_id = -1;
  request.isolation_level = protocol::kReadUncommitted;
  ListOffsetsRequest::Partition partition;
  partition.partition_index = tp.partition;
  partition.timestamp = timestamp;
  request.topics.push_back({tp.topic, {partition}});
  return request;
}

Result<ListOffsetsResponse::Partition> list_offsets_answer(const ListOffsetsResponse& response,
                                                           const TopicPartitionId& tp) {
  for (const ListOffsetsResponse::Topic& topic : response.topics) {
    if (topic.name != tp.topic) continue;
    for (const ListOffsetsResponse::Partition& partition : topic.partitions) {
      if (partition.partition_index == tp.partition) return partition;
    }
  }
  return corruption(fmt::format("the list-offsets answer does not mention {}", tp.to_string()));
}

}  // namespace sluice::client
