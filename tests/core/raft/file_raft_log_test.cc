// FileRaftLog on the simulated disk: the RaftLog contract shared with MemoryRaftLog, recovery after power loss and
// damage, and the fail-stop policy for disk errors.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "core/base/crc32c.h"
#include "core/raft/file_raft_log.h"
#include "core/raft/raft.h"
#include "core/raft/raft_log.h"
#include "tests/core/raft/raft_log_test_util.h"

namespace sluice::raft::testing {
namespace {

// --- The contract, run against both logs ---

struct MemoryLogHolder {
  MemoryRaftLog log;
  RaftLog& get() { return log; }
  void sync() { log.sync(); }
};

struct FileLogHolder {
  FileLogHolder() { world.log = open_log(world.fs); }
  DiskWorld world;
  RaftLog& get() { return *world.log; }
  void sync() { ASSERT_TRUE(world.log->sync().ok()); }
};

template <typename Holder>
class RaftLogContract : public ::testing::Test {
 protected:
  Holder holder_;
  RaftLog& log() { return holder_.get(); }
  void append(std::vector<Entry> entries) { log().append(log().last_index() + 1, entries); }
};

using LogKinds = ::testing::Types<MemoryLogHolder, FileLogHolder>;
TYPED_TEST_SUITE(RaftLogContract, LogKinds);

TYPED_TEST(RaftLogContract, StartsEmpty) {
  EXPECT_EQ(this->log().last_index(), 0u);
  EXPECT_EQ(this->log().term_at(0), 0u);
  EXPECT_EQ(this->log().durable_index(), 0u);
}

TYPED_TEST(RaftLogContract, AppendThenReadRoundTrips) {
  const std::vector<Entry> entries = {entry(1, ""), entry(1, "a"), entry(3, std::string(5000, 'x'))};
  this->append({entries[0]});
  this->append({entries[1], entries[2]});
  EXPECT_EQ(this->log().last_index(), 3u);
  EXPECT_EQ(this->log().term_at(1), 1u);
  EXPECT_EQ(this->log().term_at(3), 3u);
  EXPECT_EQ(this->log().read(1, 10, kAnyBytes), entries);
  EXPECT_EQ(this->log().read(2, 1, kAnyBytes), std::vector<Entry>{entries[1]});
  EXPECT_EQ(this->log().read(3, 1, kAnyBytes), std::vector<Entry>{entries[2]});
}

TYPED_TEST(RaftLogContract, DurableIndexAdvancesOnlyOnSync) {
  this->append({entry(1, "a"), entry(1, "b")});
  EXPECT_EQ(this->log().durable_index(), 0u);
  this->holder_.sync();
  EXPECT_EQ(this->log().durable_index(), 2u);
  this->append({entry(2, "c")});
  EXPECT_EQ(this->log().durable_index(), 2u);
  this->holder_.sync();
  EXPECT_EQ(this->log().durable_index(), 3u);
}

TYPED_TEST(RaftLogContract, TruncateSuffixDropsTheTailAndLowersTheDurableIndex) {
  this->append({entry(1, "a"), entry(1, "b"), entry(1, "c"), entry(2, "d")});
  this->holder_.sync();
  this->log().truncate_suffix(3);
  EXPECT_EQ(this->log().last_index(), 2u);
  EXPECT_EQ(this->log().durable_index(), 2u);
  this->append({entry(4, "C")});
  EXPECT_EQ(this->log().read(1, 10, kAnyBytes), (std::vector<Entry>{entry(1, "a"), entry(1, "b"), entry(4, "C")}));
  EXPECT_EQ(this->log().durable_index(), 2u);
  this->log().truncate_suffix(1);
  EXPECT_EQ(this->log().last_index(), 0u);
  EXPECT_EQ(this->log().durable_index(), 0u);
  this->append({entry(5, "z")});
  EXPECT_EQ(all_entries(this->log()), std::vector<Entry>{entry(5, "z")});
}

TYPED_TEST(RaftLogContract, TruncatingAboveTheDurableIndexKeepsIt) {
  this->append({entry(1, "a")});
  this->holder_.sync();
  this->append({entry(1, "b"), entry(1, "c")});
  this->log().truncate_suffix(3);
  EXPECT_EQ(this->log().durable_index(), 1u);
  EXPECT_EQ(this->log().last_index(), 2u);
}

// --- Spans: an entry covers `count` consecutive indexes ---

TYPED_TEST(RaftLogContract, SpansCoverConsecutiveIndexes) {
  // [1] [2..4] [5] [6..105] [106..107]
  const std::vector<Entry> entries = {entry(1, ""), entry(1, "abc", 3), entry(2, "d"), entry(2, "batch", 100),
                                      entry(4, "xy", 2)};
  this->append({entries[0], entries[1]});
  EXPECT_EQ(this->log().last_index(), 4u);
  this->append({entries[2], entries[3], entries[4]});
  EXPECT_EQ(this->log().last_index(), 107u);
  const std::vector<std::pair<Index, Index>> starts = {{1, 1},  {2, 2},  {3, 2},   {4, 2},   {5, 5},
                                                       {6, 6},  {7, 6},  {105, 6}, {106, 106}, {107, 106}};
  for (const auto& [index, start] : starts) EXPECT_EQ(this->log().entry_start(index), start) << index;
  const std::vector<std::pair<Index, Term>> terms = {{0, 0}, {1, 1}, {4, 1}, {5, 2}, {60, 2}, {105, 2}, {107, 4}};
  for (const auto& [index, term] : terms) EXPECT_EQ(this->log().term_at(index), term) << index;
  for (Index index : {0, 1, 4, 5, 105, 107}) EXPECT_TRUE(this->log().is_entry_end(index)) << index;
  for (Index index : {2, 3, 6, 104, 106}) EXPECT_FALSE(this->log().is_entry_end(index)) << index;
  EXPECT_EQ(all_entries(this->log()), entries);
  EXPECT_EQ(this->log().read(6, 1, kAnyBytes), std::vector<Entry>{entries[3]});
  EXPECT_EQ(this->log().read(2, 2, kAnyBytes), (std::vector<Entry>{entries[1], entries[2]}));
}

TYPED_TEST(RaftLogContract, TruncationAtASpanStartDropsWholeEntries) {
  this->append({entry(1, "a", 10), entry(1, "b", 5), entry(2, "c", 7)});  // [1..10] [11..15] [16..22]
  this->holder_.sync();
  this->log().truncate_suffix(11);
  EXPECT_EQ(this->log().last_index(), 10u);
  EXPECT_EQ(this->log().durable_index(), 10u);
  this->append({entry(3, "d", 2)});
  EXPECT_EQ(this->log().last_index(), 12u);
  EXPECT_EQ(this->log().entry_start(12), 11u);
  EXPECT_EQ(this->log().term_at(11), 3u);
  EXPECT_EQ(all_entries(this->log()), (std::vector<Entry>{entry(1, "a", 10), entry(3, "d", 2)}));
  EXPECT_EQ(this->log().durable_index(), 10u);
  this->holder_.sync();
  EXPECT_EQ(this->log().durable_index(), 12u);
}

TYPED_TEST(RaftLogContract, ReadStopsAtTheCountOrTheBytesButReturnsAtLeastOneEntry) {
  const std::vector<Entry> entries = {entry(1, std::string(100, 'a'), 4), entry(1, std::string(50, 'b'), 2),
                                      entry(1, std::string(10, 'c'), 1), entry(2, std::string(500, 'd'), 9)};
  this->append(entries);  // [1..4] [5..6] [7] [8..16]
  EXPECT_EQ(this->log().read(1, 10, 160), (std::vector<Entry>{entries[0], entries[1], entries[2]}));
  EXPECT_EQ(this->log().read(1, 10, 159), (std::vector<Entry>{entries[0], entries[1]}));
  EXPECT_EQ(this->log().read(1, 10, 150), (std::vector<Entry>{entries[0], entries[1]}));
  EXPECT_EQ(this->log().read(1, 10, 149), std::vector<Entry>{entries[0]});
  EXPECT_EQ(this->log().read(1, 10, 1), std::vector<Entry>{entries[0]}) << "one entry even above the limit";
  EXPECT_EQ(this->log().read(1, 10, 0), std::vector<Entry>{entries[0]});
  EXPECT_EQ(this->log().read(5, 2, kAnyBytes), (std::vector<Entry>{entries[1], entries[2]}));
  EXPECT_EQ(this->log().read(8, 3, 1), std::vector<Entry>{entries[3]});
  EXPECT_EQ(this->log().read(1, 10, kAnyBytes), entries);
}

TYPED_TEST(RaftLogContract, LastIndexWithTermAtMostJumpsWholeEntries) {
  // Terms by index: 1..3 -> 1, 4..103 -> 3, 104..105 -> 3, 106..1105 -> 7.
  this->append({entry(1, "", 3), entry(3, "", 100), entry(3, "", 2), entry(7, "", 1000)});
  const RaftLog& log = this->log();
  EXPECT_EQ(log.last_index_with_term_at_most(1105, 7), 1105u);
  EXPECT_EQ(log.last_index_with_term_at_most(5000, 9), 1105u) << "clamped to the last index";
  EXPECT_EQ(log.last_index_with_term_at_most(1105, 6), 105u);
  EXPECT_EQ(log.last_index_with_term_at_most(50, 6), 50u) << "inside an entry of a lower term";
  EXPECT_EQ(log.last_index_with_term_at_most(1105, 3), 105u);
  EXPECT_EQ(log.last_index_with_term_at_most(1105, 2), 3u);
  EXPECT_EQ(log.last_index_with_term_at_most(2, 1), 2u);
  EXPECT_EQ(log.last_index_with_term_at_most(1105, 0), 0u);
  EXPECT_EQ(log.last_index_with_term_at_most(0, 5), 0u);
}

// --- Recovery ---

TEST(FileRaftLog, ReopenKeepsSyncedEntriesAndAPrefixOfTheRest) {
  const std::vector<Entry> all = {entry(1, "a"), entry(1, "b"), entry(2, std::string(3000, 'c')), entry(2, "d"),
                                  entry(3, std::string(700, 'e')), entry(3, "f")};
  for (uint64_t seed = 0; seed < 40; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    DiskWorld w(seed + 100);
    FileRaftLog& log = w.reopen();
    log.append(1, std::span(all).first(3));
    ASSERT_TRUE(log.sync().ok());
    log.append(4, std::span(all).subspan(3, 2));
    log.append(6, std::span(all).subspan(5));
    w.power_loss(seed);
    FileRaftLog& back = w.reopen();
    ASSERT_GE(back.last_index(), 3u);
    EXPECT_EQ(back.durable_index(), back.last_index());
    const std::vector<Entry> got = all_entries(back);
    EXPECT_EQ(got, std::vector<Entry>(all.begin(), all.begin() + static_cast<ptrdiff_t>(got.size())));
    EXPECT_EQ(back.recovery().entries, back.last_index());
    EXPECT_EQ(back.recovery().bytes_kept, back.end_offset());
  }
}

TEST(FileRaftLog, ATornLastRecordIsCut) {
  DiskWorld w;
  w.reopen().append(1, std::vector<Entry>{entry(1, "a"), entry(2, "b")});
  ASSERT_TRUE(w.log->sync().ok());
  const uint64_t kept = w.log->end_offset();
  w.log.reset();
  Bytes record;
  encode_raft_record(entry(2, "the torn one"), record);
  std::unique_ptr<File> raw = open_raw(w.fs);
  ASSERT_TRUE(raw->append(ByteView(record).first(kRaftRecordHeaderBytes + 3)).ok());  // length runs past the end
  ASSERT_TRUE(raw->sync().ok());
  raw.reset();
  FileRaftLog& back = w.reopen();
  EXPECT_EQ(all_entries(back), (std::vector<Entry>{entry(1, "a"), entry(2, "b")}));
  EXPECT_EQ(back.recovery().bytes_cut, kRaftRecordHeaderBytes + 3);
  EXPECT_EQ(*open_raw(w.fs)->size(), kept);
  back.append(3, std::vector<Entry>{entry(2, "c")});  // appends go where the cut was
  EXPECT_EQ(back.read(3, 1, kAnyBytes), std::vector<Entry>{entry(2, "c")});
}

TEST(FileRaftLog, AnIncompleteHeaderIsCut) {
  DiskWorld w;
  w.reopen().append(1, std::vector<Entry>{entry(1, "a")});
  ASSERT_TRUE(w.log->sync().ok());
  w.log.reset();
  std::unique_ptr<File> raw = open_raw(w.fs);
  ASSERT_TRUE(raw->append(as_bytes("short")).ok());
  ASSERT_TRUE(raw->sync().ok());
  raw.reset();
  EXPECT_EQ(w.reopen().last_index(), 1u);
  EXPECT_EQ(w.log->recovery().bytes_cut, 5u);
}

TEST(FileRaftLog, ABadCrcInTheLastRecordCutsIt) {
  DiskWorld w;
  FileRaftLog& log = w.reopen();
  log.append(1, std::vector<Entry>{entry(1, "a"), entry(1, "b")});
  const uint64_t second_starts = log.end_offset();
  log.append(3, std::vector<Entry>{entry(1, "payload to damage")});
  ASSERT_TRUE(log.sync().ok());
  const uint64_t size = log.end_offset();
  w.log.reset();
  std::unique_ptr<File> raw = open_raw(w.fs);
  ASSERT_TRUE(raw->pwrite(size - 2, as_bytes("X")).ok());
  ASSERT_TRUE(raw->sync().ok());
  raw.reset();
  FileRaftLog& back = w.reopen();
  EXPECT_EQ(back.last_index(), 2u);
  EXPECT_EQ(back.recovery().bytes_cut, size - second_starts);
  EXPECT_EQ(back.durable_index(), 2u);
}

TEST(FileRaftLog, ATruncationIsDurableAtOnce) {
  DiskWorld w;
  FileRaftLog& log = w.reopen();
  log.append(1, std::vector<Entry>{entry(1, "a"), entry(1, "b"), entry(1, "c")});
  ASSERT_TRUE(log.sync().ok());
  log.truncate_suffix(2);
  w.power_loss(3);
  EXPECT_EQ(all_entries(w.reopen()), std::vector<Entry>{entry(1, "a")});
}

TEST(FileRaftLog, SpansSurviveAReopenAndAPowerLossKeepsWholeEntries) {
  const std::vector<Entry> all = {entry(1, "a", 3), entry(1, std::string(2000, 'b'), 40), entry(2, "c"),
                                  entry(2, std::string(900, 'd'), 7), entry(5, "e", 2)};
  for (uint64_t seed = 0; seed < 30; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    DiskWorld w(seed + 300);
    FileRaftLog& log = w.reopen();
    log.append(1, std::span(all).first(2));  // [1..3] [4..43]
    ASSERT_TRUE(log.sync().ok());
    log.append(44, std::span(all).subspan(2, 2));  // [44] [45..51]
    log.append(52, std::span(all).subspan(4));     // [52..53]
    w.power_loss(seed);
    FileRaftLog& back = w.reopen();
    ASSERT_GE(back.last_index(), 43u);
    const std::vector<Entry> got = all_entries(back);
    ASSERT_EQ(got, std::vector<Entry>(all.begin(), all.begin() + static_cast<ptrdiff_t>(got.size())));
    EXPECT_EQ(back.last_index(), span_of(got)) << "a record is kept or cut whole";
    EXPECT_EQ(back.recovery().last_index, back.last_index());
    EXPECT_EQ(back.entry_start(43), 4u);
    EXPECT_EQ(back.term_at(43), 1u);
    if (back.last_index() >= 51) EXPECT_EQ(back.entry_start(50), 45u);
  }
}

TEST(FileRaftLog, ANewFileStartsWithTheFormatHeaderSyncedAtOpen) {
  for (uint64_t seed = 0; seed < 20; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    DiskWorld w(seed);
    FileRaftLog& log = w.reopen();
    EXPECT_EQ(log.end_offset(), kRaftLogFileHeaderBytes);
    EXPECT_EQ(*open_raw(w.fs)->size(), kRaftLogFileHeaderBytes);
    log.append(1, std::vector<Entry>{entry(1, "abc", 5)});
    EXPECT_EQ(log.end_offset(), kRaftLogFileHeaderBytes + kRaftRecordHeaderBytes + 3);
    w.power_loss(seed);  // the header was synced at open; the record may or may not be kept
    FileRaftLog& back = w.reopen();
    ASSERT_TRUE(back.last_index() == 0 || back.last_index() == 5) << back.last_index();
    EXPECT_EQ(back.end_offset(), back.last_index() == 0 ? kRaftLogFileHeaderBytes
                                                        : kRaftLogFileHeaderBytes + kRaftRecordHeaderBytes + 3);
  }
}

TEST(FileRaftLog, ATornHeaderOfANewFileIsRewritten) {
  DiskWorld w;
  {
    Result<std::unique_ptr<File>> raw = w.fs.open(kLogPath, OpenMode::kCreate);
    ASSERT_TRUE(raw.ok());
    ASSERT_TRUE((*raw)->append(as_bytes("srl")).ok());
    ASSERT_TRUE((*raw)->sync().ok());
  }
  FileRaftLog& log = w.reopen();
  EXPECT_EQ(log.last_index(), 0u);
  EXPECT_EQ(log.end_offset(), kRaftLogFileHeaderBytes);
  log.append(1, std::vector<Entry>{entry(1, "a", 2)});
  ASSERT_TRUE(log.sync().ok());
  EXPECT_EQ(all_entries(w.reopen()), std::vector<Entry>{entry(1, "a", 2)});
}

// Format 1 (records without a count, no file header) is refused rather than taken for a torn tail and cut.
TEST(FileRaftLog, AFileOfAnotherFormatIsRefusedNotCut) {
  DiskWorld w;
  {
    Result<std::unique_ptr<File>> raw = w.fs.open(kLogPath, OpenMode::kCreate);
    ASSERT_TRUE(raw.ok());
    Bytes format1;  // one format-1 record: crc, length, term, payload
    for (int i = 0; i < 4; ++i) format1.push_back(0x5a);
    for (uint8_t b : {1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0}) format1.push_back(b);
    format1.push_back('x');
    ASSERT_TRUE((*raw)->append(format1).ok());
    ASSERT_TRUE((*raw)->sync().ok());
  }
  const Result<std::unique_ptr<FileRaftLog>> opened = FileRaftLog::open(w.fs, kLogPath);
  ASSERT_FALSE(opened.ok());
  EXPECT_EQ(opened.status().code(), Code::kCorruption);
  EXPECT_EQ(*open_raw(w.fs)->size(), 17u) << "nothing was cut";

  DiskWorld v;
  {
    Result<std::unique_ptr<File>> raw = v.fs.open(kLogPath, OpenMode::kCreate);
    ASSERT_TRUE(raw.ok());
    Bytes header;
    for (uint32_t word : {kRaftLogMagic, kRaftLogFormatVersion + 1}) {
      for (int shift = 0; shift < 32; shift += 8) header.push_back(static_cast<uint8_t>(word >> shift));
    }
    ASSERT_TRUE((*raw)->append(header).ok());
  }
  const Result<std::unique_ptr<FileRaftLog>> newer = FileRaftLog::open(v.fs, kLogPath);
  ASSERT_FALSE(newer.ok());
  EXPECT_EQ(newer.status().code(), Code::kNotSupported);
}

TEST(FileRaftLog, ARecordCoveringNoIndexIsDamage) {
  DiskWorld w;
  w.reopen().append(1, std::vector<Entry>{entry(1, "a", 4)});
  ASSERT_TRUE(w.log->sync().ok());
  const uint64_t kept = w.log->end_offset();
  w.log.reset();
  Bytes record;
  encode_raft_record(entry(1, "zero"), record);
  // Count 0, with a CRC that matches it: only a writer other than this log produces that.
  for (size_t i = 16; i < 20; ++i) record[i] = 0;
  const uint32_t crc = crc32c(ByteView(record).subspan(4));
  for (int i = 0; i < 4; ++i) record[static_cast<size_t>(i)] = static_cast<uint8_t>(crc >> (8 * i));
  std::unique_ptr<File> raw = open_raw(w.fs);
  ASSERT_TRUE(raw->append(record).ok());
  ASSERT_TRUE(raw->sync().ok());
  raw.reset();
  FileRaftLog& back = w.reopen();
  EXPECT_EQ(back.last_index(), 4u);
  EXPECT_EQ(back.end_offset(), kept);
}

// --- Disk errors ---

TEST(FileRaftLog, DiskFullFailsTheLogAndLosesNothingSynced) {
  DiskWorld w;
  FileRaftLog& log = w.reopen();
  log.append(1, std::vector<Entry>{entry(1, "a"), entry(1, "b")});
  ASSERT_TRUE(log.sync().ok());
  w.disk.set_capacity_bytes(w.disk.used_bytes() + 100);
  log.append(3, std::vector<Entry>{entry(1, std::string(1000, 'x'))});
  EXPECT_EQ(log.status().code(), Code::kNoSpace);
  EXPECT_TRUE(log.stopped_for_space());
  EXPECT_EQ(log.last_index(), 3u);  // the state machine still sees its append
  EXPECT_EQ(log.term_at(3), 1u);
  EXPECT_EQ(log.sync().code(), Code::kNoSpace);
  EXPECT_EQ(log.durable_index(), 2u);
  EXPECT_TRUE(log.read(1, 3, kAnyBytes).empty());
  w.disk.set_capacity_bytes(uint64_t{1} << 30);
  w.power_loss(1);
  EXPECT_EQ(all_entries(w.reopen()), (std::vector<Entry>{entry(1, "a"), entry(1, "b")}));
}

// An append refused for space leaves the file as it was: the reopened log (a restarted group, the node still up)
// has every entry before it, all durable, and takes appends again.
TEST(FileRaftLog, AnAppendRefusedForSpaceLeavesALogThatOpensAgainWhole) {
  DiskWorld w;
  FileRaftLog& log = w.reopen();
  log.append(1, std::vector<Entry>{entry(1, "a")});
  ASSERT_TRUE(log.sync().ok());
  log.append(2, std::vector<Entry>{entry(1, "b")});  // written, not yet synced
  w.disk.set_capacity_bytes(w.disk.used_bytes() + 10);
  log.append(3, std::vector<Entry>{entry(1, std::string(1000, 'x'))});
  ASSERT_TRUE(log.stopped_for_space());
  w.disk.set_capacity_bytes(uint64_t{1} << 30);
  FileRaftLog& back = w.reopen();
  EXPECT_EQ(all_entries(back), (std::vector<Entry>{entry(1, "a"), entry(1, "b")}));
  EXPECT_EQ(back.durable_index(), 2u) << "opening syncs what it read";
  back.append(3, std::vector<Entry>{entry(2, "c")});
  ASSERT_TRUE(back.sync().ok());
  EXPECT_FALSE(back.failed());
  EXPECT_EQ(back.last_index(), 3u);
}

TEST(FileRaftLog, AFailedSyncPoisonsTheLog) {
  for (uint64_t seed = 0; seed < 20; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    DiskWorld w(seed);
    FileRaftLog& log = w.reopen();
    log.append(1, std::vector<Entry>{entry(1, "a")});
    ASSERT_TRUE(log.sync().ok());
    log.append(2, std::vector<Entry>{entry(1, "b")});
    w.disk.fail_next(DiskOp::kSync, 1);
    EXPECT_EQ(log.sync().code(), Code::kIoError);
    EXPECT_EQ(log.durable_index(), 1u);
    EXPECT_EQ(log.sync().code(), Code::kIoError) << "a retried sync must not claim what the first lost";
    EXPECT_FALSE(log.stopped_for_space()) << "fsyncgate: only a restart reads what the disk really holds";
    const uint64_t end = log.end_offset();
    log.append(3, std::vector<Entry>{entry(2, "c")});
    EXPECT_EQ(log.end_offset(), end) << "nothing is written once failed";
    EXPECT_EQ(log.durable_index(), 1u);
    log.truncate_suffix(3);
    EXPECT_EQ(log.last_index(), 2u);
    w.power_loss(seed);
    FileRaftLog& back = w.reopen();
    ASSERT_GE(back.last_index(), 1u);
    ASSERT_LE(back.last_index(), 2u);
    EXPECT_EQ(back.read(1, 1, kAnyBytes), std::vector<Entry>{entry(1, "a")});
  }
}

TEST(FileRaftLog, AFailedWriteOrReadPoisonsTheLog) {
  DiskWorld w;
  FileRaftLog& log = w.reopen();
  log.append(1, std::vector<Entry>{entry(1, "a")});
  w.disk.fail_next(DiskOp::kRead, 1);
  EXPECT_TRUE(log.read(1, 1, kAnyBytes).empty());
  EXPECT_EQ(log.status().code(), Code::kIoError);
  EXPECT_EQ(log.read_checked(1, 1, kAnyBytes).status().code(), Code::kIoError);

  DiskWorld v;
  FileRaftLog& other = v.reopen();
  v.disk.fail_next(DiskOp::kWrite, 1);
  other.append(1, std::vector<Entry>{entry(1, "a")});
  EXPECT_TRUE(other.failed());
  EXPECT_FALSE(other.stopped_for_space());
  EXPECT_EQ(other.last_index(), 1u);
  EXPECT_EQ(other.durable_index(), 0u);
  EXPECT_FALSE(other.sync().ok());
}

TEST(FileRaftLog, AnUnreadableFileFailsOpen) {
  DiskWorld w;
  w.reopen().append(1, std::vector<Entry>{entry(1, "a")});
  w.log.reset();
  w.disk.fail_next(DiskOp::kRead, 1);
  EXPECT_FALSE(FileRaftLog::open(w.fs, kLogPath).ok());
  w.disk.fail_next(DiskOp::kSync, 1);
  EXPECT_FALSE(FileRaftLog::open(w.fs, kLogPath).ok());
  EXPECT_EQ(w.reopen().last_index(), 1u);
}

// A leader of {1, 2} on a FileRaftLog, with 2 caught up and in the replicate state.
void make_leader(Raft& raft, FileRaftLog& log) {
  auto settle = [&] {
    Ready ready = raft.take_ready();
    if (ready.hard_state) raft.on_hard_state_persisted(ready.hard_state_version);
    if (ready.sync_log_through != 0) {
      ASSERT_TRUE(log.sync().ok());
      raft.on_log_synced();
    }
  };
  settle();
  raft.campaign();
  settle();
  raft.step(Message{.type = MessageType::kPreVoteResponse, .from = 2, .to = 1, .term = 1});
  settle();
  raft.step(Message{.type = MessageType::kVoteResponse, .from = 2, .to = 1, .term = 1});
  settle();
  ASSERT_EQ(raft.role(), Role::kLeader);
  raft.step(Message{.type = MessageType::kAppendResponse, .from = 2, .to = 1, .term = 1, .log_index = 1,
                    .hint_index = 1});
  settle();
}

TEST(FileRaftLog, ALeaderWhoseLogFailsToReadSendsNothing) {
  DiskWorld w;
  FileRaftLog& log = w.reopen();
  Random random(5);
  Options options;
  options.id = 1;
  Raft raft(options, Membership{.voters = {1, 2}}, log, HardState{}, random);
  make_leader(raft, log);
  ASSERT_FALSE(::testing::Test::HasFatalFailure());
  w.disk.fail_next(DiskOp::kRead, 1);
  EXPECT_NE(raft.propose("x"), 0u);
  EXPECT_TRUE(log.failed());
  for (const Message& m : raft.take_ready().messages) EXPECT_NE(m.type, MessageType::kAppend) << to_string(m);
}

}  // namespace
}  // namespace sluice::raft::testing

