#include "core/cluster/metadata/records.h"

#include <fmt/format.h>

#include <type_traits>

#include "core/base/assert.h"
#include "core/base/big_endian.h"

namespace sluice::cluster::metadata {
namespace {

template <typename T, RecordType type>
constexpr bool holds_at = std::is_same_v<std::variant_alternative_t<static_cast<size_t>(type) - 1, Record>, T>;
static_assert(holds_at<RegisterBroker, RecordType::kRegisterBroker>);
static_assert(holds_at<CreateTopic, RecordType::kCreateTopic>);
static_assert(holds_at<DeleteTopic, RecordType::kDeleteTopic>);
static_assert(holds_at<AlterTopicConfig, RecordType::kAlterTopicConfig>);
static_assert(holds_at<CreatePartitions, RecordType::kCreatePartitions>);
static_assert(holds_at<AllocateProducerIds, RecordType::kAllocateProducerIds>);
static_assert(holds_at<RecordLeader, RecordType::kRecordLeader>);
static_assert(std::variant_size_v<Record> == kMaxRecordType);

// Bytes before a record's body: type, version, body length.
constexpr size_t kRecordHeaderBytes = 1 + 1 + 4;

class Writer {
 public:
  explicit Writer(std::string& out) : out_(out) {}

  template <typename T>
  void fixed(T value) {
    static_assert(std::is_integral_v<T>);
    uint8_t bytes[sizeof(T)];
    store_be(bytes, value);
    out_.append(reinterpret_cast<const char*>(bytes), sizeof(T));
  }
  void count(size_t n) {
    SLUICE_ASSERT(n <= UINT32_MAX);
    fixed(static_cast<uint32_t>(n));
  }
  void string(std::string_view s) {
    count(s.size());
    out_.append(s);
  }
  void optional_string(const std::optional<std::string>& s) {
    fixed<uint8_t>(s.has_value() ? 1 : 0);
    if (s) string(*s);
  }
  void uuid(const TopicId& id) { out_.append(reinterpret_cast<const char*>(id.bytes.data()), id.bytes.size()); }
  void topic(const TopicRef& ref) {
    string(ref.name);
    uuid(ref.id);
  }
  void partitions(const std::vector<PartitionReplicas>& partitions) {
    count(partitions.size());
    for (const PartitionReplicas& p : partitions) {
      fixed(p.partition);
      count(p.replicas.size());
      for (int32_t replica : p.replicas) fixed(replica);
    }
  }

 private:
  std::string& out_;
};

void encode_body(const RegisterBroker& r, Writer& w) {
  w.fixed(r.node_id);
  w.string(r.host);
  w.fixed(r.port);
  w.optional_string(r.rack);
  w.fixed(r.incarnation);
}

void encode_body(const CreateTopic& r, Writer& w) {
  w.string(r.name);
  w.uuid(r.topic_id);
  w.count(r.configs.size());
  for (const auto& [name, value] : r.configs) {
    w.string(name);
    w.string(value);
  }
  w.partitions(r.partitions);
}

void encode_body(const DeleteTopic& r, Writer& w) { w.topic(r.topic); }

void encode_body(const AlterTopicConfig& r, Writer& w) {
  w.topic(r.topic);
  w.count(r.changes.size());
  for (const ConfigChange& change : r.changes) {
    w.string(change.name);
    w.optional_string(change.value);
  }
}

void encode_body(const CreatePartitions& r, Writer& w) {
  w.topic(r.topic);
  w.partitions(r.partitions);
}

void encode_body(const AllocateProducerIds& r, Writer& w) {
  w.fixed(r.node_id);
  w.fixed(r.first_producer_id);
  w.fixed(r.count);
}

void encode_body(const RecordLeader& r, Writer& w) {
  w.topic(r.topic);
  w.fixed(r.partition);
  w.fixed(r.leader);
  w.fixed(r.leader_epoch);
}

void encode_one(const Record& record, std::string& out) {
  Writer w(out);
  w.fixed(static_cast<uint8_t>(record_type(record)));
  w.fixed(kRecordVersion);
  const size_t length_at = out.size();
  w.fixed<uint32_t>(0);  // the body length, patched below
  const size_t body_at = out.size();
  std::visit([&w](const auto& r) { encode_body(r, w); }, record);
  const size_t body_length = out.size() - body_at;
  SLUICE_ASSERT(body_length <= UINT32_MAX);
  store_be(reinterpret_cast<uint8_t*>(out.data() + length_at), static_cast<uint32_t>(body_length));
}

// A bounds-checked cursor over untrusted bytes. Sticky: the first failure is kept, later reads return zeros and
// empties, and the caller checks status() once (core/protocol/wire.h's manner). `context` names what is read in
// failure messages.
class Reader {
 public:
  Reader(std::string_view in, std::string context) : in_(in), context_(std::move(context)) {}

