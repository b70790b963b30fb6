// PartitionLog as a replica: append_as_replica (a leader's batches byte for byte), the leader path's epoch
// (AppendOptions::leader_epoch, set_offsets_and_epoch), the leader epoch cache in the log (assignment, log start
// moves, persistence, rebuild), batch boundaries and the durable prefix.
#include <gtest/gtest.h>

#include "core/storage/log_inspector.h"
#include "core/storage/partition_log.h"
#include "tests/core/storage/log_test_util.h"

namespace sluice::storage {
namespace {

using namespace log_testing;
using Entries = std::vector<EpochEntry>;

std::unique_ptr<PartitionLog> open_log(Env env, const LogSettings& settings = small_settings(),
                                       const std::string& dir = "p0") {
  auto log = PartitionLog::open(env, dir, settings);
  EXPECT_TRUE(log.ok()) << log.status().to_string();
  return log.ok() ? std::move(*log) : nullptr;
}

std::string file_text(FileSystem& fs, const std::string& path) {
  auto file = fs.open(path, OpenMode::kRead);
  if (!file.ok()) return "<" + file.status().to_string() + ">";
  auto bytes = read_whole_file(**file);
  return bytes.ok() ? std::string(as_chars(*bytes)) : "<unreadable>";
}

void append_replica(PartitionLog& log, const Bytes& batches) {
  auto appended = log.append_as_replica(batches);
  ASSERT_TRUE(appended.ok()) << appended.status().to_string();
}

TEST(ReplicaAppend, KeepsTheLeadersBytesOffsetsAndEpochs) {
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    auto log = open_log(env);
    ASSERT_NE(log, nullptr);
    const Bytes first = concat_bytes({leader_batch(0, 3, 1), leader_batch(3, 1, 1)});
    const Bytes second = concat_bytes({leader_batch(4, 3, 2), leader_batch(7, 2, 4)});
    auto a = log->append_as_replica(first);
    ASSERT_TRUE(a.ok()) << a.status().to_string();
    EXPECT_EQ(a->base_offset, 0);
    EXPECT_EQ(a->last_offset, 3);
    auto b = log->append_as_replica(second);
    ASSERT_TRUE(b.ok()) << b.status().to_string();
    EXPECT_EQ(b->base_offset, 4);
    EXPECT_EQ(b->last_offset, 8);
    EXPECT_EQ(log->log_end_offset(), 9);
    EXPECT_EQ(all_bytes(*log), concat_bytes({first, second}));
    EXPECT_EQ(log->leader_epochs(), (Entries{{1, 0}, {2, 4}, {4, 7}}));
    EXPECT_EQ(log->latest_epoch(), 4);
    const std::vector<std::optional<int32_t>> expected = {1, 1, 1, 1, 2, 2, 2, 4, 4};
    for (int64_t offset = 0; offset < 9; ++offset) EXPECT_EQ(log->epoch_at(offset), expected[offset]) << offset;
    EXPECT_EQ(log->epoch_at(9), std::nullopt);
    EXPECT_EQ(log->epoch_at(-1), std::nullopt);
    ASSERT_TRUE(log->close().ok());
  }));
}

TEST(ReplicaAppend, RefusesGapsOverlapsBadCrcsAndEpochRegressionsWritingNothing) {
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    auto log = open_log(env);
    ASSERT_NE(log, nullptr);
    append_replica(*log, leader_batch(0, 2, 3));
    const Bytes before = all_bytes(*log);
    Bytes bad_crc = leader_batch(2, 1, 3);
    bad_crc.back() ^= 0x01;
    const Bytes whole = leader_batch(2, 2, 3);
    const Bytes torn(whole.begin(), whole.end() - 1);
    struct Case {
      const char* what;
      Bytes batches;
      ErrorCode error;
    };
    const std::vector<Case> cases = {
        {"a gap before the first batch", leader_batch(3, 1, 3), ErrorCode::kInvalidRequest},
        {"an overlap with the log", leader_batch(1, 2, 3), ErrorCode::kInvalidRequest},
        {"a gap between batches", concat_bytes({leader_batch(2, 1, 3), leader_batch(4, 1, 3)}),
         ErrorCode::kInvalidRequest},
        {"an overlap between batches", concat_bytes({leader_batch(2, 2, 3), leader_batch(3, 1, 3)}),
         ErrorCode::kInvalidRequest},
        {"a bad CRC", bad_crc, ErrorCode::kCorruptMessage},
        {"a bad CRC after a good batch", concat_bytes({leader_batch(2, 1, 3), bad_crc}), ErrorCode::kCorruptMessage},
        {"a torn batch", torn, ErrorCode::kCorruptMessage},
        {"no batch", Bytes(), ErrorCode::kCorruptMessage},
        {"an epoch below the log's", leader_batch(2, 1, 2), ErrorCode::kInvalidRequest},
        {"an epoch going down within the set", concat_bytes({leader_batch(2, 1, 5), leader_batch(3, 1, 4)}),
         ErrorCode::kInvalidRequest},
        {"no epoch after an epoch", leader_batch(2, 1, -1), ErrorCode::kInvalidRequest},
    };
    for (const Case& c : cases) {
      auto appended = log->append_as_replica(c.batches);
      ASSERT_FALSE(appended.ok()) << c.what;
      EXPECT_EQ(error_of(appended.status()), c.error) << c.what << ": " << appended.status().to_string();
      EXPECT_EQ(log->log_end_offset(), 2) << c.what;
    }
    EXPECT_EQ(all_bytes(*log), before);
    EXPECT_EQ(log->leader_epochs(), (Entries{{3, 0}}));
    append_replica(*log, leader_batch(2, 1, 3));  // the right next batch still goes in
    EXPECT_EQ(log->log_end_offset(), 3);
    ASSERT_TRUE(log->close().ok());
  }));
}

