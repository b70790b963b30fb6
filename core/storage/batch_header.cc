// The fixed part of record_batch.h: header parsing, CRC, in-place edits and splitting. The record codec is in
// record_codec.cc, produce validation in batch_validation.cc.
#include <cstring>

#include "core/base/assert.h"
#include "core/base/crc32c.h"
#include "core/storage/record_batch.h"

namespace sluice::storage {
namespace {

uint64_t read_be(const uint8_t* p, size_t bytes) {
  uint64_t v = 0;
  for (size_t i = 0; i < bytes; ++i) v = (v << 8) | p[i];
  return v;
}

void write_be(uint8_t* p, uint64_t v, size_t bytes) {
  for (size_t i = 0; i < bytes; ++i) p[bytes - 1 - i] = static_cast<uint8_t>(v >> (8 * i));
}

}  // namespace

Result<BatchHeader> parse_batch_header(ByteView bytes) {
  if (bytes.size() < kBatchHeaderBytes) {
    return corruption("record batch header needs 61 bytes, got " + std::to_string(bytes.size()));
  }
  const uint8_t* p = bytes.data();
  BatchHeader h;
  h.base_offset = static_cast<int64_t>(read_be(p + 0, 8));
  h.batch_length = static_cast<int32_t>(read_be(p + 8, 4));
  h.partition_leader_epoch = static_cast<int32_t>(read_be(p + 12, 4));
  h.magic = static_cast<int8_t>(p[16]);
  h.crc = static_cast<uint32_t>(read_be(p + 17, 4));
  h.attributes = static_cast<int16_t>(read_be(p + 21, 2));
  h.last_offset_delta = static_cast<int32_t>(read_be(p + 23, 4));
  h.base_timestamp = static_cast<int64_t>(read_be(p + 27, 8));
  h.max_timestamp = static_cast<int64_t>(read_be(p + 35, 8));
  h.producer_id = static_cast<int64_t>(read_be(p + 43, 8));
  h.producer_epoch = static_cast<int16_t>(read_be(p + 51, 2));
  h.base_sequence = static_cast<int32_t>(read_be(p + 53, 4));
  h.record_count = static_cast<int32_t>(read_be(p + 57, 4));
  if (h.magic != kMagicV2) return corruption("record batch magic " + std::to_string(h.magic) + ", expected 2");
  if (h.batch_length < static_cast<int32_t>(kBatchHeaderBytes - kBatchLogOverheadBytes)) {
    return corruption("record batch length " + std::to_string(h.batch_length) + " below the header size");
  }
  if (h.last_offset_delta < 0) return corruption("negative last offset delta");
  if (h.record_count < 0) return corruption("negative record count");
  return h;
}

uint32_t compute_batch_crc(ByteView batch) {
  SLUICE_ASSERT(batch.size() >= kBatchHeaderBytes);
  return crc32c(batch.subspan(kBatchCrcCoveredFrom));
}

bool batch_crc_ok(ByteView batch) {
  Result<BatchHeader> header = parse_batch_header(batch);
  if (!header.ok() || header->size_bytes() != batch.size()) return false;
  return compute_batch_crc(batch) == header->crc;
}

void set_base_offset(MutableByteView batch, int64_t base_offset) {
  SLUICE_ASSERT(batch.size() >= kBatchHeaderBytes);
  write_be(batch.data(), static_cast<uint64_t>(base_offset), 8);
}

std::array<uint8_t, kBaseOffsetBytes> encode_base_offset(int64_t base_offset) {
  std::array<uint8_t, kBaseOffsetBytes> out{};
  write_be(out.data(), static_cast<uint64_t>(base_offset), kBaseOffsetBytes);
  return out;
}

void set_partition_leader_epoch(MutableByteView batch, int32_t epoch) {
  SLUICE_ASSERT(batch.size() >= kBatchHeaderBytes);
  write_be(batch.data() + 12, static_cast<uint32_t>(epoch), 4);
}

namespace {

void rewrite_crc(MutableByteView batch) {
  write_be(batch.data() + kBatchCrcOffset, compute_batch_crc(batch), 4);
}

}  // namespace

void set_log_append_time(MutableByteView batch, int64_t timestamp_ms) {
  SLUICE_ASSERT(batch.size() >= kBatchHeaderBytes);
  const uint16_t attributes = static_cast<uint16_t>(read_be(batch.data() + 21, 2)) | 0x08;
  write_be(batch.data() + 21, attributes, 2);
  write_be(batch.data() + 35, static_cast<uint64_t>(timestamp_ms), 8);
  rewrite_crc(batch);
}

ByteView with_create_time_max_timestamp(ByteView batch, int64_t records_max_timestamp, Bytes* storage) {
  SLUICE_ASSERT(batch.size() >= kBatchHeaderBytes);
  const uint16_t attributes = static_cast<uint16_t>(read_be(batch.data() + 21, 2));
  const int64_t max_timestamp = static_cast<int64_t>(read_be(batch.data() + 35, 8));
  if ((attributes & 0x08) == 0 && max_timestamp == records_max_timestamp) return batch;
  storage->assign(batch.begin(), batch.end());
  MutableByteView copy(*storage);
  write_be(copy.data() + 21, attributes & ~uint16_t{0x08}, 2);
  write_be(copy.data() + 35, static_cast<uint64_t>(records_max_timestamp), 8);
  rewrite_crc(copy);
  return ByteView(*storage);
}

Result<std::vector<BatchSpan>> split_batches(ByteView buffer, size_t* consumed) {
  std::vector<BatchSpan> spans;
  size_t position = 0;
  while (buffer.size() - position >= kBatchHeaderBytes) {
    Result<BatchHeader> header = parse_batch_header(buffer.subspan(position));
    if (!header.ok()) {
      if (consumed != nullptr) *consumed = position;  // the whole batches before the bad header
      return std::move(header).take_status();
    }
    if (header->size_bytes() > buffer.size() - position) break;  // incomplete: the caller decides
    spans.push_back(BatchSpan{*header, position});
    position += header->size_bytes();
  }
  if (consumed != nullptr) *consumed = position;
  return spans;
}

}  // namespace sluice::storage