  template <typename T>
  T fixed(std::string_view field) {
    static_assert(std::is_integral_v<T>);
    if (!take(sizeof(T), field)) return T{};
    const T value = load_be<T>(reinterpret_cast<const uint8_t*>(in_.data() + at_));
    at_ += sizeof(T);
    return value;
  }
  // A count of elements that take at least `min_element_bytes` each: more than the bytes left could hold is a
  // corruption, which is also what keeps a forged count from reserving memory the input does not pay for.
  size_t count(std::string_view field, size_t min_element_bytes) {
    const uint32_t n = fixed<uint32_t>(field);
    if (!ok()) return 0;
    if (static_cast<uint64_t>(n) * min_element_bytes > remaining()) {
      fail(fmt::format("{}: count {} exceeds the {} bytes left", field, n, remaining()));
      return 0;
    }
    return n;
  }
  // The next `n` bytes, as a view into the input.
  std::string_view bytes(size_t n, std::string_view field) {
    if (!take(n, field)) return {};
    const std::string_view view = in_.substr(at_, n);
    at_ += n;
    return view;
  }
  std::string string(std::string_view field) { return std::string(bytes(count(field, 1), field)); }
  bool flag(std::string_view field) {
    const uint8_t byte = fixed<uint8_t>(field);
    if (byte > 1) fail(fmt::format("{}: flag byte {} is neither 0 nor 1", field, byte));
    return byte == 1;
  }
  std::optional<std::string> optional_string(std::string_view field) {
    if (!flag(field)) return std::nullopt;
    return string(field);
  }
  TopicId uuid(std::string_view field) {
    TopicId id;
    if (!take(id.bytes.size(), field)) return id;
    for (uint8_t& byte : id.bytes) byte = static_cast<uint8_t>(in_[at_++]);
    return id;
  }
  TopicRef topic() {
    TopicRef ref;
    ref.name = string("topic name");
    ref.id = uuid("topic id");
    return ref;
  }
  std::vector<PartitionReplicas> partitions() {
    std::vector<PartitionReplicas> partitions(count("partitions", 8));
    for (PartitionReplicas& p : partitions) {
      p.partition = fixed<int32_t>("partition");
      p.replicas.resize(count("replicas", 4));
      for (int32_t& replica : p.replicas) replica = fixed<int32_t>("replica");
    }
    return partitions;
  }

  void fail(std::string message) {
    if (status_.ok()) status_ = corruption(fmt::format("{}, byte {}: {}", context_, at_, message));
  }
  void fail_with(Status status) {
    if (status_.ok()) status_ = std::move(status);
  }
  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }
  size_t remaining() const { return in_.size() - at_; }
  size_t position() const { return at_; }

 private:
  bool take(size_t n, std::string_view field) {
    if (!ok()) return false;
    if (n > remaining()) {
      fail(fmt::format("{}: needs {} bytes, {} left", field, n, remaining()));
      return false;
    }
    return true;
  }