TEST(ReplicaAppend, BatchesWithoutAnEpochAreKeptAndStartNoEntry) {
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    auto log = open_log(env);
    ASSERT_NE(log, nullptr);
    append_replica(*log, concat_bytes({leader_batch(0, 2, -1), leader_batch(2, 1, -1)}));
    EXPECT_TRUE(log->leader_epochs().empty());
    EXPECT_EQ(log->epoch_at(1), std::nullopt);
    EXPECT_EQ(log->end_offset_for_epoch(0), (EpochEndOffset{}));
    append_replica(*log, leader_batch(3, 2, 0));
    EXPECT_EQ(log->leader_epochs(), (Entries{{0, 3}}));
    EXPECT_EQ(log->epoch_at(2), std::nullopt);
    EXPECT_EQ(log->epoch_at(3), 0);
    ASSERT_TRUE(log->close().ok());
  }));
}

TEST(ReplicaAppend, RollsAndSyncsAsAnAppendDoes) {
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    LogSettings settings = small_settings();
    settings.segment_bytes = 300;
    settings.persisted = true;
    auto log = open_log(env, settings);
    ASSERT_NE(log, nullptr);
    int64_t next = 0;
    for (int i = 0; i < 12; ++i) {
      auto appended = log->append_as_replica(leader_batch(next, 2, 1 + i / 4));
      ASSERT_TRUE(appended.ok()) << appended.status().to_string();
      EXPECT_FALSE(appended->sync_deferred);
      next += 2;
      EXPECT_EQ(log->durable_end_offset(), next) << "persisted: durable before it returns";
    }
    EXPECT_GT(log->segments().size(), 3u);
    EXPECT_EQ(log->leader_epochs(), (Entries{{1, 0}, {2, 8}, {3, 16}}));
    AppendOptions deferred;
    deferred.defer_sync = true;
    auto appended = log->append_as_replica(leader_batch(next, 1, 3), deferred);
    ASSERT_TRUE(appended.ok());
    EXPECT_TRUE(appended->sync_deferred);
    EXPECT_EQ(log->durable_end_offset(), next);
    ASSERT_TRUE(log->wait_for_durability(next + 1).ok());
    EXPECT_EQ(log->durable_end_offset(), next + 1);
    for (int64_t offset = 0; offset <= next; ++offset) {
      auto base = log->batch_base_offset_containing(offset);
      ASSERT_TRUE(base.ok()) << offset;
      EXPECT_EQ(*base, offset - offset % 2) << offset;
    }
    EXPECT_EQ(error_of(log->batch_base_offset_containing(next + 1).status()), ErrorCode::kOffsetOutOfRange);
    EXPECT_EQ(error_of(log->batch_base_offset_containing(-1).status()), ErrorCode::kOffsetOutOfRange);
    ASSERT_TRUE(log->advance_log_start(3).ok());
    EXPECT_EQ(error_of(log->batch_base_offset_containing(2).status()), ErrorCode::kOffsetOutOfRange);
    auto straddling = log->batch_base_offset_containing(3);
    ASSERT_TRUE(straddling.ok());
    EXPECT_EQ(*straddling, 2) << "the batch holding the log start begins below it";
    ASSERT_TRUE(log->close().ok());
  }));
}

