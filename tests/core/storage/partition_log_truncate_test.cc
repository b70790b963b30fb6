// PartitionLog::truncate_to (Kafka's Log.truncateTo, raft's suffix truncation): where it may cut, what it leaves,
// what it makes durable, what it does to the epoch cache, the high watermark, waiters, readers and the cleaner.
// The power-loss sweep over its steps is in partition_log_truncate_sweep_test.cc.
#include <gtest/gtest.h>

#include "core/storage/cleaner.h"
#include "core/storage/partition_log.h"
#include "tests/core/storage/log_test_util.h"
#include "tests/probe_hits.h"

namespace sluice::storage {
namespace {

using namespace log_testing;
using Entries = std::vector<EpochEntry>;

std::unique_ptr<PartitionLog> open_log(Env env, const LogSettings& settings, const std::string& dir = "p0") {
  auto log = PartitionLog::open(env, dir, settings);
  EXPECT_TRUE(log.ok()) << log.status().to_string();
  return log.ok() ? std::move(*log) : nullptr;
}

LogSettings segmented() {
  LogSettings settings = small_settings();
  settings.segment_bytes = 300;  // three batches of `fill` a segment
  return settings;
}

// 12 batches of 2 records, offsets 0..23, epochs 1 (0..7), 2 (8..15), 5 (16..23), over several segments.
Bytes fill(PartitionLog& log) {
  Bytes all;
  for (int i = 0; i < 12; ++i) {
    const int32_t epoch = i < 4 ? 1 : i < 8 ? 2 : 5;
    Bytes batch = leader_batch(2 * i, 2, epoch);
    auto appended = log.append_as_replica(batch);
    EXPECT_TRUE(appended.ok()) << appended.status().to_string();
    all.insert(all.end(), batch.begin(), batch.end());
  }
  return all;
}

// The prefix of `all` (whole batches back to back) holding the batches below `end`.
Bytes prefix_below(const Bytes& all, int64_t end) {
  size_t consumed = 0;
  size_t bytes = 0;
  const Result<std::vector<BatchSpan>> spans = split_batches(all, &consumed);
  EXPECT_TRUE(spans.ok());
  for (const BatchSpan& span : *spans) {
    if (span.header.base_offset >= end) break;
    bytes = span.position + span.header.size_bytes();
  }
  return Bytes(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(bytes));
}

std::string epoch_file(FileSystem& fs) {
  auto file = fs.open("p0/leader-epoch-checkpoint", OpenMode::kRead);
  if (!file.ok()) return "<missing>";
  auto bytes = read_whole_file(**file);
  return bytes.ok() ? std::string(as_chars(*bytes)) : "<unreadable>";
}

TEST(TruncateTo, InsideASegmentKeepsThePrefixAndTakesNewBatchesAtTheCut) {
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    auto log = open_log(env, segmented());
    ASSERT_NE(log, nullptr);
    const Bytes all = fill(*log);
    const size_t segments = log->segments().size();
    ASSERT_GT(segments, 3u);
    // A cut that is neither a segment base nor the log end.
    int64_t cut = -1;
    for (int64_t offset = 22; offset > 0; offset -= 2) {
      bool base = false;
      for (const SegmentInfo& s : log->segments()) base |= s.base_offset == offset;
      if (!base && offset < 16) {
        cut = offset;
        break;
      }
    }
    ASSERT_GT(cut, 0);
    ASSERT_TRUE(log->truncate_to(cut).ok());
    EXPECT_EQ(log->log_end_offset(), cut);
    EXPECT_EQ(log->high_watermark(), cut);
    EXPECT_EQ(log->durable_end_offset(), cut) << "durable before it returns";
    EXPECT_EQ(log->recovery_point(), cut);
    EXPECT_EQ(all_bytes(*log), prefix_below(all, cut));
    EXPECT_LT(log->segments().size(), segments);
    EXPECT_EQ(log->segments().back().next_offset, cut);
    EXPECT_EQ(log->latest_epoch(), cut > 8 ? 2 : 1);
    EXPECT_EQ(log->epoch_at(cut), std::nullopt);
    EXPECT_GT(log->pending_deletions(), 0u) << "the segments above went to .deleted";
    const Bytes more = leader_batch(cut, 3, 7);
    ASSERT_TRUE(log->append_as_replica(more).ok());
    EXPECT_EQ(all_bytes(*log), concat_bytes({prefix_below(all, cut), more}));
    EXPECT_EQ(log->epoch_at(cut), 7);
    EXPECT_EQ(log->epoch_at(cut - 1), cut > 8 ? 2 : 1);
    ASSERT_TRUE(log->close().ok());
    auto reopened = open_log(env, segmented());
    ASSERT_NE(reopened, nullptr);
    EXPECT_EQ(all_bytes(*reopened), concat_bytes({prefix_below(all, cut), more}));
    EXPECT_EQ(reopened->epoch_at(cut), 7);
    ASSERT_TRUE(reopened->close().ok());
  }));
}

