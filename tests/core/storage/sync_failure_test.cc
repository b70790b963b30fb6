// fsync failures are final everywhere (issue 20, hardening): a failed sync of partition.state, of the directory in
// a roll, of a recovery-point or log-start update, of a cleaner swap or of the cleaner checkpoint takes the log
// offline as a failed data sync does: KAFKA_STORAGE_ERROR naming the cause, never a second try at any sync (a
// retried fsync that succeeds proves nothing: the pages the failed one dropped are gone), and reads of what it
// holds still served.
#include <gtest/gtest.h>

#include <optional>

#include "core/storage/cleaner_checkpoint.h"
#include "core/storage/log_format.h"
#include "core/storage/log_manager.h"
#include "core/storage/partition_log.h"
#include "tests/core/storage/log_test_util.h"

namespace sluice::storage {
namespace {

using namespace log_testing;

// The simulated file system, except that once armed the next sync_dir of one directory fails (SimDisk's fault
// rules match path prefixes, so they cannot fail a directory's sync without its files' first).
class DirSyncFault : public FileSystem {
 public:
  explicit DirSyncFault(FileSystem& inner) : inner_(inner) {}
  void fail_next_sync_of(std::string dir) { armed_ = std::move(dir); }
  bool armed() const { return armed_.has_value(); }

  Result<std::unique_ptr<File>> open(std::string_view path, OpenMode mode) override { return inner_.open(path, mode); }
  Status remove(std::string_view path) override { return inner_.remove(path); }
  Status rename(std::string_view from, std::string_view to) override { return inner_.rename(from, to); }
  Result<std::vector<DirEntry>> list(std::string_view dir) override { return inner_.list(dir); }
  Status create_dirs(std::string_view dir) override { return inner_.create_dirs(dir); }
  Status remove_dir(std::string_view dir) override { return inner_.remove_dir(dir); }
  Result<bool> exists(std::string_view path) override { return inner_.exists(path); }
  Result<uint64_t> free_bytes(std::string_view path) override { return inner_.free_bytes(path); }
  Result<uint64_t> total_bytes(std::string_view path) override { return inner_.total_bytes(path); }
  Status sync_dir(std::string_view dir) override {
    ++dir_syncs_;
    if (armed_.has_value() && *armed_ == dir) {
      armed_.reset();
      return io_error(std::string(dir) + ": injected directory sync error");
    }
    return inner_.sync_dir(dir);
  }
  uint64_t dir_syncs() const { return dir_syncs_; }

