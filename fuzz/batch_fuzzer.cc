// libFuzzer target: the record-batch decoder, the record reader and the four codecs (core/storage/record_batch.h,
// record_reader.h, compression.h), on the bytes a produce request or a .log file can hold.
//
// Input: one control byte, then a batch (its 61-byte header and records section). The control byte's low three
// bits name a codec (0-4; 5-7 keep the input's own attribute bits), bit 3 asks for the header to be made
// consistent first (batch_length = the input's size, CRC recomputed), so that the fuzzer spends its time in the
// records and the decompressors rather than in front of the CRC. Bit 4 makes the topic compacted, bit 5
// LogAppendTime, for validate_produce_batch.
//
// Every call must return a value or a named error: a crash, a sanitizer report, a hang (-timeout) or an
// allocation over -malloc_limit_mb is a finding. What decodes must also agree across the decoders: a batch
// decode_records accepts is accepted by validate_produce_batch (after the CRC fix-up), rebuilt by build_batch into
// the same records, and survives apply_topic_compression into every codec with the same records.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "core/storage/compression.h"
#include "core/storage/record_batch.h"
#include "core/storage/record_reader.h"
#include "core/storage/segment.h"

namespace sluice::storage {
namespace {

// What a decompressor may return here: the fuzzer also asks each codec directly, with a small bound, so that a
// bomb is refused cheaply (decode_records itself uses kMaxDecompressedBytes).
constexpr size_t kDirectBound = size_t{1} << 20;

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "batch_fuzzer: %s\n", what.c_str());
  std::abort();
}

void put_be(uint8_t* p, uint64_t v, size_t bytes) {
  for (size_t i = 0; i < bytes; ++i) p[bytes - 1 - i] = static_cast<uint8_t>(v >> (8 * i));
}

bool same_records(const std::vector<Record>& a, const std::vector<Record>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    const Record& x = a[i];
    const Record& y = b[i];
    if (x.attributes != y.attributes || x.timestamp != y.timestamp || x.offset != y.offset || x.key != y.key ||
        x.value != y.value || x.headers.size() != y.headers.size()) {
      return false;
    }
    for (size_t h = 0; h < x.headers.size(); ++h) {
      if (x.headers[h].key != y.headers[h].key || x.headers[h].value != y.headers[h].value) return false;
    }
  }
  return true;
}

// Each codec on the raw records section, with a small bound: the answer never exceeds it.
void fuzz_codecs(ByteView section) {
  for (uint8_t codec = 0; codec <= 5; ++codec) {  // 5: an unknown codec number, refused
    Result<Bytes> out = decompress(static_cast<Compression>(codec), section, kDirectBound);
    if (out.ok() && out->size() > kDirectBound) fail("a decompressor exceeded its bound");
    if (codec == 5 && out.ok()) fail("an unknown codec decompressed");
  }
}

// Splitting never reads past the buffer, and every span lies inside it.
void fuzz_split(ByteView buffer) {
  size_t consumed = 0;
  Result<std::vector<BatchSpan>> spans = split_batches(buffer, &consumed);
  if (consumed > buffer.size()) fail("split_batches consumed more than it was given");
  if (!spans.ok()) return;
  for (const BatchSpan& span : *spans) {
    if (span.position + span.header.size_bytes() > consumed) fail("a span runs past the consumed bytes");
    static_cast<void>(decode_records(buffer.subspan(span.position, span.header.size_bytes())));
  }
}

void fuzz_reader(ByteView batch, const BatchHeader& header) {
  Bytes storage;
  Result<ByteView> section = records_section(batch, header, &storage, kDirectBound);
  if (!section.ok()) return;
  RecordReader reader(*section, header.record_count);
  RecordView view;
  for (int32_t read = 0;; ++read) {
    Result<bool> more = reader.next(&view);
    if (!more.ok() || !*more) return;
    if (read >= header.record_count) fail("the reader returned more records than the header declares");
  }
}

void fuzz_consistent_batch(Bytes batch, uint8_t control) {
  put_be(batch.data() + 8, batch.size() - kBatchLogOverheadBytes, 4);  // batch_length
  batch[16] = static_cast<uint8_t>(kMagicV2);
  put_be(batch.data() + kBatchCrcOffset, compute_batch_crc(batch), 4);
  Result<BatchHeader> header = parse_batch_header(batch);
  if (!header.ok()) return;
  if (!batch_crc_ok(batch)) fail("a batch with its CRC just computed does not verify");
  fuzz_reader(batch, *header);
  static_cast<void>(first_record_at_or_after(batch, *header, 0, header->base_offset));

  ValidationRules rules;
  rules.compacted = (control & 0x10) != 0;
  rules.log_append_time = (control & 0x20) != 0;
  rules.max_message_bytes = INT32_MAX;
  std::vector<RecordError> record_errors;
  Result<ValidBatch> valid = validate_produce_batch(batch, rules, &record_errors);
  if (record_errors.size() > kMaxRecordErrors) fail("more record errors than kMaxRecordErrors");

  Result<std::vector<Record>> records = decode_records(batch);
  if (!records.ok()) return;
  if (records->empty()) return;

  // Rebuilt from what was decoded, the batch decodes to the same records.
  BatchOptions options;
  options.compression = header->compression() <= Compression::kZstd ? header->compression() : Compression::kNone;
  options.log_append_time = header->log_append_time();
  Result<Bytes> rebuilt = build_batch(*records, options);
  if (rebuilt.ok()) {
    Result<std::vector<Record>> again = decode_records(*rebuilt);
    if (!again.ok()) fail("a rebuilt batch does not decode: " + again.status().to_string());
    if (!same_records(*records, *again)) fail("a rebuilt batch decodes to other records");
  }
  // The same records in every codec.
  for (uint8_t target = 0; target <= 4; ++target) {
    Result<std::optional<Bytes>> converted = apply_topic_compression(batch, static_cast<Compression>(target));
    if (!converted.ok()) {
      if (converted.status().code() == Code::kCorruption) fail("a batch that decodes does not convert");
      continue;  // a library refusal to compress
    }
    if (!converted->has_value()) continue;
    if (!batch_crc_ok(**converted)) fail("a converted batch fails its CRC");
    Result<std::vector<Record>> again = decode_records(**converted);
    if (!again.ok()) fail("a converted batch does not decode: " + again.status().to_string());
    if (!same_records(*records, *again)) fail("a converted batch decodes to other records");
  }
}

void fuzz_batch(uint8_t control, ByteView input) {
  fuzz_split(input);
  Result<BatchHeader> header = parse_batch_header(input);
  if (header.ok() && header->size_bytes() == input.size()) {
    static_cast<void>(batch_crc_ok(input));
    static_cast<void>(decode_records(input));
    fuzz_reader(input, *header);
  }
  if (input.size() >= kBatchHeaderBytes) fuzz_codecs(input.subspan(kBatchHeaderBytes));
  if ((control & 0x08) == 0 || input.size() < kBatchHeaderBytes) return;
  Bytes batch(input.begin(), input.end());
  if ((control & 0x07) <= 4) {
    const uint16_t attributes = static_cast<uint16_t>((batch[21] << 8 | batch[22]) & ~0x07) | (control & 0x07);
    put_be(batch.data() + 21, attributes, 2);
  }
  fuzz_consistent_batch(std::move(batch), control);
}

}  // namespace
}  // namespace sluice::storage

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  sluice::storage::fuzz_batch(data[0], sluice::ByteView(data + 1, size - 1));
  return 0;
}
