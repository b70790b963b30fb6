// Damaged reads of intact files (the simulated disk's corrupt_next_reads: a flipped bit or a sector of zeros in
// what a read returns, the file itself good): a damaged copy is read again before it is believed, so recovery
// neither cuts nor refuses good records and the state file still loads. Lasting damage is still refused
// (log_recovery_test.cc). A fetch whose damaged copy carries a wrong base offset (outside the batch CRC) is refused
// by the batch's place among its neighbours and read again.
#include <gtest/gtest.h>

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