TEST(TruncateTo, AtASegmentBaseKeepsThatSegmentEmptyAsKafkaDoes) {
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    auto log = open_log(env, segmented());
    ASSERT_NE(log, nullptr);
    const Bytes all = fill(*log);
    const std::vector<SegmentInfo> before = log->segments();
    const std::vector<SegmentFiles> files_before = log->segment_files();
    ASSERT_GT(before.size(), 2u);
    const int64_t cut = before[1].base_offset;
    ASSERT_TRUE(log->truncate_to(cut).ok());
    const std::vector<SegmentInfo> after = log->segments();
    ASSERT_EQ(after.size(), 2u);
    EXPECT_EQ(after[1].base_offset, cut);
    EXPECT_EQ(after[1].size_bytes, 0u);
    EXPECT_EQ(after[0].next_offset, cut);
    EXPECT_EQ(all_bytes(*log), prefix_below(all, cut));
    for (size_t i = 2; i < before.size(); ++i) {
      const std::string& log_file = files_before[i].log_file;
      EXPECT_FALSE(env.fs.exists(log_file).value()) << log_file;
      EXPECT_TRUE(env.fs.exists(log_file + ".deleted").value()) << log_file;
    }
    ASSERT_TRUE(log->close().ok());
  }));
}

TEST(TruncateTo, ToTheLogStartEmptiesTheLogAndToTheLogEndChangesNothing) {
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    auto log = open_log(env, segmented());
    ASSERT_NE(log, nullptr);
    const Bytes all = fill(*log);
    ASSERT_TRUE(log->truncate_to(24).ok());
    EXPECT_EQ(all_bytes(*log), all);
    ASSERT_TRUE(log->advance_log_start(4).ok());
    ASSERT_TRUE(log->truncate_to(4).ok());
    EXPECT_EQ(log->log_start_offset(), 4);
    EXPECT_EQ(log->log_end_offset(), 4);
    EXPECT_TRUE(all_bytes(*log).empty());
    EXPECT_TRUE(log->leader_epochs().empty());
    EXPECT_EQ(log->latest_epoch(), std::nullopt);
    EXPECT_EQ(epoch_file(env.fs), "0\n0\n");
    ASSERT_TRUE(log->append_as_replica(leader_batch(4, 1, 9)).ok());
    EXPECT_EQ(log->leader_epochs(), (Entries{{9, 4}}));
    ASSERT_TRUE(log->close().ok());
    auto reopened = open_log(env, segmented());
    ASSERT_NE(reopened, nullptr);
    EXPECT_EQ(reopened->log_start_offset(), 4);
    EXPECT_EQ(reopened->log_end_offset(), 5);
    ASSERT_TRUE(reopened->close().ok());
  }));
}

TEST(TruncateTo, RefusesAnOffsetOutsideTheLogOrInsideABatch) {
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    auto log = open_log(env, segmented());
    ASSERT_NE(log, nullptr);
    const Bytes all = fill(*log);
    ASSERT_TRUE(log->advance_log_start(2).ok());
    for (const int64_t bad : {int64_t{-1}, int64_t{0}, int64_t{1}, int64_t{3}, int64_t{13}, int64_t{23},
                              int64_t{25}}) {
      Status refused = log->truncate_to(bad);
      EXPECT_EQ(refused.code(), Code::kInvalidArgument) << bad;
      EXPECT_EQ(error_of(refused), ErrorCode::kInvalidRequest) << bad;
    }
    EXPECT_NE(log->truncate_to(13).message().find("inside the batch [12, 13]"), std::string::npos);
    EXPECT_EQ(log->log_end_offset(), 24);
    EXPECT_EQ(all_bytes(*log), Bytes(all.begin() + static_cast<std::ptrdiff_t>(prefix_below(all, 2).size()),
                                     all.end()));
    ASSERT_TRUE(log->close().ok());
  }));
}