TEST(ReplicaAppend, TheLeaderPathSetsOffsetsAndEpochInTheHeader) {
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    auto log = open_log(env);
    ASSERT_NE(log, nullptr);
    Bytes produced = concat_bytes({batch_of(2, 1000, "a"), batch_of(3, 1000, "b")});  // offsets from 0, epoch -1
    auto next = set_offsets_and_epoch(produced, 0, 7);
    ASSERT_TRUE(next.ok());
    EXPECT_EQ(*next, 5);
    append_replica(*log, produced);
    for (const BatchHeader& h : headers_of(all_bytes(*log))) EXPECT_EQ(h.partition_leader_epoch, 7);
    EXPECT_EQ(all_bytes(*log), produced);
    Bytes again = batch_of(1, 1000, "c");
    ASSERT_TRUE(set_offsets_and_epoch(again, 9, 7).ok());
    EXPECT_EQ(error_of(log->append_as_replica(again).status()), ErrorCode::kInvalidRequest);
    Bytes partial = batch_of(1, 1000, "c");
    partial.pop_back();
    EXPECT_FALSE(set_offsets_and_epoch(partial, 5, 7).ok());
    ASSERT_TRUE(log->close().ok());
  }));
}

TEST(ReplicaAppend, AppendWithALeaderEpochStampsEveryBatchAndRefusesAnOlderEpoch) {
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    auto log = open_log(env);
    ASSERT_NE(log, nullptr);
    for (const bool log_append_time : {false, true}) {
      AppendOptions options;
      options.leader_epoch = log_append_time ? 6 : 5;
      options.log_append_time = log_append_time;
      auto appended = log->append(concat_bytes({batch_of(2, 1000), batch_of(1, 1000)}), options);
      ASSERT_TRUE(appended.ok()) << appended.status().to_string();
    }
    const Bytes stored = all_bytes(*log);
    std::vector<int32_t> epochs;
    for (const BatchHeader& h : headers_of(stored)) epochs.push_back(h.partition_leader_epoch);
    EXPECT_EQ(epochs, (std::vector<int32_t>{5, 5, 6, 6}));
    size_t consumed = 0;
    const Result<std::vector<BatchSpan>> spans = split_batches(stored, &consumed);
    ASSERT_TRUE(spans.ok());
    for (const BatchSpan& span : *spans) {
      EXPECT_TRUE(batch_crc_ok(ByteView(stored).subspan(span.position, span.header.size_bytes())));
    }
    EXPECT_EQ(log->leader_epochs(), (Entries{{5, 0}, {6, 3}}));
    AppendOptions older;
    older.leader_epoch = 4;
    auto refused = log->append(batch_of(1, 1000), older);
    EXPECT_EQ(error_of(refused.status()), ErrorCode::kNotLeaderOrFollower);
    EXPECT_EQ(log->log_end_offset(), 6);
    ASSERT_TRUE(log->close().ok());
  }));
}

TEST(ReplicaAppend, TheLogManagerKeepsALeadersTimestampsOnALogAppendTimeTopic) {
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    auto manager = open_log_manager(env);
    ASSERT_NE(manager, nullptr);
    const TopicPartition tp{"t", 0};
    ASSERT_TRUE(manager->create_partition(tp, topic_config_with({{"message.timestamp.type", "LogAppendTime"}})).ok());
    const Bytes batch = leader_batch(0, 2, 1, "r", 1234);
    auto appended = manager->append_as_replica(tp, batch);
    ASSERT_TRUE(appended.ok()) << appended.status().to_string();
    EXPECT_EQ(appended->log_append_time_ms, -1);
    EXPECT_EQ(all_bytes(*manager->find(tp)), batch);
    EXPECT_EQ(error_of(manager->append_as_replica({"t", 9}, batch).status()), ErrorCode::kUnknownTopicOrPartition);
    ASSERT_TRUE(manager->close().ok());
  }));
}

