// The fixed part of record_batch.h: header parsing, CRC, in-place edits and splitting. The record codec is in
// record_codec.cc, produce validation in batch_validation.cc.
#include <algorithm>
#include <cstdint>

#include "core/base/assert.h"
#include "core/base/big_endian.h"
#include "core/base/crc32c.h"
#include "core/storage/record_batch.h"

namespace sluice::storage {

Status batch_header_problem(ByteView bytes) {
  if (bytes.size() < kBatchHeaderBytes) {
    return corruption("record batch header needs 61 bytes, got " + std::to_string(bytes.size()));
  }
  const BatchHeader h = detail::decode_batch_header(bytes.data());
  SLUICE_ASSERT(!detail::batch_header_valid(h));
  if (h.magic != kMagicV2) return corruption("record batch magic " + std::to_string(h.magic) + ", expected 2");
  if (h.batch_length < static_cast<int32_t>(kBatchHeaderBytes - kBatchLogOverheadBytes)) {
    return corruption("record batch length " + std::to_string(h.batch_length) + " below the header size");
  }
  if (h.last_offset_delta < 0) return corruption("negative last offset delta");
  if (h.base_offset > INT64_MAX - h.last_offset_delta) {
    return corruption("record batch offsets past 2^63 - 1: base offset " + std::to_string(h.base_offset) +
                      ", last offset delta " + std::to_string(h.last_offset_delta));
  }
  SLUICE_ASSERT(h.record_count < 0);
  return corruption("negative record count");
}

Result<BatchHeader> parse_batch_header(ByteView bytes) {
  BatchHeader header;
  if (parse_valid_batch_header(bytes, &header)) return header;
  return batch_header_problem(bytes);
}

uint32_t compute_batch_crc(ByteView batch) {
  SLUICE_ASSERT(batch.size() >= kBatchHeaderBytes);
  return crc32c(batch.subspan(kBatchCrcCoveredFrom));
}

bool batch_crc_ok(ByteView batch) {
  Result<BatchHeader> header = parse_batch_header(batch);
  return header.ok() && batch_crc_ok(batch, *header);
}

bool batch_crc_ok(ByteView batch, const BatchHeader& header) {
  return header.size_bytes() == batch.size() && compute_batch_crc(batch) == header.crc;
}

void set_base_offset(MutableByteView batch, int64_t base_offset) {
  SLUICE_ASSERT(batch.size() >= kBatchHeaderBytes);
  store_be<int64_t>(batch.data(), base_offset);
}

std::array<uint8_t, kBaseOffsetBytes> encode_base_offset(int64_t base_offset) {
  std::array<uint8_t, kBaseOffsetBytes> out{};
  static_assert(kBaseOffsetBytes == sizeof(int64_t));
  store_be<int64_t>(out.data(), base_offset);
  return out;
}

void set_partition_leader_epoch(MutableByteView batch, int32_t epoch) {
  SLUICE_ASSERT(batch.size() >= kBatchHeaderBytes);
  store_be<int32_t>(batch.data() + 12, epoch);
}

void set_base_offset_and_epoch(MutableByteView batch, int64_t base_offset, int32_t epoch) {
  SLUICE_ASSERT(batch.size() >= kBatchHeaderBytes);
  SLUICE_ASSERT(base_offset >= 0);
  set_base_offset(batch, base_offset);
  set_partition_leader_epoch(batch, epoch);
}

Result<int64_t> set_offsets_and_epoch(MutableByteView batches, int64_t first_offset, int32_t epoch) {
  size_t consumed = 0;
  SLUICE_ASSIGN_OR_RETURN(std::vector<BatchSpan> spans, split_batches(batches, &consumed));
  if (consumed != batches.size()) return corruption("set_offsets_and_epoch: the input is not whole batches");
  int64_t next = first_offset;
  for (const BatchSpan& span : spans) {
    set_base_offset_and_epoch(batches.subspan(span.position, span.header.size_bytes()), next, epoch);
    next += span.header.last_offset_delta + int64_t{1};
  }
  return next;
}

namespace {

void rewrite_crc(MutableByteView batch) {
  store_be<uint32_t>(batch.data() + kBatchCrcOffset, compute_batch_crc(batch));
}

}  // namespace

void set_log_append_time(MutableByteView batch, int64_t timestamp_ms) {
  SLUICE_ASSERT(batch.size() >= kBatchHeaderBytes);
  const uint16_t attributes = load_be<uint16_t>(batch.data() + 21) | 0x08;
  store_be<uint16_t>(batch.data() + 21, attributes);
  store_be<int64_t>(batch.data() + 35, timestamp_ms);
  rewrite_crc(batch);
}

ByteView with_create_time_max_timestamp(ByteView batch, int64_t records_max_timestamp, Bytes* storage) {
  SLUICE_ASSERT(batch.size() >= kBatchHeaderBytes);
  const uint16_t attributes = load_be<uint16_t>(batch.data() + 21);
  const int64_t max_timestamp = load_be<int64_t>(batch.data() + 35);
  if ((attributes & 0x08) == 0 && max_timestamp == records_max_timestamp) return batch;
  storage->assign(batch.begin(), batch.end());
  MutableByteView copy(*storage);
  store_be<uint16_t>(copy.data() + 21, attributes & ~uint16_t{0x08});
  store_be<int64_t>(copy.data() + 35, records_max_timestamp);
  rewrite_crc(copy);
  return ByteView(*storage);
}

Status for_each_batch(ByteView buffer, size_t* consumed, FunctionRef<Status(const BatchSpan&)> visit) {
  size_t position = 0;
  while (buffer.size() - position >= kBatchHeaderBytes) {
    BatchHeader header;
    if (!parse_valid_batch_header(buffer.subspan(position), &header)) {
      if (consumed != nullptr) *consumed = position;  // the whole batches before the bad header
      return batch_header_problem(buffer.subspan(position));
    }
    if (header.size_bytes() > buffer.size() - position) break;  // incomplete: the caller decides
    const Status visited = visit(BatchSpan{header, position});
    position += header.size_bytes();
    if (!visited.ok()) {
      if (consumed != nullptr) *consumed = position;
      return visited;
    }
  }
  if (consumed != nullptr) *consumed = position;
  return Status();
}

Result<std::vector<BatchSpan>> split_batches(ByteView buffer, size_t* consumed) {
  std::vector<BatchSpan> spans;
  // One allocation for the few batches a read usually holds, rather than growing 1, 2, 4, ...
  constexpr size_t kFirstReserve = 16;
  spans.reserve(std::min(buffer.size() / kBatchHeaderBytes, kFirstReserve));
  SLUICE_TRY(for_each_batch(buffer, consumed, [&](const BatchSpan& span) {
    spans.push_back(span);
    return Status();
  }));
  return spans;
}

}  // namespace sluice::storage
