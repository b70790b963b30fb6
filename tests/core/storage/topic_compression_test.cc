// A topic's compression.type (Kafka semantics): `producer` keeps each batch's codec; any other value re-encodes a
// batch in another codec, keeping every header field and record byte; a batch already in the codec is untouched.
// Also the config key itself: its values, default and validation.
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/protocol/error_codes.h"
#include "core/storage/record_batch.h"
#include "core/storage/topic_config.h"
#include "tests/core/storage/batch_test_util.h"
#include "tests/core/storage/kafka_python_batches.h"

namespace sluice::storage {
namespace {

using namespace testing_batches;  // NOLINT: test helpers
using namespace golden;           // NOLINT: kafka-python batches

constexpr int64_t kT0 = 1700000000000;
constexpr size_t kAttributesOffset = 21;

// An idempotent batch with the sample records (keys, a null key, headers, a tombstone, a 70 KB value) in `codec`.
Bytes sample_batch(Compression codec) {
  BatchOptions options;
  options.compression = codec;
  options.producer_id = 42;
  options.producer_epoch = 3;
  options.base_sequence = 17;
  options.partition_leader_epoch = 5;
  Result<Bytes> batch = build_batch(sample_records(0, kT0), options);
  EXPECT_TRUE(batch.ok()) << batch.status().to_string();
  return batch.ok() ? std::move(batch).value() : Bytes();
}

std::optional<Bytes> recompress(const Bytes& batch, std::optional<Compression> target) {
  Result<std::optional<Bytes>> out = apply_topic_compression(batch, target);
  EXPECT_TRUE(out.ok()) << out.status().to_string();
  return out.ok() ? std::move(out).value() : std::nullopt;
}

// `after` is `before` in `codec`: the same header but for codec bits, length and CRC, and the same records.
void expect_same_batch_in(const Bytes& before, const Bytes& after, Compression codec) {
  const BatchHeader was = parse_batch_header(before).value();
  Result<BatchHeader> now = parse_batch_header(after);
  ASSERT_TRUE(now.ok()) << now.status().to_string();
  EXPECT_EQ(now->compression(), codec);
  EXPECT_EQ(now->attributes & ~0x07, was.attributes & ~0x07) << "the other attribute bits are kept";
  EXPECT_EQ(now->size_bytes(), after.size());
  EXPECT_TRUE(batch_crc_ok(after)) << "the CRC is recomputed";
  EXPECT_EQ(now->base_offset, was.base_offset);
  EXPECT_EQ(now->partition_leader_epoch, was.partition_leader_epoch);
  EXPECT_EQ(now->last_offset_delta, was.last_offset_delta);
  EXPECT_EQ(now->base_timestamp, was.base_timestamp);
  EXPECT_EQ(now->max_timestamp, was.max_timestamp);
  EXPECT_EQ(now->producer_id, was.producer_id);
  EXPECT_EQ(now->producer_epoch, was.producer_epoch);
  EXPECT_EQ(now->base_sequence, was.base_sequence);
  EXPECT_EQ(now->record_count, was.record_count);
  Result<std::vector<Record>> records = decode_records(after);
  ASSERT_TRUE(records.ok()) << records.status().to_string();
  expect_same_records(*records, decode_records(before).value());
  // A produced batch re-encoded by the broker must still pass the broker's own produce validation.
  ValidationRules rules;
  rules.now_ms = kT0;
  EXPECT_TRUE(validate_produce_batch(after, rules).ok());
}

TEST(TopicCompression, EveryCodecToEveryOtherKeepsHeaderAndRecords) {
  for (Compression from : kAllCodecs) {
    const Bytes batch = sample_batch(from);
    for (Compression to : kAllCodecs) {
      SCOPED_TRACE(::testing::Message() << "from " << int(from) << " to " << int(to));
      const std::optional<Bytes> out = recompress(batch, to);
      if (from == to) {
        EXPECT_FALSE(out.has_value()) << "a batch already in the topic's codec is stored as it came";
        continue;
      }
      ASSERT_TRUE(out.has_value());
      expect_same_batch_in(batch, *out, to);
      if (to != Compression::kNone) {
        EXPECT_LT(out->size(), 10000u) << "really compressed (a 70 KB value of z)";
      }
    }
  }
}

TEST(TopicCompression, ProducerKeepsEveryCodec) {
  for (Compression codec : kAllCodecs) EXPECT_FALSE(recompress(sample_batch(codec), std::nullopt).has_value());
}

// kafka-python's own batches, xerial-framed snappy included, re-encoded in each codec.
TEST(TopicCompression, RealClientBatchesReencode) {
  for (const char* hex : {kKafkaPythonSmall, kKafkaPythonGzip, kKafkaPythonSnappy, kKafkaPythonLz4,
                          kKafkaPythonZstd}) {
    const Bytes batch = from_hex(hex);
    const Compression from = parse_batch_header(batch).value().compression();
    for (Compression to : kAllCodecs) {
      SCOPED_TRACE(::testing::Message() << "from " << int(from) << " to " << int(to));
      const std::optional<Bytes> out = recompress(batch, to);
      ASSERT_EQ(out.has_value(), from != to);
      if (out) expect_same_batch_in(batch, *out, to);
    }
  }
}

TEST(TopicCompression, TransactionalAndLogAppendTimeBitsSurvive) {
  BatchOptions options;
  options.transactional = true;
  options.log_append_time = true;
  options.producer_id = 9;
  options.producer_epoch = 0;
  options.base_sequence = 0;
  const Bytes batch = build_batch(sample_records(0, kT0), options).value();
  const std::optional<Bytes> out = recompress(batch, Compression::kLz4);
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(get_be(*out, kAttributesOffset, 2), 0x18u | static_cast<uint64_t>(Compression::kLz4));
  const BatchHeader header = parse_batch_header(*out).value();
  EXPECT_TRUE(header.transactional());
  EXPECT_TRUE(header.log_append_time());
}

TEST(TopicCompression, MalformedBatchesFailCleanly) {
  Bytes batch = sample_batch(Compression::kGzip);
  batch.pop_back();  // not exactly one batch
  EXPECT_EQ(apply_topic_compression(batch, Compression::kZstd).status().code(), Code::kCorruption);
  Bytes garbled = sample_batch(Compression::kGzip);
  for (size_t i = kBatchHeaderBytes; i < garbled.size(); ++i) garbled[i] = static_cast<uint8_t>(i * 7);
  EXPECT_FALSE(apply_topic_compression(garbled, Compression::kZstd).ok()) << "the records do not decompress";
  EXPECT_FALSE(apply_topic_compression(Bytes(10, 0), Compression::kZstd).ok()) << "no header";
}

// --- The config key. ---

std::string shown_after(const std::string& value) {
  Result<TopicConfig> config = TopicConfig::from_overrides({{"compression.type", value}}, TopicConfig{});
  EXPECT_TRUE(config.ok()) << value << ": " << config.status().to_string();
  return config.ok() ? config->value_of("compression.type").value_or("?") : "";
}

TEST(TopicCompression, ConfigValuesAndDefault) {
  const TopicConfig defaults;
  EXPECT_FALSE(defaults.compression_type.has_value());
  EXPECT_EQ(defaults.value_of("compression.type"), "producer");
  const std::map<std::string, std::optional<Compression>> values = {
      {"producer", std::nullopt},           {"uncompressed", Compression::kNone}, {"gzip", Compression::kGzip},
      {"snappy", Compression::kSnappy},     {"lz4", Compression::kLz4},           {"zstd", Compression::kZstd}};
  for (const auto& [name, codec] : values) {
    Result<TopicConfig> config = TopicConfig::from_overrides({{"compression.type", name}}, TopicConfig{});
    ASSERT_TRUE(config.ok()) << name;
    EXPECT_EQ(config->compression_type, codec) << name;
    EXPECT_EQ(shown_after(name), name);
    EXPECT_EQ(config->overrides().at("compression.type"), name);
    Result<TopicConfig> back = TopicConfig::from_properties(config->to_properties(), TopicConfig{});
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(back->compression_type, codec) << name << " persists";
  }
}

TEST(TopicCompression, ConfigRejectsOtherValues) {
  for (const std::string bad : {"none", "ZSTD", "Producer", "", "lz4,zstd", "brotli"}) {
    Result<TopicConfig> config = TopicConfig::from_overrides({{"compression.type", bad}}, TopicConfig{});
    ASSERT_FALSE(config.ok()) << bad;
    EXPECT_EQ(to_error_code(config.status()), ErrorCode::kInvalidConfig) << bad;
    EXPECT_NE(config.status().message().find("String must be one of: uncompressed, gzip, snappy, lz4, zstd, producer"),
              std::string::npos)
        << config.status().message();
  }
}

TEST(TopicCompression, ConfigCanBeAltered) {
  const TopicConfig zstd = TopicConfig::from_overrides({{"compression.type", "zstd"}}, TopicConfig{}).value();
  Result<TopicConfig> altered = TopicConfig::alter(zstd, {{"compression.type", AlterOp::kSet, "gzip"}},
                                                   AlterMode::kIncremental);
  ASSERT_TRUE(altered.ok()) << altered.status().to_string();
  EXPECT_EQ(altered->compression_type, Compression::kGzip);
  altered = TopicConfig::alter(*altered, {{"compression.type", AlterOp::kDelete, ""}}, AlterMode::kIncremental);
  ASSERT_TRUE(altered.ok()) << altered.status().to_string();
  EXPECT_FALSE(altered->compression_type.has_value()) << "back to the default, producer";
}

}  // namespace
}  // namespace sluice::storage