TEST(TruncateTo, CutsTheEpochCacheAndRewritesItsFileBeforeReturning) {
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    auto log = open_log(env, segmented());
    ASSERT_NE(log, nullptr);
    fill(*log);
    EXPECT_EQ(epoch_file(env.fs), "0\n3\n1 0\n2 8\n5 16\n");
    ASSERT_TRUE(log->truncate_to(16).ok());
    EXPECT_EQ(log->leader_epochs(), (Entries{{1, 0}, {2, 8}}));
    EXPECT_EQ(epoch_file(env.fs), "0\n2\n1 0\n2 8\n");
    EXPECT_EQ(log->end_offset_for_epoch(2), (EpochEndOffset{2, 16}));
    EXPECT_EQ(log->end_offset_for_epoch(5), (EpochEndOffset{}));
    ASSERT_TRUE(log->truncate_to(10).ok());
    EXPECT_EQ(log->leader_epochs(), (Entries{{1, 0}, {2, 8}}));
    ASSERT_TRUE(log->truncate_to(8).ok());
    EXPECT_EQ(log->leader_epochs(), (Entries{{1, 0}}));
    EXPECT_EQ(epoch_file(env.fs), "0\n1\n1 0\n");
    ASSERT_TRUE(log->close().ok());
  }));
}

TEST(TruncateTo, ACallerDrivenHighWatermarkIsCappedAtTheCut) {
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    LogSettings settings = segmented();
    settings.high_watermark_follows_log_end = false;
    auto log = open_log(env, settings);
    ASSERT_NE(log, nullptr);
    fill(*log);
    EXPECT_EQ(log->high_watermark(), 0) << "appends never move it";
    log->set_high_watermark(10);
    ASSERT_TRUE(log->truncate_to(14).ok());
    EXPECT_EQ(log->high_watermark(), 10);
    ASSERT_TRUE(log->truncate_to(6).ok());
    EXPECT_EQ(log->high_watermark(), 6);
    ASSERT_TRUE(log->append_as_replica(leader_batch(6, 2, 3)).ok());
    EXPECT_EQ(log->high_watermark(), 6);
    auto read = log->read_committed(6, 1000);
    ASSERT_TRUE(read.ok());
    EXPECT_TRUE(read->records.empty()) << "nothing above the high watermark is served to consumers";
    ASSERT_TRUE(log->close().ok());
  }));
}

TEST(TruncateTo, FailsTheDurabilityWaitOfAnAppendItCut) {
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    LogSettings settings = segmented();
    settings.persisted = true;
    auto log = open_log(env, settings);
    ASSERT_NE(log, nullptr);
    ASSERT_TRUE(log->append_as_replica(leader_batch(0, 2, 1)).ok());
    AppendOptions deferred;
    deferred.defer_sync = true;
    auto appended = log->append_as_replica(leader_batch(2, 2, 1), deferred);
    ASSERT_TRUE(appended.ok());
    ASSERT_TRUE(appended->sync_deferred);
    ASSERT_TRUE(log->truncate_to(2).ok());
    Status waited = log->wait_for_durability(4);
    EXPECT_EQ(error_of(waited), ErrorCode::kNotLeaderOrFollower) << waited.to_string();
    EXPECT_TRUE(log->wait_for_durability(2).ok());
    // Waiters parked on a running round when the cut comes fail too, and the log stays usable.
    ASSERT_TRUE(log->append_as_replica(leader_batch(2, 2, 1), deferred).ok());
    Status parked;
    bool finished = false;
    env.scheduler.spawn("waiter", [&] {
      parked = log->wait_for_durability(4);
      finished = true;
    });
    ASSERT_TRUE(log->truncate_to(2).ok());
    while (!finished) env.scheduler.yield();
    EXPECT_TRUE(parked.ok() || error_of(parked) == ErrorCode::kNotLeaderOrFollower) << parked.to_string();
    ASSERT_TRUE(log->append_as_replica(leader_batch(2, 1, 2)).ok());
    EXPECT_EQ(log->durable_end_offset(), 3);
    ASSERT_TRUE(log->close().ok());
  }));
}

TEST(TruncateTo, ReadsAfterTheCutServeTheNewBatchesNotStalePositions) {
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    auto log = open_log(env, segmented());
    ASSERT_NE(log, nullptr);
    fill(*log);
    for (int64_t offset = 0; offset < 24; offset += 2) ASSERT_TRUE(log->read(offset, 1, INT64_MAX).ok());  // hints
    ASSERT_TRUE(log->truncate_to(18).ok());
    std::vector<Bytes> fresh;
    for (int64_t offset = 18; offset < 30; offset += 3) {
      fresh.push_back(leader_batch(offset, 3, 8, "new"));
      ASSERT_TRUE(log->append_as_replica(fresh.back()).ok());
    }
    for (int64_t offset = 18; offset < 30; ++offset) {
      auto read = log->read(offset, 1, INT64_MAX);
      ASSERT_TRUE(read.ok()) << offset << ": " << read.status().to_string();
      EXPECT_EQ(read->records, fresh[static_cast<size_t>((offset - 18) / 3)]) << offset;
    }
    ASSERT_TRUE(log->close().ok());
  }));
}

