// HardStateFile on the simulated disk: alternating slots, torn writes, damage and the fail-stop policy.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "core/raft/hard_state_file.h"
#include "tests/core/raft/raft_log_test_util.h"

namespace sluice::raft::testing {
namespace {

const std::string kHardStatePath = "hard_state";

HardStateFile must_open(FileSystem& fs) {
  Result<HardStateFile> file = HardStateFile::open(fs, kHardStatePath);
  EXPECT_TRUE(file.ok()) << file.status().to_string();
  return std::move(file).value();
}

Bytes slot_bytes(FileSystem& fs, uint64_t offset) {
  Bytes out(kHardStateSlotBytes);
  Result<size_t> got = open_raw(fs, kHardStatePath)->pread(offset, out);
  EXPECT_TRUE(got.ok());
  out.resize(got.ok() ? *got : 0);
  return out;
}

void write_raw(FileSystem& fs, uint64_t offset, ByteView bytes, bool sync) {
  Result<std::unique_ptr<File>> opened = fs.open(kHardStatePath, OpenMode::kCreate);
  ASSERT_TRUE(opened.ok());
  std::unique_ptr<File> raw = std::move(opened).value();
  ASSERT_TRUE(raw->pwrite(offset, bytes).ok());
  if (sync) {
    ASSERT_TRUE(raw->sync().ok());
  }
}

const HardState kFirst{.term = 3, .voted_for = 2, .incarnation = 1};
const HardState kSecond{.term = 4, .voted_for = 0, .incarnation = 1};
const HardState kThird{.term = 4, .voted_for = 5, .incarnation = 2};

TEST(HardStateFile, AnAbsentFileIsTheInitialState) {
  DiskWorld w;
  HardStateFile file = must_open(w.fs);
  EXPECT_EQ(file.loaded(), HardState{});
  EXPECT_EQ(file.sequence(), 0u);
  EXPECT_TRUE(*w.fs.exists(kHardStatePath));
  EXPECT_EQ(must_open(w.fs).loaded(), HardState{});  // the empty file it left is still the initial state
}

TEST(HardStateFile, StoresAlternateBetweenTheSlots) {
  DiskWorld w;
  HardStateFile file = must_open(w.fs);
  ASSERT_TRUE(file.store(kFirst).ok());
  EXPECT_EQ(slot_bytes(w.fs, 0), HardStateFile::encode_slot(1, kFirst));
  ASSERT_TRUE(file.store(kSecond).ok());
  EXPECT_EQ(slot_bytes(w.fs, 0), HardStateFile::encode_slot(1, kFirst));
  EXPECT_EQ(slot_bytes(w.fs, kHardStateSlot1Offset), HardStateFile::encode_slot(2, kSecond));
  ASSERT_TRUE(file.store(kThird).ok());
  EXPECT_EQ(slot_bytes(w.fs, 0), HardStateFile::encode_slot(3, kThird));
  EXPECT_EQ(file.loaded(), kThird);
  HardStateFile back = must_open(w.fs);
  EXPECT_EQ(back.loaded(), kThird);
  EXPECT_EQ(back.sequence(), 3u);
  ASSERT_TRUE(back.store(kThird).ok());  // continues into the other slot
  EXPECT_EQ(slot_bytes(w.fs, kHardStateSlot1Offset), HardStateFile::encode_slot(4, kThird));
}

TEST(HardStateFile, StoresSurviveAPowerLoss) {
  DiskWorld w;
  {
    HardStateFile file = must_open(w.fs);
    ASSERT_TRUE(file.store(kFirst).ok());
    ASSERT_TRUE(file.store(kSecond).ok());
  }
  w.power_loss(9);
  EXPECT_EQ(must_open(w.fs).loaded(), kSecond);
}

TEST(HardStateFile, ADamagedNewerSlotFallsBackToTheOlder) {
  DiskWorld w;
  {
    HardStateFile file = must_open(w.fs);
    ASSERT_TRUE(file.store(kFirst).ok());
    ASSERT_TRUE(file.store(kSecond).ok());
  }
  write_raw(w.fs, kHardStateSlot1Offset + 10, as_bytes("!"), true);
  HardStateFile back = must_open(w.fs);
  EXPECT_EQ(back.loaded(), kFirst);
  EXPECT_EQ(back.sequence(), 1u);
}

// An unsynced write of the next copy, torn by a power loss at every place the disk chooses, leaves one of the two.
TEST(HardStateFile, ATornWriteOfTheNewerSlotLeavesAValidCopy) {
  for (uint64_t seed = 0; seed < 40; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    DiskWorld w(seed);
    {
      HardStateFile file = must_open(w.fs);
      ASSERT_TRUE(file.store(kFirst).ok());
      ASSERT_TRUE(file.store(kSecond).ok());
    }
    write_raw(w.fs, 0, HardStateFile::encode_slot(3, kThird), false);
    w.power_loss(seed);
    Result<HardStateFile> back = HardStateFile::open(w.fs, kHardStatePath);
    ASSERT_TRUE(back.ok()) << back.status().to_string();
    EXPECT_TRUE(back->loaded() == kSecond || back->loaded() == kThird);
  }
}

TEST(HardStateFile, NoValidSlotIsRefused) {
  DiskWorld w;
  write_raw(w.fs, 0, as_bytes(std::string(100, 'g')), true);
  Result<HardStateFile> file = HardStateFile::open(w.fs, kHardStatePath);
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.status().code(), Code::kCorruption);
}

TEST(HardStateFile, BothSlotsDamagedIsRefused) {
  DiskWorld w;
  {
    HardStateFile file = must_open(w.fs);
    ASSERT_TRUE(file.store(kFirst).ok());
    ASSERT_TRUE(file.store(kSecond).ok());
  }
  write_raw(w.fs, 5, as_bytes("!"), true);
  write_raw(w.fs, kHardStateSlot1Offset + 5, as_bytes("!"), true);
  EXPECT_EQ(HardStateFile::open(w.fs, kHardStatePath).status().code(), Code::kCorruption);
}

TEST(HardStateFile, AFailedSyncFailsEveryLaterStore) {
  DiskWorld w;
  HardStateFile file = must_open(w.fs);
  ASSERT_TRUE(file.store(kFirst).ok());
  w.disk.fail_next(DiskOp::kSync, 1);
  EXPECT_EQ(file.store(kSecond).code(), Code::kIoError);
  EXPECT_EQ(file.loaded(), kFirst);
  EXPECT_EQ(file.store(kThird).code(), Code::kIoError);
  w.power_loss(2);
  const HardState back = must_open(w.fs).loaded();
  EXPECT_TRUE(back == kFirst || back == kSecond);
}

// A bad copy of the newer slot must not bring back the older term and vote: it is read again.
TEST(HardStateFile, ADamagedReadOfTheNewerSlotIsReadAgain) {
  for (uint64_t seed = 1; seed <= 24; ++seed) {
    DiskWorld w(seed);
    {
      HardStateFile file = must_open(w.fs);
      ASSERT_TRUE(file.store(kFirst).ok());   // slot 0
      ASSERT_TRUE(file.store(kSecond).ok());  // slot 1
      ASSERT_TRUE(file.store(kThird).ok());   // slot 0, the newest
    }
    w.disk.corrupt_next_reads(1, kHardStatePath);  // the first read: slot 0's
    EXPECT_EQ(must_open(w.fs).loaded(), kThird) << "seed " << seed;
    EXPECT_GT(w.disk.stats().corrupted_reads, 0u);
  }
}

}  // namespace
}  // namespace sluice::raft::testing
