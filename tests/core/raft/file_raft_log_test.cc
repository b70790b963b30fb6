// FileRaftLog on the simulated disk: the RaftLog contract shared with MemoryRaftLog, recovery after power loss and
// damage, and the fail-stop policy for disk errors.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

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
  EXPECT_EQ(this->log().read(1, 10), entries);
  EXPECT_EQ(this->log().read(2, 1), std::vector<Entry>{entries[1]});
  EXPECT_EQ(this->log().read(3, 1), std::vector<Entry>{entries[2]});
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
  EXPECT_EQ(this->log().read(1, 10), (std::vector<Entry>{entry(1, "a"), entry(1, "b"), entry(4, "C")}));
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
  EXPECT_EQ(back.read(3, 1), std::vector<Entry>{entry(2, "c")});
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

// --- Disk errors ---

TEST(FileRaftLog, DiskFullFailsTheLogAndLosesNothingSynced) {
  DiskWorld w;
  FileRaftLog& log = w.reopen();
  log.append(1, std::vector<Entry>{entry(1, "a"), entry(1, "b")});
  ASSERT_TRUE(log.sync().ok());
  w.disk.set_capacity_bytes(w.disk.used_bytes() + 100);
  log.append(3, std::vector<Entry>{entry(1, std::string(1000, 'x'))});
  EXPECT_EQ(log.status().code(), Code::kNoSpace);
  EXPECT_EQ(log.last_index(), 3u);  // the state machine still sees its append
  EXPECT_EQ(log.term_at(3), 1u);
  EXPECT_EQ(log.sync().code(), Code::kNoSpace);
  EXPECT_EQ(log.durable_index(), 2u);
  EXPECT_TRUE(log.read(1, 3).empty());
  w.disk.set_capacity_bytes(uint64_t{1} << 30);
  w.power_loss(1);
  EXPECT_EQ(all_entries(w.reopen()), (std::vector<Entry>{entry(1, "a"), entry(1, "b")}));
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
    EXPECT_EQ(back.read(1, 1), std::vector<Entry>{entry(1, "a")});
  }
}

TEST(FileRaftLog, AFailedWriteOrReadPoisonsTheLog) {
  DiskWorld w;
  FileRaftLog& log = w.reopen();
  log.append(1, std::vector<Entry>{entry(1, "a")});
  w.disk.fail_next(DiskOp::kRead, 1);
  EXPECT_TRUE(log.read(1, 1).empty());
  EXPECT_EQ(log.status().code(), Code::kIoError);
  EXPECT_EQ(log.read_checked(1, 1).status().code(), Code::kIoError);

  DiskWorld v;
  FileRaftLog& other = v.reopen();
  v.disk.fail_next(DiskOp::kWrite, 1);
  other.append(1, std::vector<Entry>{entry(1, "a")});
  EXPECT_TRUE(other.failed());
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
