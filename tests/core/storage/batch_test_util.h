// Helpers for the record batch tests: hex, sample records, and raw header surgery (patch a field, reseal the CRC).
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "core/base/bytes.h"
#include "core/storage/record_batch.h"

namespace sluice::storage::testing_batches {

inline constexpr Compression kAllCodecs[] = {Compression::kNone, Compression::kGzip, Compression::kSnappy,
                                             Compression::kLz4, Compression::kZstd};

inline Bytes from_hex(const char* hex) {
  Bytes out;
  const size_t n = std::strlen(hex);
  auto nibble = [](char c) { return c <= '9' ? c - '0' : c - 'a' + 10; };
  for (size_t i = 0; i + 1 < n; i += 2) out.push_back(static_cast<uint8_t>(nibble(hex[i]) * 16 + nibble(hex[i + 1])));
  return out;
}

inline uint64_t get_be(ByteView b, size_t offset, size_t bytes) {
  uint64_t v = 0;
  for (size_t i = 0; i < bytes; ++i) v = (v << 8) | b[offset + i];
  return v;
}

inline void patch_be(Bytes* b, size_t offset, uint64_t v, size_t bytes) {
  for (size_t i = 0; i < bytes; ++i) (*b)[offset + bytes - 1 - i] = static_cast<uint8_t>(v >> (8 * i));
}

// Recomputes the CRC and batch_length after surgery on a batch.
inline void reseal(Bytes* b) {
  patch_be(b, 8, b->size() - kBatchLogOverheadBytes, 4);
  patch_be(b, kBatchCrcOffset, compute_batch_crc(*b), 4);
}

inline Record make_record(int64_t offset, int64_t timestamp, std::optional<std::string> key,
                          std::optional<std::string> value, std::vector<RecordHeader> headers = {}) {
  Record r;
  r.offset = offset;
  r.timestamp = timestamp;
  if (key) r.key = to_bytes(*key);
  if (value) r.value = to_bytes(*value);
  r.headers = std::move(headers);
  return r;
}

// Keys, a null key, a tombstone, headers with null and empty values, an empty key and value, a big value.
inline std::vector<Record> sample_records(int64_t base_offset, int64_t base_timestamp) {
  std::vector<Record> records;
  records.push_back(make_record(base_offset, base_timestamp, "k0", "v0", {{"h", to_bytes("x")}}));
  records.push_back(make_record(base_offset + 1, base_timestamp + 5, std::nullopt, "no key"));
  records.push_back(make_record(base_offset + 2, base_timestamp - 3, "gone", std::nullopt,
                                {{"a", std::nullopt}, {"bb", Bytes()}}));
  records.push_back(make_record(base_offset + 3, base_timestamp, "", ""));
  records.push_back(make_record(base_offset + 4, base_timestamp + 100, "big", std::string(70000, 'z')));
  return records;
}

inline void expect_same_records(const std::vector<Record>& got, const std::vector<Record>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].attributes, want[i].attributes) << i;
    EXPECT_EQ(got[i].offset, want[i].offset) << i;
    EXPECT_EQ(got[i].timestamp, want[i].timestamp) << i;
    EXPECT_EQ(got[i].key, want[i].key) << i;
    EXPECT_EQ(got[i].value, want[i].value) << i;
    ASSERT_EQ(got[i].headers.size(), want[i].headers.size()) << i;
    for (size_t h = 0; h < got[i].headers.size(); ++h) {
      EXPECT_EQ(got[i].headers[h].key, want[i].headers[h].key) << i << "/" << h;
      EXPECT_EQ(got[i].headers[h].value, want[i].headers[h].value) << i << "/" << h;
    }
  }
}

}  // namespace sluice::storage::testing_batches