TEST(LeaderEpochs, EndOffsetForEpochAndLastOffsetWithEpochAtMostFollowTheLog) {
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    auto log = open_log(env);
    ASSERT_NE(log, nullptr);
    EXPECT_EQ(log->last_offset_with_epoch_at_most(100, 5), -1) << "an empty log";
    append_replica(*log, concat_bytes({leader_batch(0, 2, -1), leader_batch(2, 3, 1), leader_batch(5, 2, 3),
                                       leader_batch(7, 3, 4)}));
    EXPECT_EQ(log->end_offset_for_epoch(4), (EpochEndOffset{4, 10}));
    EXPECT_EQ(log->end_offset_for_epoch(3), (EpochEndOffset{3, 7}));
    EXPECT_EQ(log->end_offset_for_epoch(2), (EpochEndOffset{1, 5}));
    EXPECT_EQ(log->end_offset_for_epoch(0), (EpochEndOffset{0, 2}));
    EXPECT_EQ(log->end_offset_for_epoch(5), (EpochEndOffset{}));
    EXPECT_EQ(log->end_offset_for_epoch(-1), (EpochEndOffset{}));
    EXPECT_EQ(log->last_offset_with_epoch_at_most(100, 4), 9);
    EXPECT_EQ(log->last_offset_with_epoch_at_most(8, 4), 8);
    EXPECT_EQ(log->last_offset_with_epoch_at_most(100, 3), 6);
    EXPECT_EQ(log->last_offset_with_epoch_at_most(100, 2), 4);
    EXPECT_EQ(log->last_offset_with_epoch_at_most(3, 2), 3);
    EXPECT_EQ(log->last_offset_with_epoch_at_most(100, 0), 1) << "offsets without an epoch count as -1";
    EXPECT_EQ(log->last_offset_with_epoch_at_most(100, -1), 1);
    EXPECT_EQ(log->last_offset_with_epoch_at_most(-1, 4), -1);
    ASSERT_TRUE(log->close().ok());
  }));
}

TEST(LeaderEpochs, PersistInKafkasFileAcrossAReopen) {
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    {
      auto log = open_log(env);
      ASSERT_NE(log, nullptr);
      EXPECT_FALSE(env.fs.exists("p0/leader-epoch-checkpoint").value()) << "a creation costs no extra syncs";
      append_replica(*log, leader_batch(0, 2, -1));
      EXPECT_FALSE(env.fs.exists("p0/leader-epoch-checkpoint").value()) << "no epoch yet";
      append_replica(*log, concat_bytes({leader_batch(2, 2, 1), leader_batch(4, 2, 3)}));
      EXPECT_EQ(file_text(env.fs, "p0/leader-epoch-checkpoint"), "0\n2\n1 2\n3 4\n");
      ASSERT_TRUE(log->close().ok());
    }
    {
      auto log = open_log(env);
      ASSERT_NE(log, nullptr);
      EXPECT_EQ(log->leader_epochs(), (Entries{{1, 2}, {3, 4}}));
      ASSERT_TRUE(log->close().ok());
    }
    // A log that never saw an epoch gets its (empty) file at close: the next open need not walk its batches.
    auto plain = open_log(env, small_settings(), "p1");
    ASSERT_NE(plain, nullptr);
    ASSERT_TRUE(plain->append(batch_of(2, 1000)).ok());
    EXPECT_FALSE(env.fs.exists("p1/leader-epoch-checkpoint").value());
    ASSERT_TRUE(plain->close().ok());
    EXPECT_EQ(file_text(env.fs, "p1/leader-epoch-checkpoint"), "0\n0\n");
  }));
}

TEST(LeaderEpochs, AreRebuiltFromTheBatchesWhenTheFileIsMissingDamagedOrStale) {
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    {
      auto log = open_log(env);
      ASSERT_NE(log, nullptr);
      append_replica(*log, concat_bytes({leader_batch(0, 2, 1), leader_batch(2, 2, 3), leader_batch(4, 1, 3)}));
      ASSERT_TRUE(log->close().ok());
    }
    const std::string path = "p0/leader-epoch-checkpoint";
    auto write = [&env, &path](const std::string& text) {
      ASSERT_TRUE(write_file_atomically(env.fs, path, path + ".x", as_bytes(text)).ok());
    };
    const std::vector<std::function<void()>> damage = {
        [&] { ASSERT_TRUE(env.fs.remove(path).ok()); },
        [&] { write("garbage"); },
        [&] { write("0\n3\n1 0\n"); },        // torn
        [&] { write("0\n1\n1 0\n"); },        // stale: lacks epoch 3
        [&] { write("0\n2\n1 0\n2 2\n"); },   // foreign: epoch 2 where the batches say 3
    };
    for (size_t i = 0; i < damage.size(); ++i) {
      damage[i]();
      auto log = open_log(env);
      ASSERT_NE(log, nullptr);
      EXPECT_EQ(log->leader_epochs(), (Entries{{1, 0}, {3, 2}})) << i;
      EXPECT_EQ(file_text(env.fs, path), "0\n2\n1 0\n3 2\n") << i << ": rewritten";
      ASSERT_TRUE(log->close().ok());
    }
  }));
}

