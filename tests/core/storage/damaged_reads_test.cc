// Damaged reads of intact files (the simulated disk's corrupt_next_reads: a flipped bit or a sector of zeros in
// what a read returns, the file itself good): a damaged copy is read again before it is believed, so recovery
// neither cuts nor refuses good records and the state file still loads. Lasting damage is still refused
// (log_recovery_test.cc). A fetch whose damaged copy carries a wrong base offset (outside the batch CRC) is refused
// by the batch's place among its neighbours and read again.
#include <gtest/gtest.h>

#include <functional>

#include "core/storage/cleaner.h"
#include "core/storage/log_format.h"
#include "core/storage/partition_log.h"
#include "tests/core/storage/log_test_util.h"
#include "tests/probe_hits.h"

namespace sluice::storage {
namespace {

using namespace log_testing;

const std::string kDir = "p0";
constexpr int kRecords = 10;

LogSettings four_per_segment() {
  LogSettings s = small_settings();
  s.segment_bytes = static_cast<int64_t>(4 * batch_of(1, 1, "t").size());
  return s;
}

// Every offset of the log reads back as the batch appended there.
void expect_every_record(PartitionLog& log) {
  ASSERT_EQ(log.log_end_offset(), kRecords);
  for (int64_t offset = 0; offset < kRecords; ++offset) {
    auto read = log.read(offset, 1, INT64_MAX);
    ASSERT_TRUE(read.ok()) << offset << ": " << read.status().to_string();
    ASSERT_FALSE(read->records.empty()) << offset;
    EXPECT_EQ(headers_of(read->records).at(0).base_offset, offset);
    EXPECT_EQ(headers_of(read->records).at(0).max_timestamp, 100 + offset);
  }
}

// After a crash, with the first reads of `amount` of the partition's files (or of one segment's .log) damaged (seeds
// vary which reads, bits and sectors): nothing is cut or refused. With the clean-shutdown marker absent and the state
// file gone on odd seeds, recovery scans every segment.
TEST(DamagedReads, RecoveryNeitherCutsNorRefusesGoodRecords) {
  const uint64_t reread_before = probe_hits("log_loader.damaged_scan_read_again");
  const uint64_t disagreed_before = probe_hits("log_format.whole_file_reads_disagreed");
  const std::vector<std::string> targets = {kDir + "/", kDir + "/" + segment_file_name(0, kLogSuffix),
                                            kDir + "/" + segment_file_name(4, kLogSuffix),
                                            kDir + "/" + segment_file_name(8, kLogSuffix)};
  for (uint64_t seed = 1; seed <= 24; ++seed) {
    const std::string& target = targets[seed % targets.size()];
    for (uint32_t amount = 1; amount <= 3; ++amount) {
      OneNode world(seed);
      ASSERT_TRUE(world.run([](Env env) {
        auto log = PartitionLog::open(env, kDir, four_per_segment());
        ASSERT_TRUE(log.ok()) << log.status().to_string();
        for (int i = 0; i < kRecords; ++i) ASSERT_TRUE((*log)->append(batch_of(1, 100 + i, "t")).ok());
      }));
      world.node().crash();
      if (seed % 2 == 1) ASSERT_TRUE(world.fs().remove(kDir + "/" + std::string(kStateFileName)).ok());
      world.disk().corrupt_next_reads(amount, target);
      ASSERT_TRUE(world.run([&](Env env) {
        auto log = PartitionLog::open(env, kDir, four_per_segment());
        ASSERT_TRUE(log.ok()) << "seed " << seed << " amount " << amount << " " << target << ": "
                              << log.status().to_string();
        EXPECT_EQ((*log)->load_stats().torn_bytes_truncated, 0u) << "seed " << seed << " amount " << amount;
        expect_every_record(**log);
        ASSERT_TRUE((*log)->close().ok());
      }));
      EXPECT_GT(world.disk().stats().corrupted_reads, 0u) << target;
    }
  }
  EXPECT_GT(probe_hits("log_loader.damaged_scan_read_again"), reread_before) << "a damaged scan was repeated";
  EXPECT_GT(probe_hits("log_format.whole_file_reads_disagreed"), disagreed_before) << "a damaged state file or index";
}

// Fetches of many batches at once, each with some reads damaged: every batch served is the one appended at its
// offset (a damaged base offset would be served as is: the CRC does not cover it), or the read fails; never a wrong
// offset, and the position hints stay consistent.
TEST(DamagedReads, AFetchNeverServesABatchAtAnotherOffset) {
  const uint64_t misplaced_before = probe_hits("segment.misplaced_batch_refused");
  const uint64_t gap_before = probe_hits("segment.gap_walked_again");
  OneNode world(7);
  ASSERT_TRUE(world.run([](Env env) {
    LogSettings settings = small_settings();
    settings.segment_bytes = 1 << 20;  // one segment: reads cover many batches
    auto log = PartitionLog::open(env, kDir, settings);
    ASSERT_TRUE(log.ok()) << log.status().to_string();
    for (int i = 0; i < 200; ++i) ASSERT_TRUE((*log)->append(batch_of(1, 100 + i, "t")).ok());
    ASSERT_TRUE((*log)->close().ok());
  }));
  uint64_t served = 0;
  for (int round = 0; round < 60; ++round) {
    world.disk().corrupt_next_reads(1, kDir + "/" + segment_file_name(0, kLogSuffix));
    ASSERT_TRUE(world.run([&](Env env) {
      auto log = PartitionLog::open(env, kDir, small_settings());
      ASSERT_TRUE(log.ok()) << log.status().to_string();
      // A consumer's reads (each from where the last ended: a position hint) and jumps (a header walk).
      for (int64_t offset = round % 7, read_count = 0; offset < 200; ++read_count) {
        world.disk().corrupt_next_reads(1, kDir + "/" + segment_file_name(0, kLogSuffix));
        auto read = (*log)->read(offset, 512 + 64 * (round % 16), INT64_MAX);
        const std::vector<BatchHeader> headers = read.ok() ? headers_of(read->records) : std::vector<BatchHeader>();
        for (size_t i = 0; i < headers.size(); ++i) {
          ASSERT_EQ(headers[i].base_offset, offset + static_cast<int64_t>(i)) << "round " << round;
          ASSERT_EQ(headers[i].max_timestamp, 100 + offset + static_cast<int64_t>(i)) << "round " << round;
          ++served;
        }
        // A failed read was refused after its attempts: nothing wrong served; go on after it.
        offset += static_cast<int64_t>(std::max<size_t>(headers.size(), 1)) + (read_count % 4 == 3 ? 5 : 0);
      }
      ASSERT_TRUE((*log)->close().ok());
    }));
  }
  EXPECT_GT(served, 5000u);
  EXPECT_GT(probe_hits("segment.misplaced_batch_refused"), misplaced_before) << "a damaged base offset was read";
  EXPECT_GT(probe_hits("segment.gap_walked_again"), gap_before) << "a walk stepped over a damaged header";
}

// Batches of four records, read from each batch's first offset (by a hint, or by a walk after a jump): a damaged
// copy whose first base offset reads a little lower still holds the offset asked for, so only the walk's or the
// hint's own view of that base offset refuses it. Served, a client would label the batch's later records with
// earlier offsets (read_corruption seed 6030: offset 906 served the record of 908).
TEST(DamagedReads, AFetchNeverServesAFirstBatchWhoseBaseOffsetReadLower) {
  constexpr int kPerBatch = 4;
  constexpr int kBatches = 150;
  const uint64_t disagreed_before = probe_hits("segment.first_base_offset_disagreed");
  OneNode world(13);
  ASSERT_TRUE(world.run([](Env env) {
    LogSettings settings = small_settings();
    settings.segment_bytes = 1 << 20;
    auto log = PartitionLog::open(env, kDir, settings);
    ASSERT_TRUE(log.ok()) << log.status().to_string();
    for (int i = 0; i < kBatches; ++i) ASSERT_TRUE((*log)->append(batch_of(kPerBatch, 100 + i, "t")).ok());
    ASSERT_TRUE((*log)->close().ok());
  }));
  uint64_t served = 0;
  for (int round = 0; round < 80; ++round) {
    ASSERT_TRUE(world.run([&](Env env) {
      auto log = PartitionLog::open(env, kDir, small_settings());
      ASSERT_TRUE(log.ok()) << log.status().to_string();
      for (int64_t batch = round % 5, read_count = 0; batch < kBatches; ++read_count) {
        const int64_t offset = batch * kPerBatch;
        world.disk().corrupt_next_reads(1, kDir + "/" + segment_file_name(0, kLogSuffix));
        auto read = (*log)->read(offset, 64, INT64_MAX);  // the first batch alone
        if (!read.ok()) {  // refused after its attempts: nothing wrong served
          ++batch;
          continue;
        }
        const std::vector<BatchHeader> headers = headers_of(read->records);
        ASSERT_FALSE(headers.empty());
        ASSERT_EQ(headers[0].base_offset, offset) << "round " << round << ": offset " << offset;
        ASSERT_EQ(headers[0].max_timestamp, 100 + batch) << "round " << round;
        ++served;
        batch += static_cast<int64_t>(headers.size()) + (read_count % 5 == 4 ? 3 : 0);
      }
      ASSERT_TRUE((*log)->close().ok());
    }));
  }
  EXPECT_GT(served, 4000u);
  EXPECT_GT(probe_hits("segment.first_base_offset_disagreed"), disagreed_before) << "a lowered base offset was read";
}

// Lasting damage to a closed segment's base offset (the top byte: the batch now claims offsets far past the log's
// end): a fetch from that batch is refused, not answered empty, which would stall a reader there with no error
// (interior_corruption seed 6659 --buggify: a cold-start reader stopped at offset 3 of 783, nothing refused).
TEST(DamagedReads, ABatchWhoseBaseOffsetLiesPastTheSegmentIsRefusedNotSkipped) {
  OneNode world(17);
  const uint64_t batch_bytes = batch_of(1, 100, "t").size();
  ASSERT_TRUE(world.run([](Env env) {
    auto log = PartitionLog::open(env, kDir, four_per_segment());
    ASSERT_TRUE(log.ok()) << log.status().to_string();
    for (int i = 0; i < kRecords; ++i) ASSERT_TRUE((*log)->append(batch_of(1, 100 + i, "t")).ok());
    ASSERT_TRUE((*log)->close().ok());
  }));
  {
    auto file = world.fs().open(kDir + "/" + segment_file_name(0, kLogSuffix), OpenMode::kReadWrite);
    ASSERT_TRUE(file.ok());
    const uint8_t top = 0x01;  // offset 2's base offset + 2^56
    ASSERT_TRUE((*file)->pwrite(2 * batch_bytes, ByteView(&top, 1)).ok());
    ASSERT_TRUE((*file)->sync().ok());
  }
  ASSERT_TRUE(world.run([&](Env env) {
    auto log = PartitionLog::open(env, kDir, four_per_segment());
    ASSERT_TRUE(log.ok()) << log.status().to_string();
    for (const int64_t offset : {2, 1}) {
      for (const int64_t upper_bound : {INT64_MAX, int64_t{kRecords}}) {
        auto read = (*log)->read(offset, 1 << 20, upper_bound);
        ASSERT_FALSE(read.ok()) << "offset " << offset << " served " << headers_of(read->records).size()
                                << " batches";
        EXPECT_EQ(read.status().code(), Code::kCorruption) << read.status().to_string();
      }
    }
    auto after = (*log)->read(4, 1 << 20, INT64_MAX);  // the next segment: served
    ASSERT_TRUE(after.ok()) << after.status().to_string();
    EXPECT_EQ(headers_of(after->records).at(0).base_offset, 4);
  }));
}

// A search by timestamp (ListOffsets) walks headers without their CRCs: with damaged reads its answer is the right
// one or an error, never another offset.
// Twelve one-record batches of keys ABACBADCBAED, values "<key><two-digit offset>" (batches of one size), in
// segments at 0, 4 and 8, the last one rolled: a cleaning pass keeps offsets 7 to 11.
constexpr const char* kCleanKeys = "ABACBADCBAED";
std::string clean_value_at(int64_t i) {
  return std::string(1, kCleanKeys[i]) + (i < 10 ? "0" : "") + std::to_string(i);
}
void append_for_cleaning(PartitionLog& log, int64_t timestamp) {
  for (int64_t i = 0; i < 12; ++i) {
    if (i == 4 || i == 8) {
      ASSERT_TRUE(log.roll().ok());
    }
    ASSERT_TRUE(log.append(one_record(std::string(1, kCleanKeys[i]), clean_value_at(i), timestamp)).ok());
  }
  ASSERT_TRUE(log.roll().ok());
}

// Runs `body` on the node with the log append_for_cleaning filled (a second before `now`).
void with_a_log_to_clean(const std::function<void(OneNode&, Env, PartitionLog&, int64_t now)>& body) {
  OneNode world;
  ASSERT_TRUE(world.run([&](Env env) {
    auto opened = PartitionLog::open(env, kDir, small_settings());
    ASSERT_TRUE(opened.ok()) << opened.status().to_string();
    const int64_t now = to_unix_ms(env.clock.wall_now());
    append_for_cleaning(**opened, now - 1000);
    body(world, env, **opened, now);
  }));
}

// Twelve records of keys ABACBADCBAED (values of one length) in segments at 0, 4 and 8, then a cleaning pass with
// bit 28 of one base offset (outside the batch CRC) flipped in one read: of the batch `batch_index` of the file of
// the segment at `segment_base` as it is when the read comes. The pass must still succeed and leave survivors 7 to
// 11 at their offsets, in one cleaned segment at base 0 that ends at 12, with the log taking appends after it.
void expect_a_clean_despite_a_flipped_base_offset(int64_t segment_base, uint64_t batch_index) {
  with_a_log_to_clean([&](OneNode& world, Env, PartitionLog& log, int64_t now) {
    const uint64_t batch_bytes = one_record("A", clean_value_at(0), now).size();
    world.disk().flip_in_next_read(kDir + "/" + segment_file_name(segment_base, kLogSuffix),
                                   batch_index * batch_bytes + 4, 0x10);
    int64_t checkpoint = 0;
    const Result<CleanResult> cleaned = clean_once(log, checkpoint, CleanerOptions{}, now, /*force=*/true);
    ASSERT_TRUE(cleaned.ok()) << cleaned.status().to_string();
    EXPECT_EQ(world.disk().stats().corrupted_reads, 1u) << "the flip met a read";
    const std::vector<SegmentInfo> segments = log.segments();
    ASSERT_GE(segments.size(), 2u);
    EXPECT_EQ(segments[0].base_offset, 0);
    EXPECT_EQ(segments[0].next_offset, 12);
    std::vector<int64_t> offsets;
    for (const Seen& seen : read_all(log)) {
      offsets.push_back(seen.offset);
      EXPECT_EQ(seen.value, clean_value_at(seen.offset));
    }
    EXPECT_EQ(offsets, (std::vector<int64_t>{7, 8, 9, 10, 11}));
    auto next = log.append(one_record("A", "A12", now));
    ASSERT_TRUE(next.ok()) << next.status().to_string();
    EXPECT_EQ(next->base_offset, 12);
    ASSERT_TRUE(log.roll().ok());
    ASSERT_TRUE(log.close().ok());
  });
}

// The scan after a cleaner's swap reads one bad copy of the cleaned segment's last base offset (survivors 7 to 11,
// five batches at base 0; the old segment there held four, so only the new file has a fifth): the scan finds
// nothing wrong with it, and the segment must still end where its batches were written (read_corruption seed 53727
// with BUGGIFY: a cleaned segment ended at offset 268436255 and the next roll broke the segments' order).
TEST(DamagedReads, ACleanedSegmentEndsWhereItsBatchesWereWritten) {
  const uint64_t rescanned_before = probe_hits("partition_log.cleaned_segment_scanned_again");
  expect_a_clean_despite_a_flipped_base_offset(0, 4);
  EXPECT_GT(probe_hits("partition_log.cleaned_segment_scanned_again"), rescanned_before) << "the scan read again";
}

// Lasting damage to a base offset (outside the batch CRC) in a segment the cleaner reads: batch 9 claims offset 8,
// which its predecessor holds. The read refuses it, so the pass is refused rather than write two batches at offset 8
// into a cleaned segment.
TEST(DamagedReads, TheCleanerRefusesOffsetsThatGoBackwards) {
  with_a_log_to_clean([&](OneNode&, Env env, PartitionLog& log, int64_t now) {
    auto file = env.fs.open(kDir + "/" + segment_file_name(8, kLogSuffix), OpenMode::kReadWrite);
    ASSERT_TRUE(file.ok()) << file.status().to_string();
    const uint64_t last_byte_of_base = one_record("A", clean_value_at(0), now).size() + 7;  // its second batch's
    Bytes byte(1);
    ASSERT_TRUE((*file)->pread(last_byte_of_base, byte).ok());
    ASSERT_EQ(byte[0], 9);
    byte[0] = 8;
    ASSERT_TRUE((*file)->pwrite(last_byte_of_base, byte).ok());
    int64_t checkpoint = 0;
    const Result<CleanResult> cleaned = clean_once(log, checkpoint, CleanerOptions{}, now, /*force=*/true);
    ASSERT_FALSE(cleaned.ok());
    EXPECT_EQ(cleaned.status().code(), Code::kCorruption) << cleaned.status().to_string();
    EXPECT_EQ(log.segments().at(2).base_offset, 8) << "nothing swapped";
    EXPECT_EQ(log.segments().at(0).next_offset, 4);
  });
}

TEST(DamagedReads, ASearchByTimestampNeverAnswersAnotherOffset) {
  OneNode world(11);
  ASSERT_TRUE(world.run([&](Env env) {
    auto log = PartitionLog::open(env, kDir, small_settings());
    ASSERT_TRUE(log.ok()) << log.status().to_string();
    for (int i = 0; i < 200; ++i) ASSERT_TRUE((*log)->append(batch_of(1, 1000 + 10 * i, "t")).ok());
    int answered = 0;
    for (int round = 0; round < 400; ++round) {
      const int64_t target = 1000 + 10 * (round % 200) - (round % 3);  // between records, or on one
      world.disk().corrupt_next_reads(1, kDir + "/" + segment_file_name(0, kLogSuffix));
      auto found = (*log)->offset_for_timestamp(target);
      if (!found.ok()) continue;  // refused after its attempts: no wrong answer
      ASSERT_TRUE(found->has_value()) << "round " << round;
      EXPECT_EQ((*found)->offset, round % 200) << "round " << round;
      ++answered;
    }
    EXPECT_GT(answered, 350);
  }));
  EXPECT_GT(world.disk().stats().corrupted_reads, 300u) << "damaged reads met";
}

}  // namespace
}  // namespace sluice::storage