 private:
  FileSystem& inner_;
  std::optional<std::string> armed_;
  uint64_t dir_syncs_ = 0;
};

Env with_fs(Env env, FileSystem& fs) {
  return Env{env.clock, fs, env.net, env.random, env.scheduler, env.log, env.buggify};
}

// Every sync the disk was asked for, failed or not, of files and directories.
uint64_t sync_attempts(SimDisk& disk) { return disk.stats().syncs + disk.stats().dir_syncs + disk.stats().failed_syncs; }

std::unique_ptr<PartitionLog> open_log(Env env, const LogSettings& settings) {
  auto log = PartitionLog::open(env, "p0", settings);
  EXPECT_TRUE(log.ok()) << log.status().to_string();
  return log.ok() ? std::move(*log) : nullptr;
}

LogSettings three_batch_segments(bool persisted) {
  LogSettings settings = small_settings();
  settings.segment_bytes = static_cast<int64_t>(3 * batch_of(1, 1).size());
  settings.persisted = persisted;
  return settings;
}

void append_n(PartitionLog& log, int n) {
  for (int i = 0; i < n; ++i) {
    auto appended = log.append(batch_of(1, 1000 + i));
    ASSERT_TRUE(appended.ok()) << appended.status().to_string();
  }
}

// The log went offline for `cause` and stays so: every write path answers KAFKA_STORAGE_ERROR naming it, no sync of
// any file is tried again (housekeeping included), reads of offsets [0, readable_end) are still served, and the close
// leaves no clean-shutdown marker.
void expect_offline_for_good(Env env, SimDisk& disk, const DirSyncFault* dirs, PartitionLog& log,
                             const std::string& cause, int64_t readable_end) {
  ASSERT_TRUE(log.offline());
  EXPECT_NE(log.offline_reason().message().find(cause), std::string::npos) << log.offline_reason().to_string();
  EXPECT_EQ(error_of(log.offline_reason()), ErrorCode::kKafkaStorageError);
  const uint64_t attempts = sync_attempts(disk);
  const uint64_t dir_syncs = dirs != nullptr ? dirs->dir_syncs() : 0;
  auto refused = log.append(batch_of(1, 5000));
  EXPECT_EQ(error_of(refused.status()), ErrorCode::kKafkaStorageError);
  EXPECT_NE(refused.status().message().find(cause), std::string::npos) << refused.status().to_string();
  EXPECT_EQ(error_of(log.flush()), ErrorCode::kKafkaStorageError);
  EXPECT_EQ(error_of(log.roll()), ErrorCode::kKafkaStorageError);
  EXPECT_EQ(error_of(log.advance_log_start(std::min(log.high_watermark(), int64_t{1}))),
            ErrorCode::kKafkaStorageError);
  env.scheduler.sleep_for(5s);  // housekeeping: flush.ms, a rolled segment's background sync
  for (int64_t offset = 0; offset < readable_end; ++offset) {
    auto read = log.read(offset, 1, INT64_MAX);
    ASSERT_TRUE(read.ok()) << offset << ": " << read.status().to_string();
    ASSERT_FALSE(read->records.empty()) << offset;
  }
  EXPECT_FALSE(log.close().ok());
  EXPECT_EQ(sync_attempts(disk), attempts) << "a sync was tried again after a failed one";
  if (dirs != nullptr) EXPECT_EQ(dirs->dir_syncs(), dir_syncs) << "a directory sync was tried again";
}

TEST(SyncFailure, AFailedPartitionStateSyncInARollTakesTheLogOffline) {
  OneNode world;
  ASSERT_TRUE(world.run([&](Env env) {
    LogSettings settings = three_batch_segments(/*persisted=*/false);
    settings.flush_ms = 1000;  // due again and again, but an offline log never syncs again
    auto log = open_log(env, settings);
    ASSERT_NE(log, nullptr);
    append_n(*log, 2);
    world.disk().fail_next(DiskOp::kSync, 1, "p0/partition.state.tmp");
    EXPECT_EQ(error_of(log->roll()), ErrorCode::kKafkaStorageError);
    expect_offline_for_good(env, world.disk(), nullptr, *log, "partition.state.tmp", 2);
  }));
  EXPECT_FALSE(*world.fs().exists("p0/" + std::string(kCleanShutdownFileName)));
}

TEST(SyncFailure, AFailedDirectorySyncInARollTakesTheLogOffline) {
  OneNode world;
  ASSERT_TRUE(world.run([&](Env env) {
    DirSyncFault fs(env.fs);
    auto log = open_log(with_fs(env, fs), three_batch_segments(/*persisted=*/true));
    ASSERT_NE(log, nullptr);
    append_n(*log, 3);
    fs.fail_next_sync_of("p0");  // the roll's: the new segment's entries
    auto rolled = log->append(batch_of(1, 2000));
    EXPECT_EQ(error_of(rolled.status()), ErrorCode::kKafkaStorageError);
    EXPECT_FALSE(fs.armed());
    expect_offline_for_good(env, world.disk(), &fs, *log, "injected directory sync error", 3);
  }));
}

// A `replicated` roll's background sync of the rolled segment succeeds, then recording the new recovery point in
// partition.state fails.
TEST(SyncFailure, AFailedRecoveryPointUpdateTakesTheLogOffline) {
  OneNode world;
  ASSERT_TRUE(world.run([&](Env env) {
    auto log = open_log(env, three_batch_segments(/*persisted=*/false));
    ASSERT_NE(log, nullptr);
    append_n(*log, 4);  // the fourth rolls; its partition.state is written inline, the recovery point waits
    world.disk().fail_next(DiskOp::kSync, 1, "p0/partition.state.tmp");
    env.scheduler.sleep_for(100ms);
    EXPECT_EQ(log->recovery_point(), 3) << "the rolled segment was synced before the state write failed";
    expect_offline_for_good(env, world.disk(), nullptr, *log, "partition.state.tmp", 4);
  }));
}

TEST(SyncFailure, AFailedLogStartUpdateTakesTheLogOffline) {
  OneNode world;
  ASSERT_TRUE(world.run([&](Env env) {
    auto log = open_log(env, three_batch_segments(/*persisted=*/true));
    ASSERT_NE(log, nullptr);
    append_n(*log, 4);
    world.disk().fail_next(DiskOp::kSync, 1, "p0/partition.state.tmp");
    auto moved = log->delete_records(2);
    EXPECT_EQ(error_of(moved.status()), ErrorCode::kKafkaStorageError);
    ASSERT_TRUE(log->offline());
    // What is durable is served from the log start on.
    auto read = log->read(2, 1 << 20, INT64_MAX);
    ASSERT_TRUE(read.ok()) << read.status().to_string();
    EXPECT_EQ(headers_of(read->records).front().base_offset, 2);
    EXPECT_FALSE(log->close().ok());
  }));
}

// The cleaner's swap over three segments of a persisted log, the last active: [0,3) [3,6) [6,..).
struct SwapFixture {
  std::unique_ptr<PartitionLog> log;
  Bytes first_segment;  // the bytes of [0, 3): a "cleaned" copy that changes nothing
};

SwapFixture swap_fixture(Env env) {
  SwapFixture f;
  f.log = open_log(env, three_batch_segments(/*persisted=*/true));
  if (f.log == nullptr) return f;
  append_n(*f.log, 7);
  auto read = f.log->read(0, 1 << 20, 3);
  EXPECT_TRUE(read.ok()) << read.status().to_string();
  if (read.ok()) f.first_segment = read->records;
  EXPECT_EQ(headers_of(f.first_segment).size(), 3u);
  return f;
}

TEST(SyncFailure, AFailedSyncOfACleanedSegmentTakesTheLogOffline) {
  OneNode world;
  ASSERT_TRUE(world.run([&](Env env) {
    SwapFixture f = swap_fixture(env);
    ASSERT_NE(f.log, nullptr);
    world.disk().fail_next(DiskOp::kSync, 1, "p0/00000000000000000000.log.cleaned");
    EXPECT_EQ(error_of(f.log->replace_segments(0, 3, f.first_segment)), ErrorCode::kKafkaStorageError);
    EXPECT_EQ(f.log->segments().size(), 3u);  // nothing swapped
    expect_offline_for_good(env, world.disk(), nullptr, *f.log, "log.cleaned", 7);
  }));
}

TEST(SyncFailure, AFailedDirectorySyncOfACleanerSwapTakesTheLogOffline) {
  OneNode world;
  ASSERT_TRUE(world.run([&](Env env) {
    DirSyncFault fs(env.fs);
    SwapFixture f = swap_fixture(with_fs(env, fs));
    ASSERT_NE(f.log, nullptr);
    fs.fail_next_sync_of("p0");  // the one that makes the `.swap` name durable
    EXPECT_EQ(error_of(f.log->replace_segments(0, 3, f.first_segment)), ErrorCode::kKafkaStorageError);
    EXPECT_FALSE(fs.armed());
    expect_offline_for_good(env, world.disk(), &fs, *f.log, "injected directory sync error", 7);
  }));
}

// A full disk after the `.swap` name is durable (the cleaned segment's rebuilt indexes need space) leaves the swap
// half done on disk: final like a failed sync, and the next start finishes the swap.
TEST(SyncFailure, AFullDiskPastACleanerSwapPointTakesTheLogOfflineAndARestartFinishesTheSwap) {
  OneNode world;
  ASSERT_TRUE(world.run([&](Env env) {
    SwapFixture f = swap_fixture(env);
    ASSERT_NE(f.log, nullptr);
    // Room for the cleaned copy and its directory entries, not for the index entries its recovery writes.
    world.disk().set_capacity_bytes(world.disk().used_bytes() + f.first_segment.size());
    const Status swapped = f.log->replace_segments(0, 3, f.first_segment);
    EXPECT_EQ(error_of(swapped), ErrorCode::kKafkaStorageError) << swapped.to_string();
    world.disk().set_capacity_bytes(uint64_t{4} << 30);
    expect_offline_for_good(env, world.disk(), nullptr, *f.log, "after the cleaner's swap point", 7);
    f.log.reset();
    auto reopened = open_log(env, three_batch_segments(/*persisted=*/true));
    ASSERT_NE(reopened, nullptr);
    EXPECT_EQ(reopened->log_end_offset(), 7);
    for (int64_t offset = 0; offset < 7; ++offset) {
      auto read = reopened->read(offset, 1, INT64_MAX);
      ASSERT_TRUE(read.ok()) << offset << ": " << read.status().to_string();
      EXPECT_EQ(headers_of(read->records).at(0).base_offset, offset);
    }
    EXPECT_TRUE(reopened->close().ok());
  }));
}

TEST(SyncFailure, AFailedLeaderEpochCheckpointSyncTakesTheLogOffline) {
  OneNode world;
  ASSERT_TRUE(world.run([&](Env env) {
    auto log = open_log(env, three_batch_segments(/*persisted=*/true));
    ASSERT_NE(log, nullptr);
    append_n(*log, 2);
    world.disk().fail_next(DiskOp::kSync, 1, "p0/leader-epoch-checkpoint.tmp");
    AppendOptions options;
    options.leader_epoch = 3;  // a new epoch: its checkpoint is written before the batch
    EXPECT_EQ(error_of(log->append(batch_of(1, 1), options).status()), ErrorCode::kKafkaStorageError);
    expect_offline_for_good(env, world.disk(), nullptr, *log, "leader-epoch-checkpoint.tmp", 2);
  }));
}

// The data directory's cleaner-offset-checkpoint records where the cleaned log's dirty section starts: its failed
// sync is final for that log too.
TEST(SyncFailure, AFailedCleanerCheckpointSyncTakesTheCleanedLogOffline) {
  OneNode world;
  ASSERT_TRUE(world.run([&](Env env) {
    auto manager = open_log_manager(env);
    ASSERT_NE(manager, nullptr);
    const TopicPartition tp{"table", 0};
    auto config = TopicConfig::from_overrides({{"cleanup.policy", "compact"}, {"min.cleanable.dirty.ratio", "0.01"}},
                                              TopicConfig());
    ASSERT_TRUE(config.ok());
    ASSERT_TRUE(manager->create_partition(tp, *config).ok());
    const int64_t now = to_unix_ms(env.clock.wall_now());
    for (int round = 0; round < 3; ++round) {
      for (int k = 0; k < 3; ++k) {
        const std::string key = "k" + std::to_string(k);
        ASSERT_TRUE(manager->append(tp, one_record(key, key + "@" + std::to_string(round), now)).ok());
      }
      ASSERT_TRUE(manager->find(tp)->roll().ok());
    }
    world.disk().fail_next(DiskOp::kSync, 1, "data/cleaner-offset-checkpoint.tmp");
    auto cleaned = manager->run_cleaner_once(now);
    EXPECT_EQ(cleaned.status().code(), Code::kIoError) << cleaned.status().to_string();
    PartitionLog* log = manager->find(tp);
    ASSERT_TRUE(log->offline());
    EXPECT_NE(log->offline_reason().message().find("cleaner-offset-checkpoint"), std::string::npos);
    EXPECT_EQ(error_of(manager->append(tp, one_record("k0", "late", now)).status()), ErrorCode::kKafkaStorageError);
    auto again = manager->run_cleaner_once(now);  // not cleaned again: the checkpoint is not written again
    ASSERT_TRUE(again.ok()) << again.status().to_string();
    EXPECT_FALSE(again->has_value());
    EXPECT_FALSE(read_all(*log).empty());  // reads go on
    EXPECT_FALSE(manager->close().ok());
  }));
}

}  // namespace
}  // namespace sluice::storage