TEST(LeaderEpochs, FollowTheLogStartAsKafkasTruncateFromStart) {
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    auto log = open_log(env);
    ASSERT_NE(log, nullptr);
    append_replica(*log, concat_bytes({leader_batch(0, 2, 2), leader_batch(2, 2, 3), leader_batch(4, 3, 4),
                                       leader_batch(7, 1, 4)}));
    ASSERT_TRUE(log->advance_log_start(1).ok());
    EXPECT_EQ(log->leader_epochs(), (Entries{{2, 1}, {3, 2}, {4, 4}}));
    EXPECT_EQ(log->epoch_at(0), std::nullopt) << "below the log start";
    ASSERT_TRUE(log->advance_log_start(5).ok());
    EXPECT_EQ(log->leader_epochs(), (Entries{{4, 5}}));
    EXPECT_EQ(log->end_offset_for_epoch(3), (EpochEndOffset{3, 5})) << "older than any known";
    ASSERT_TRUE(log->close().ok());
    auto reopened = open_log(env);
    ASSERT_NE(reopened, nullptr);
    EXPECT_EQ(reopened->log_start_offset(), 5);
    EXPECT_EQ(reopened->leader_epochs(), (Entries{{4, 5}}));
    ASSERT_TRUE(reopened->close().ok());
  }));
}

TEST(LeaderEpochs, AClientsLowerEpochThroughAppendRewritesNoHistory) {
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    auto log = open_log(env);
    ASSERT_NE(log, nullptr);
    ASSERT_TRUE(log->append(leader_batch(0, 1, 4)).ok());  // append() keeps what a client sent
    ASSERT_TRUE(log->append(leader_batch(0, 1, 2)).ok());
    ASSERT_TRUE(log->append(leader_batch(0, 1, 6)).ok());
    EXPECT_EQ(log->leader_epochs(), (Entries{{4, 0}, {6, 2}}));
    EXPECT_EQ(log->epoch_at(1), 4);
    ASSERT_TRUE(log->close().ok());
  }));
}

TEST(LeaderEpochs, AnEpochWhoseFirstBatchAPowerLossTookIsDropped) {
  size_t dropped = 0;
  size_t kept = 0;
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    OneNode world(seed);
    ASSERT_TRUE(world.run([](Env env) {
      auto log = open_log(env);
      ASSERT_NE(log, nullptr);
      append_replica(*log, leader_batch(0, 2, 1));
      ASSERT_TRUE(log->flush().ok());
      append_replica(*log, leader_batch(2, 40, 2, "x", 1000));  // its epoch's file entry is synced, it is not
    }));
    world.node().power_loss();
    ASSERT_TRUE(world.run([&](Env env) {
      auto log = open_log(env);
      ASSERT_NE(log, nullptr);
      if (log->log_end_offset() == 2) {
        ++dropped;
        EXPECT_EQ(log->leader_epochs(), (Entries{{1, 0}}));
        EXPECT_EQ(log->latest_epoch(), 1);
      } else {
        ++kept;
        EXPECT_EQ(log->log_end_offset(), 42);
        EXPECT_EQ(log->leader_epochs(), (Entries{{1, 0}, {2, 2}}));
      }
      append_replica(*log, leader_batch(log->log_end_offset(), 1, 2));  // epoch 2 may (re)start there
      ASSERT_TRUE(log->close().ok());
    }));
  }
  EXPECT_GT(dropped, 0u) << "no seed lost the unsynced batch";
  EXPECT_GT(kept + dropped, 0u);
}

TEST(LeaderEpochs, TheInspectorShowsThem) {
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    auto log = open_log(env);
    ASSERT_NE(log, nullptr);
    append_replica(*log, concat_bytes({leader_batch(0, 2, 1), leader_batch(2, 2, 3)}));
    ASSERT_TRUE(log->close().ok());
    auto report = inspect_partition(env, "p0", InspectOptions{});
    ASSERT_TRUE(report.ok()) << report.status().to_string();
    ASSERT_TRUE(report->leader_epochs.has_value());
    EXPECT_EQ(*report->leader_epochs, (Entries{{1, 0}, {3, 2}}));
    EXPECT_TRUE(report->other_files.empty());
    const std::string text = format_report(*report);
    EXPECT_NE(text.find("leader epochs (epoch from offset): 1 from 0, 3 from 2\n"), std::string::npos) << text;
    EXPECT_NE(format_reports_json({*report}).find(
                  "\"leader_epochs\":[{\"epoch\":1,\"start_offset\":0},{\"epoch\":3,\"start_offset\":2}]"),
              std::string::npos);
  }));
}

}  // namespace
}  // namespace sluice::storage
