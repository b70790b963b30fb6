// PartitionRaftLog once poisoned: the state machine may still be inside the step that hit the storage error, so
// appends, truncations and a reset after it change a view in memory and every answer keeps the RaftLog contract
// (a raft assertion that fired on a poisoned log was found by read corruption on a cluster); nothing more is
// written, read() answers nothing, and status() names the error for the host.
#include "core/cluster/partition_raft_log.h"

#include <gtest/gtest.h>

#include "sim/world/sim_disk.h"
#include "tests/core/storage/log_test_util.h"

namespace sluice::cluster {
namespace {

using storage::log_testing::batch_of;
using storage::log_testing::OneNode;

raft::Entry entry_of(raft::Term term, int records) {
  const Bytes batch = batch_of(records, 100);
  return raft::Entry{term, static_cast<raft::Index>(records), std::string(batch.begin(), batch.end())};
}

TEST(PartitionRaftLog, APoisonedLogKeepsTheContractForTheRestOfTheStep) {
  OneNode world;
  ASSERT_TRUE(world.run([&](Env env) {
    auto log = storage::PartitionLog::open(env, "p0", storage::log_testing::small_settings());
    ASSERT_TRUE(log.ok()) << log.status().to_string();
    PartitionRaftLog raft_log(env, **log, 1);
    const std::vector<raft::Entry> first = {entry_of(1, 2), entry_of(1, 3)};
    raft_log.append(1, first);
    ASSERT_TRUE(raft_log.status().ok());
    ASSERT_EQ(raft_log.last_index(), 5u);

    world.disk().fail_next(DiskOp::kWrite, 1, "p0/");
    const std::vector<raft::Entry> second = {entry_of(2, 4)};
    raft_log.append(6, second);  // the write fails: poisoned, but the state machine sees its append
    EXPECT_FALSE(raft_log.status().ok());
    EXPECT_FALSE(raft_log.stopped_for_space()) << "an I/O error stops the group until the node restarts";
    EXPECT_EQ((*log)->log_end_offset(), 5) << "nothing of it is in the partition log";
    EXPECT_EQ(raft_log.last_index(), 9u);
    EXPECT_EQ(raft_log.term_at(9), 2u);
    EXPECT_EQ(raft_log.term_at(5), 1u);
    EXPECT_EQ(raft_log.entry_start(8), 6u);
    EXPECT_EQ(raft_log.entry_start(4), 3u);
    EXPECT_TRUE(raft_log.is_entry_end(5));
    EXPECT_LE(raft_log.durable_index(), 5u) << "the view is never durable";
    EXPECT_TRUE(raft_log.read(1, 10, 1 << 20).empty());
    EXPECT_EQ(raft_log.last_index_with_term_at_most(9, 1), 5u);

    const std::vector<raft::Entry> third = {entry_of(3, 1)};
    raft_log.append(10, third);
    EXPECT_EQ(raft_log.last_index(), 10u);
    raft_log.truncate_suffix(6);  // into the unwritten entries
    EXPECT_EQ(raft_log.last_index(), 5u);
    raft_log.truncate_suffix(3);  // into the real log: nothing is cut there
    EXPECT_EQ(raft_log.last_index(), 2u);
    EXPECT_EQ((*log)->log_end_offset(), 5);
    raft_log.append(3, third);
    EXPECT_EQ(raft_log.term_at(3), 3u);
    EXPECT_EQ(raft_log.term_at(2), 1u);

    raft_log.reset_to(7, 4);  // a leader's log start beyond ours
    EXPECT_EQ(raft_log.last_index(), 7u);
    EXPECT_EQ(raft_log.log_start(), 7u);
    EXPECT_EQ(raft_log.durable_index(), 7u);
    EXPECT_EQ(raft_log.term_at(7), 4u);
    EXPECT_LE(raft_log.log_start(), raft_log.low_watermark());
    EXPECT_FALSE(raft_log.sync().ok());
    EXPECT_EQ((*log)->log_end_offset(), 5);
  }));
}


// A follower catching up (or a leader with many proposals in one step) appends more than segment.bytes at once: the
// entries go in chunks within segment.bytes, across rolls, where one batch set used to be refused whole and take the
// group offline (found by a cluster with segment.bytes 8192: "a batch set of 17269 bytes exceeds segment.bytes").
// A chunk that fails poisons the log after the chunks before it, which stay written.
TEST(PartitionRaftLog, AnAppendLargerThanASegmentGoesInChunksAcrossRolls) {
  OneNode world;
  ASSERT_TRUE(world.run([&](Env env) {
    storage::LogSettings settings = storage::log_testing::small_settings();
    settings.segment_bytes = static_cast<int64_t>(3 * batch_of(1, 100).size());
    auto log = storage::PartitionLog::open(env, "p0", settings);
    ASSERT_TRUE(log.ok()) << log.status().to_string();
    PartitionRaftLog raft_log(env, **log, 1);
    std::vector<raft::Entry> entries;
    for (int i = 0; i < 10; ++i) entries.push_back(entry_of(1, 1));
    raft_log.append(1, entries);
    ASSERT_TRUE(raft_log.status().ok()) << raft_log.status().to_string();
    EXPECT_EQ(raft_log.last_index(), 10u);
    EXPECT_EQ((*log)->log_end_offset(), 10);
    EXPECT_GE((*log)->segments().size(), 4u) << "three batches a segment";
    EXPECT_EQ(raft_log.term_at(10), 1u);

    // The disk fills during the next append: the chunks before the failing one are in the log.
    world.disk().set_capacity_bytes(world.disk().used_bytes() + 4 * batch_of(1, 100).size());
    std::vector<raft::Entry> more;
    for (int i = 0; i < 12; ++i) more.push_back(entry_of(2, 1));
    raft_log.append(11, more);
    EXPECT_FALSE(raft_log.status().ok());
    const int64_t written = (*log)->log_end_offset();
    EXPECT_GT(written, 10) << "a chunk before the failing one";
    EXPECT_LT(written, 22);
    EXPECT_EQ((written - 10) % 3, 0) << "whole chunks only";
    EXPECT_EQ(raft_log.last_index(), 22u) << "the state machine sees the whole append";
    EXPECT_EQ(raft_log.term_at(22), 2u);
    EXPECT_EQ(raft_log.term_at(10), 1u);
    EXPECT_LE(raft_log.durable_index(), static_cast<raft::Index>(written));

    // Refused for space, the partition log stayed online: the group may start again on a new view of it.
    EXPECT_TRUE(raft_log.stopped_for_space());
    EXPECT_FALSE((*log)->offline());
    world.disk().set_capacity_bytes(uint64_t{1} << 30);
    PartitionRaftLog again(env, **log, 1);
    EXPECT_EQ(again.last_index(), static_cast<raft::Index>(written));
    EXPECT_EQ(again.term_at(static_cast<raft::Index>(written)), 2u);
    again.append(static_cast<raft::Index>(written) + 1, std::vector<raft::Entry>{entry_of(3, 1)});
    ASSERT_TRUE(again.status().ok()) << again.status().to_string();
    ASSERT_TRUE(again.sync().ok());
    EXPECT_EQ(again.durable_index(), static_cast<raft::Index>(written) + 1);
  }));
}

}  // namespace
}  // namespace sluice::cluster