// Twenty rounds of a truncation to an even offset below 10 and the batches of two up to 24 written again.
void cut_and_rewrite(PartitionLog& log) {
  for (int round = 0; round < 20; ++round) {
    const int64_t cut = 2 * (round % 5);
    ASSERT_TRUE(log.truncate_to(cut).ok());
    for (int64_t offset = cut; offset < 24; offset += 2) {
      ASSERT_TRUE(log.append_as_replica(leader_batch(offset, 2, 10 + round, "round" + std::to_string(round))).ok());
    }
  }
}

TEST(TruncateTo, ConcurrentReadersSeeOldOrNewBatchesNeverAMix) {
  OneNode world(7);
  ASSERT_TRUE(world.run([](Env env) {
    auto log = open_log(env, segmented());
    ASSERT_NE(log, nullptr);
    fill(*log);
    const uint64_t retried_before = probe_hits("partition_log.read_retried_after_cut");
    bool stop = false;
    int reads = 0;
    int refused = 0;
    std::vector<FiberRef> readers;
    for (int r = 0; r < 3; ++r) {
      readers.push_back(env.scheduler.spawn("reader", [&, r] {
        while (!stop) {
          const int64_t end = log->log_end_offset();
          const int64_t offset = end == 0 ? 0 : (reads * 7 + r) % end;
          auto read = log->read(offset, 200, INT64_MAX);
          if (!read.ok()) {
            // Out of range after a cut, or a read a cut kept failing: never damage.
            EXPECT_TRUE(error_of(read.status()) == ErrorCode::kOffsetOutOfRange ||
                        error_of(read.status()) == ErrorCode::kNotLeaderOrFollower)
                << read.status().to_string();
            ++refused;
          } else {
            size_t consumed = 0;
            auto spans = split_batches(read->records, &consumed);
            EXPECT_TRUE(spans.ok() && consumed == read->records.size());
            for (const BatchSpan& span : *spans) {
              const ByteView bytes = ByteView(read->records).subspan(span.position, span.header.size_bytes());
              EXPECT_TRUE(batch_crc_ok(bytes)) << "a batch mixed from two versions";
              auto records = decode_records(bytes);
              ASSERT_TRUE(records.ok());
              EXPECT_EQ(records->front().offset, span.header.base_offset);
            }
          }
          ++reads;
          // A read at the log end suspends nowhere, and a yield alone would never let virtual time (and so the
          // truncating fiber's I/O) advance.
          env.scheduler.sleep_for(std::chrono::microseconds(100));
        }
      }));
    }
    cut_and_rewrite(*log);
    stop = true;
    for (FiberRef& reader : readers) env.scheduler.join(reader);
    EXPECT_GT(reads, 20);
    EXPECT_GT(probe_hits("partition_log.read_retried_after_cut"), retried_before) << "no read raced a cut";
    ASSERT_TRUE(log->close().ok());
  }));
}

// cluster_pause_slow_disk_swizzle seed 390: an acks=all wait looked up its entry's start on the producer's fiber
// while the raft driver truncated the same segment; the lookup failed "cut while being read" and took the
// partition's raft group offline. A lookup a cut interrupts starts over, as a read does.
TEST(TruncateTo, BatchLookupsRacingCutsStartOverAndNeverFail) {
  OneNode world(7);
  ASSERT_TRUE(world.run([](Env env) {
    auto log = open_log(env, segmented());
    ASSERT_NE(log, nullptr);
    fill(*log);
    const uint64_t retried_before = probe_hits("partition_log.batch_lookup_retried_after_cut");
    bool stop = false;
    int lookups = 0;
    std::vector<FiberRef> lookers;
    for (int r = 0; r < 3; ++r) {
      lookers.push_back(env.scheduler.spawn("looker", [&, r] {
        while (!stop) {
          const int64_t end = log->log_end_offset();
          if (end > 0) {
            const int64_t offset = (lookups * 7 + r) % end;
            auto base = log->batch_base_offset_containing(offset);
            if (base.ok()) {
              EXPECT_LE(*base, offset);
              EXPECT_EQ(*base % 2, 0) << "batches of two start at even offsets";
            } else {
              EXPECT_EQ(error_of(base.status()), ErrorCode::kOffsetOutOfRange) << base.status().to_string();
            }
          }
          ++lookups;
          env.scheduler.sleep_for(std::chrono::microseconds(100));
        }
      }));
    }
    cut_and_rewrite(*log);
    stop = true;
    for (FiberRef& looker : lookers) env.scheduler.join(looker);
    EXPECT_GT(lookups, 20);
    EXPECT_GT(probe_hits("partition_log.batch_lookup_retried_after_cut"), retried_before) << "no lookup raced a cut";
    ASSERT_TRUE(log->close().ok());
  }));
}