  std::string_view in_;
  std::string context_;
  size_t at_ = 0;
  Status status_;
};

RegisterBroker decode_register_broker(Reader& r) {
  RegisterBroker record;
  record.node_id = r.fixed<int32_t>("node id");
  record.host = r.string("host");
  record.port = r.fixed<int32_t>("port");
  record.rack = r.optional_string("rack");
  record.incarnation = r.fixed<uint64_t>("incarnation");
  return record;
}

CreateTopic decode_create_topic(Reader& r) {
  CreateTopic record;
  record.name = r.string("topic name");
  record.topic_id = r.uuid("topic id");
  const size_t configs = r.count("configs", 8);
  for (size_t i = 0; i < configs && r.ok(); ++i) {
    std::string name = r.string("config name");
    std::string value = r.string("config value");
    // Strictly increasing names: one encoding per map, and no duplicate silently dropped.
    if (r.ok() && !record.configs.empty() && name <= record.configs.rbegin()->first) {
      r.fail(fmt::format("config '{}' is out of order", name));
    }
    record.configs.emplace(std::move(name), std::move(value));
  }
  record.partitions = r.partitions();
  return record;
}

AlterTopicConfig decode_alter_topic_config(Reader& r) {
  AlterTopicConfig record;
  record.topic = r.topic();
  record.changes.resize(r.count("config changes", 5));
  for (ConfigChange& change : record.changes) {
    change.name = r.string("config name");
    change.value = r.optional_string("config value");
  }
  return record;
}

AllocateProducerIds decode_allocate_producer_ids(Reader& r) {
  AllocateProducerIds record;
  record.node_id = r.fixed<int32_t>("node id");
  record.first_producer_id = r.fixed<int64_t>("first producer id");
  record.count = r.fixed<int32_t>("count");
  return record;
}

RecordLeader decode_record_leader(Reader& r) {
  RecordLeader record;
  record.topic = r.topic();
  record.partition = r.fixed<int32_t>("partition");
  record.leader = r.fixed<int32_t>("leader");
  record.leader_epoch = r.fixed<int32_t>("leader epoch");
  return record;
}

Record decode_body(RecordType type, Reader& r) {
  switch (type) {
    case RecordType::kRegisterBroker: return decode_register_broker(r);
    case RecordType::kCreateTopic: return decode_create_topic(r);
    case RecordType::kDeleteTopic: return DeleteTopic{r.topic()};
    case RecordType::kAlterTopicConfig: return decode_alter_topic_config(r);
    case RecordType::kCreatePartitions: {
      CreatePartitions record;
      record.topic = r.topic();
      record.partitions = r.partitions();
      return record;
    }
    case RecordType::kAllocateProducerIds: return decode_allocate_producer_ids(r);
    case RecordType::kRecordLeader: return decode_record_leader(r);
  }
  SLUICE_UNREACHABLE();  // the caller checked the type's range
}

// One record from the batch reader's position; its body is decoded by a reader of its own, which must use it up.
std::optional<Record> decode_one(Reader& batch) {
  const uint8_t type = batch.fixed<uint8_t>("record type");
  const uint8_t version = batch.fixed<uint8_t>("record version");
  const uint32_t length = batch.fixed<uint32_t>("record length");
  if (!batch.ok()) return std::nullopt;
  if (type == 0 || type > kMaxRecordType) {
    batch.fail(fmt::format("unknown record type {}", type));
    return std::nullopt;
  }
  const auto record_type = static_cast<RecordType>(type);
  if (version != kRecordVersion) {
    batch.fail_with(Status(Code::kNotSupported, fmt::format("metadata batch: {} record version {} is newer than "
                                                            "this build's {}", record_type_name(record_type), version,
                                                            kRecordVersion)));
    return std::nullopt;
  }
  if (length > batch.remaining()) {
    batch.fail(fmt::format("record length {} exceeds the {} bytes left", length, batch.remaining()));
    return std::nullopt;
  }
  const size_t body_at = batch.position();
  Reader r(batch.bytes(length, "record body"),
           fmt::format("metadata batch: {} record body at byte {}", record_type_name(record_type), body_at));
  Record record = decode_body(record_type, r);
  if (r.ok() && r.remaining() != 0) r.fail(fmt::format("{} trailing bytes", r.remaining()));
  if (!r.ok()) {
    batch.fail_with(r.status());
    return std::nullopt;
  }
  return record;
}

}  // namespace

RecordType record_type(const Record& record) {
  SLUICE_ASSERT(!record.valueless_by_exception());
  return static_cast<RecordType>(record.index() + 1);
}

std::string_view record_type_name(RecordType type) {
  switch (type) {
    case RecordType::kRegisterBroker: return "RegisterBroker";
    case RecordType::kCreateTopic: return "CreateTopic";
    case RecordType::kDeleteTopic: return "DeleteTopic";
    case RecordType::kAlterTopicConfig: return "AlterTopicConfig";
    case RecordType::kCreatePartitions: return "CreatePartitions";
    case RecordType::kAllocateProducerIds: return "AllocateProducerIds";
    case RecordType::kRecordLeader: return "RecordLeader";
  }
  return "unknown";
}

std::string encode_batch(const Batch& batch) {
  std::string out;
  Writer w(out);
  w.fixed(kBatchFormat);
  w.count(batch.records.size());
  for (const Record& record : batch.records) encode_one(record, out);
  SLUICE_ASSERT(!out.empty());
  return out;
}

std::string encode_record(const Record& record) { return encode_batch(Batch{{record}}); }

Result<Batch> decode_batch(std::string_view payload) {
  Reader r(payload, "metadata batch");
  const uint8_t format = r.fixed<uint8_t>("batch format");
  if (r.ok() && format != kBatchFormat) {
    return Status(Code::kNotSupported, fmt::format("metadata batch format {} is not this build's {}", format,
                                                   kBatchFormat));
  }
  const size_t records = r.count("records", kRecordHeaderBytes);
  Batch batch;
  batch.records.reserve(records);
  for (size_t i = 0; i < records && r.ok(); ++i) {
    std::optional<Record> record = decode_one(r);
    if (record) batch.records.push_back(std::move(*record));
  }
  if (r.ok() && r.remaining() != 0) r.fail(fmt::format("{} trailing bytes after the batch", r.remaining()));
  if (!r.ok()) return r.status();
  return batch;
}

}  // namespace sluice::cluster::metadata