namespace sluice::raft::testing {
namespace {

// A device can hand back one bad copy of good bytes (the simulator's read-corruption): recovery must not cut the
// record it misread and everything after it (acknowledged entries), and a read must not poison the log.
TEST(FileRaftLog, ADamagedReadIsReadAgainNeitherCutNorPoisoning) {
  for (uint64_t seed = 1; seed <= 24; ++seed) {
    DiskWorld w(seed);
    w.log = open_log(w.fs);
    std::vector<Entry> entries;
    for (int i = 0; i < 20; ++i) entries.push_back(entry(1 + i / 5, std::string(100 + i * 13, 'a' + i % 26)));
    w.log->append(1, entries);
    ASSERT_TRUE(w.log->sync().ok());
    w.disk.corrupt_next_reads(1, kLogPath);
    FileRaftLog& log = w.reopen();
    EXPECT_EQ(log.last_index(), 20u) << "seed " << seed << ": recovery cut a record it misread";
    EXPECT_GT(w.disk.stats().corrupted_reads, 0u);
    w.disk.corrupt_next_reads(1, kLogPath);
    EXPECT_EQ(log.read(1, 100, kAnyBytes), entries) << "seed " << seed;
    EXPECT_FALSE(log.failed()) << "seed " << seed << ": " << log.status().to_string();
  }
}

}  // namespace
}  // namespace sluice::raft::testing