TEST(TruncateTo, IntoAGapCompactionLeftKeepsTheLogEndAtTheCut) {
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    LogSettings settings = small_settings();
    auto log = open_log(env, settings);
    ASSERT_NE(log, nullptr);
    const int64_t now = to_unix_ms(env.clock.wall_now());
    ASSERT_TRUE(log->append(one_record("a", "old", now)).ok());  // 0: superseded by 1
    ASSERT_TRUE(log->append(one_record("a", "new", now)).ok());  // 1
    ASSERT_TRUE(log->append(one_record("b", "b", now)).ok());    // 2
    ASSERT_TRUE(log->roll().ok());
    ASSERT_TRUE(log->append(one_record("c", "c", now)).ok());  // 3, in the active segment
    int64_t checkpoint = 0;
    auto cleaned = clean_once(*log, checkpoint, CleanerOptions{}, now, /*force=*/true);
    ASSERT_TRUE(cleaned.ok()) << cleaned.status().to_string();
    ASSERT_EQ(cleaned->records_removed, 1);
    auto base = log->batch_base_offset_containing(0);
    ASSERT_TRUE(base.ok());
    EXPECT_EQ(*base, 1) << "offset 0 lies in a gap: the next batch's base";
    ASSERT_TRUE(log->truncate_to(1).ok());
    EXPECT_EQ(log->log_end_offset(), 1);
    EXPECT_TRUE(all_bytes(*log).empty());
    auto after_cut = log->batch_base_offset_containing(0);
    ASSERT_TRUE(after_cut.ok());
    EXPECT_EQ(*after_cut, 1) << "a gap up to the log end: the log end";
    ASSERT_TRUE(log->append_as_replica(leader_batch(1, 1, 2)).ok());
    ASSERT_TRUE(log->close().ok());
    auto reopened = open_log(env, settings);
    ASSERT_NE(reopened, nullptr);
    EXPECT_EQ(reopened->log_end_offset(), 2);
    EXPECT_EQ(reopened->epoch_at(1), 2);
    ASSERT_TRUE(reopened->close().ok());
  }));
}

TEST(TruncateTo, TheLogManagerTruncatesOnTheMaintenanceTurnAndLowersTheCleanerCheckpoint) {
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    auto manager = open_log_manager(env);
    ASSERT_NE(manager, nullptr);
    const TopicPartition tp{"t", 0};
    ASSERT_TRUE(manager
                    ->create_partition(tp, topic_config_with({{"cleanup.policy", "compact"},
                                                              {"segment.bytes", "200"},
                                                              {"min.cleanable.dirty.ratio", "0.01"}}))
                    .ok());
    const int64_t now = to_unix_ms(env.clock.wall_now());
    for (int i = 0; i < 12; ++i) {
      ASSERT_TRUE(manager->append(tp, one_record("k" + std::to_string(i % 2), "v" + std::to_string(i), now)).ok());
    }
    auto cleaned = manager->run_cleaner_once(now);
    ASSERT_TRUE(cleaned.ok()) << cleaned.status().to_string();
    ASSERT_TRUE(cleaned->has_value());
    const int64_t checkpoint = manager->cleaner_checkpoint(tp);
    ASSERT_GT(checkpoint, 2);
    ASSERT_TRUE(manager->truncate_to(tp, 2).ok());
    EXPECT_EQ(manager->find(tp)->log_end_offset(), 2);
    EXPECT_LE(manager->cleaner_checkpoint(tp), manager->find(tp)->segments().back().base_offset);
    EXPECT_EQ(manager->truncate_to({"t", 5}, 0).code(), Code::kNotFound);
    ASSERT_TRUE(manager->close().ok());
  }));
}

}  // namespace
}  // namespace sluice::storage
