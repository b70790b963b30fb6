// RecordReader: next() takes a fast path for well-formed records and falls back to next_checked() for the error.
// The two must give the same answer for every input, well-formed or not: the same records, the same failure.
#include "core/storage/record_reader.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "tests/core/storage/batch_test_util.h"

namespace sluice::storage {
namespace {

using testing_batches::sample_records;

struct Outcome {
  std::vector<std::string> records;  // each record's fields, rendered
  std::string error;                 // empty when the section read cleanly

  bool operator==(const Outcome&) const = default;
};

std::string render(ByteView view) { return std::string(as_chars(view)); }
std::string render(const std::optional<ByteView>& view) { return view ? "[" + render(*view) + "]" : "null"; }

Outcome read_all(ByteView section, int32_t count, bool checked) {
  RecordReader reader(section, count);
  Outcome outcome;
  RecordView view;
  while (true) {
    Result<bool> more = checked ? reader.next_checked(&view) : reader.next(&view);
    if (!more.ok()) {
      outcome.error = more.status().to_string();
      return outcome;
    }
    if (!*more) return outcome;
    outcome.records.push_back(std::to_string(view.attributes) + " " + std::to_string(view.timestamp_delta) + " " +
                              std::to_string(view.offset_delta) + " " + render(view.key) + " " +
                              render(view.value) + " " + std::to_string(view.header_count) + " " +
                              render(view.headers) + " " + render(view.fields));
  }
}

// The sample records (keys, null keys, tombstones, headers with null and empty values) behind a batch header, the
// big value cut to 300 bytes: its length still takes a two-byte varint.
Bytes sample_section(int32_t* count) {
  std::vector<Record> records = sample_records(0, 1'700'000'000'000);
  records.back().value = Bytes(300, 'z');
  Result<Bytes> batch = build_batch(records);
  EXPECT_TRUE(batch.ok());
  Result<BatchHeader> header = parse_batch_header(*batch);
  EXPECT_TRUE(header.ok());
  *count = header->record_count;
  return Bytes(batch->begin() + kBatchHeaderBytes, batch->end());
}

TEST(RecordReader, AWellFormedSectionReadsTheSameBothWays) {
  int32_t count = 0;
  const Bytes section = sample_section(&count);
  const Outcome fast = read_all(section, count, false);
  EXPECT_TRUE(fast.error.empty()) << fast.error;
  EXPECT_EQ(fast.records.size(), static_cast<size_t>(count));
  EXPECT_EQ(fast, read_all(section, count, true));
}

// Every single-byte change, every truncation, a wrong count, and random multi-byte damage: the fast path accepts
// nothing the checked path refuses, and fails with the checked path's message.
TEST(RecordReader, DamagedSectionsFailTheSameBothWays) {
  int32_t count = 0;
  const Bytes section = sample_section(&count);
  size_t cases = 0;
  size_t failures = 0;
  auto check = [&](const Bytes& bytes, int32_t declared) {
    const Outcome fast = read_all(bytes, declared, false);
    ASSERT_EQ(fast, read_all(bytes, declared, true)) << "case " << cases;
    ++cases;
    if (!fast.error.empty()) ++failures;
  };
  for (size_t at = 0; at < section.size(); ++at) {
    for (const uint8_t value : std::vector<uint8_t>{0x00, 0x01, 0x7f, 0x80, 0xff, static_cast<uint8_t>(section[at] ^ 0x40)}) {
      Bytes damaged = section;
      damaged[at] = value;
      check(damaged, count);
    }
    check(Bytes(section.begin(), section.begin() + static_cast<std::ptrdiff_t>(at)), count);
  }
  check(section, count - 1);
  check(section, count + 1);
  std::mt19937_64 rng(11);
  for (int i = 0; i < 3000; ++i) {
    Bytes damaged = section;
    for (int flips = 1 + static_cast<int>(rng() % 4); flips > 0; --flips) {
      damaged[rng() % damaged.size()] = static_cast<uint8_t>(rng());
    }
    check(damaged, count);
  }
  EXPECT_GT(failures, cases / 10);  // damage to lengths and varints shows (to value bytes not): errors were covered
}

}  // namespace
}  // namespace sluice::storage
