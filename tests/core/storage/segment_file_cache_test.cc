// Closed segments' descriptors: the bounded handle cache itself (LRU, pins, forget), a log whose sealed segments read,
// rename, truncate and recover with their files closed, and a data directory of many segments over many
// partitions that a node serves and restarts under an open-file limit it would blow through with every file open.
#include "core/storage/segment_file_cache.h"

#include <gtest/gtest.h>

#include "sim/world/sim_file_system.h"
#include "tests/core/storage/log_test_util.h"

namespace sluice::storage {
namespace {

using namespace log_testing;

SimFileSystem& sim_fs(OneNode& world) { return static_cast<SimFileSystem&>(world.fs()); }

std::string read_text(File& file) {
  Bytes bytes(16);
  Result<size_t> got = file.pread(0, bytes);
  EXPECT_TRUE(got.ok()) << got.status().to_string();
  return got.ok() ? std::string(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(*got)) : "";
}

TEST(SegmentFileCache, EvictsTheLeastRecentlyUsedButNeverAPinnedHandle) {
  OneNode world;
  SimFileSystem& fs = sim_fs(world);
  ASSERT_TRUE(world.run([&fs](Env env) {
    for (int i = 0; i < 6; ++i) {
      auto file = env.fs.open("f" + std::to_string(i), OpenMode::kCreateNew);
      ASSERT_TRUE(file.ok());
      ASSERT_TRUE((*file)->append(to_bytes("file " + std::to_string(i))).ok());
      ASSERT_TRUE((*file)->close().ok());
    }
    const size_t baseline = fs.open_files();
    SegmentFileCache cache(env.fs, 2);
    std::vector<uint64_t> keys;
    for (int i = 0; i < 6; ++i) keys.push_back(cache.new_key());
    auto path = [](int i) { return "f" + std::to_string(i); };

    // Reads in flight on f0 and f1 hold them.
    auto acquired = [&cache, &keys, &path](int i) {
      Result<std::shared_ptr<File>> file = cache.acquire(keys[static_cast<size_t>(i)], path(i));
      EXPECT_TRUE(file.ok()) << file.status().to_string();
      return file.ok() ? *file : nullptr;
    };
    std::shared_ptr<File> pinned0 = acquired(0);
    std::shared_ptr<File> pinned1 = acquired(1);
    for (int i = 2; i < 5; ++i) EXPECT_EQ(read_text(*acquired(i)), "file " + std::to_string(i));
    // f0 and f1 are the least recently used but pinned: they stay, and the cache is over its capacity by them only.
    EXPECT_EQ(cache.size(), 3u);
    EXPECT_EQ(cache.pinned(), 2u);
    EXPECT_EQ(cache.evictions(), 2u);
    EXPECT_TRUE(cache.consistent());
    EXPECT_EQ(fs.open_files(), baseline + 3);
    EXPECT_EQ(read_text(*pinned0), "file 0");
    const uint64_t opens = cache.opens();
    EXPECT_EQ(acquired(0), pinned0);  // still cached: no open
    EXPECT_EQ(cache.opens(), opens);
    EXPECT_EQ(cache.hits(), 1u);

    pinned0.reset();  // the reads returned
    pinned1.reset();
    EXPECT_EQ(read_text(*acquired(5)), "file 5");  // trims back to the capacity
    EXPECT_EQ(cache.size(), 2u);
    EXPECT_EQ(fs.open_files(), baseline + 2);
    EXPECT_EQ(cache.evictions(), 4u);

    // A forgotten handle (its segment was deleted) closes when the read holding it returns, not before.
    std::shared_ptr<File> held = acquired(5);
    cache.forget(keys[5]);
    EXPECT_EQ(cache.size(), 1u);
    EXPECT_EQ(fs.open_files(), baseline + 2);
    EXPECT_EQ(read_text(*held), "file 5");
    held.reset();
    EXPECT_EQ(fs.open_files(), baseline + 1);
    EXPECT_TRUE(cache.consistent());
  }));
}

// One batch per segment: segment.bytes fits one batch, so every append after the first rolls.
LogSettings one_batch_segments(Env env, size_t cache_capacity) {
  LogSettings settings = small_settings();
  settings.segment_bytes = 120;
  settings.file_cache = std::make_shared<SegmentFileCache>(env.fs, cache_capacity);
  return settings;
}

TEST(SegmentFileCache, ClosedSegmentsReadRenameTruncateAndRecoverWithTheirFilesClosed) {
  OneNode world;
  SimFileSystem& fs = sim_fs(world);
  // The records' values from the log start, read segment by segment.
  auto values = [](PartitionLog& log) {
    std::vector<std::string> out;
    for (const Seen& seen : read_all(log)) out.push_back(seen.value.value_or("?"));
    return out;
  };
  auto expected = [](int from, int to) {
    std::vector<std::string> out;
    for (int i = from; i < to; ++i) out.push_back("v" + std::to_string(i) + "-0");
    return out;
  };
  ASSERT_TRUE(world.run([&](Env env) {
    const size_t baseline = fs.open_files();
    LogSettings settings = one_batch_segments(env, 2);
    auto log = PartitionLog::open(env, "p", settings);
    ASSERT_TRUE(log.ok()) << log.status().to_string();
    for (int i = 0; i < 12; ++i) ASSERT_TRUE((*log)->append(batch_of(1, 1000 + i, "v" + std::to_string(i))).ok());
    ASSERT_EQ((*log)->segments().size(), 12u);
    // The active segment's three files and at most two cached .log handles.
    EXPECT_LE(fs.open_files(), baseline + 3 + 2);
    EXPECT_EQ(values(**log), expected(0, 12));  // every closed segment read through the cache
    EXPECT_LE(fs.open_files(), baseline + 3 + 2);
    EXPECT_EQ(settings.file_cache->size(), 2u);
    EXPECT_GE(settings.file_cache->evictions(), 9u);

    // Retention renames closed segments to .deleted; the rest still read.
    ASSERT_TRUE((*log)->advance_log_start(3).ok());
    auto removed = (*log)->remove_segments_below_log_start();
    ASSERT_TRUE(removed.ok());
    EXPECT_EQ(*removed, 3u);
    EXPECT_EQ(values(**log), expected(3, 12));

    // A replica's truncation into a closed segment: it opens again and becomes the active one.
    ASSERT_TRUE((*log)->truncate_to(7).ok());
    ASSERT_TRUE((*log)->append(batch_of(1, 2000, "after")).ok());
    const std::vector<Seen> seen = read_all(**log);
    ASSERT_EQ(seen.size(), 5u);
    EXPECT_EQ(seen.back().offset, 7);
    EXPECT_EQ(seen.back().value, "after-0");
    EXPECT_LE(fs.open_files(), baseline + 3 + 2);
    ASSERT_TRUE((*log)->close().ok());
  }));
  // An unclean stop: recovery scans the segments above the recovery point with their files closed again after.
  ASSERT_TRUE(world.run([&](Env env) {
    const size_t baseline = fs.open_files();
    LogSettings settings = one_batch_segments(env, 2);
    auto log = PartitionLog::open(env, "p", settings);
    ASSERT_TRUE(log.ok()) << log.status().to_string();
    EXPECT_TRUE((*log)->load_stats().clean_shutdown);
    EXPECT_EQ((*log)->log_end_offset(), 8);
    ASSERT_TRUE((*log)->append(batch_of(1, 3000, "more")).ok());
    EXPECT_LE(fs.open_files(), baseline + 3 + 2);
    EXPECT_EQ(read_all(**log).size(), 6u);
    // No close: the next boot recovers.
  }));
  ASSERT_TRUE(world.run([&](Env env) {
    const size_t baseline = fs.open_files();
    LogSettings settings = one_batch_segments(env, 2);
    auto log = PartitionLog::open(env, "p", settings);
    ASSERT_TRUE(log.ok()) << log.status().to_string();
    EXPECT_FALSE((*log)->load_stats().clean_shutdown);
    EXPECT_EQ((*log)->log_end_offset(), 9);
    EXPECT_LE(fs.open_files(), baseline + 3 + 2);
    const std::vector<Seen> seen = read_all(**log);
    ASSERT_EQ(seen.size(), 6u);
    EXPECT_EQ(seen.back().value, "more-0");
    ASSERT_TRUE((*log)->close().ok());
  }));
}

// 640 segments over 64 partitions under a limit of 256 descriptors: the active segments take 192, the cache 32. With
// every file open the data directory would need 1,920, and the first open past the limit would fail (the load takes
// the partition offline, a roll takes the log offline). The real-disk test (tests/net/open_file_limit_test.cc) runs
// the full 20,000 segments over 2,000 partitions; here the simulated disk's directory syncs cost time with every
// file on the disk, so the same shape is scaled down.
TEST(SegmentFileCache, ManySegmentsServeAndRestartUnderAnOpenFileLimit) {
  constexpr int kPartitions = 64;
  constexpr int kSegmentsEach = 10;
  constexpr size_t kLimit = 256;
  OneNode world;
  SimFileSystem& fs = sim_fs(world);
  fs.set_open_file_limit(kLimit);
  BrokerStorageConfig config;
  config.max_open_segment_files = 32;
  const TopicConfig topic = topic_config_with({{"segment.bytes", "120"}});
  auto tp = [](int p) { return TopicPartition{"many", p}; };
  ASSERT_TRUE(world.run([&](Env env) {
    auto manager = open_log_manager(env, config);
    ASSERT_NE(manager, nullptr);
    ASSERT_TRUE(manager->create_partitions("many", 0, kPartitions, topic, "id").ok());
    for (int i = 0; i < kSegmentsEach; ++i) {
      for (int p = 0; p < kPartitions; ++p) {
        auto appended = manager->append(tp(p), batch_of(1, 1000 + i, "w" + std::to_string(i)));
        ASSERT_TRUE(appended.ok()) << appended.status().to_string();
      }
    }
    EXPECT_EQ(manager->find(tp(0))->segments().size(), static_cast<size_t>(kSegmentsEach));
    ASSERT_TRUE(manager->close().ok());
  }));
  for (int boot = 0; boot < 2; ++boot) {  // serve, then restart and serve again
    ASSERT_TRUE(world.run([&](Env env) {
      auto manager = open_log_manager(env, config);
      ASSERT_NE(manager, nullptr);
      EXPECT_TRUE(manager->offline_partitions().empty());
      ASSERT_EQ(manager->partitions().size(), static_cast<size_t>(kPartitions));
      for (int p = 0; p < kPartitions; ++p) {
        auto appended = manager->append(tp(p), batch_of(1, 5000 + boot, "boot" + std::to_string(boot)));
        ASSERT_TRUE(appended.ok()) << appended.status().to_string();
        EXPECT_EQ(appended->base_offset, kSegmentsEach + boot);
      }
      for (int p = 0; p < kPartitions; ++p) {
        PartitionLog& log = *manager->find(tp(p));
        EXPECT_TRUE(log.load_stats().clean_shutdown);
        const std::vector<Seen> seen = read_all(log);  // every segment of every partition
        ASSERT_EQ(seen.size(), static_cast<size_t>(kSegmentsEach + boot + 1));
        EXPECT_EQ(seen.front().value, "w0-0");
        EXPECT_EQ(seen.back().value, "boot" + std::to_string(boot) + "-0");
      }
      EXPECT_LE(manager->file_cache().size(), 32u);
      EXPECT_LE(fs.peak_open_files(), kLimit);
      std::printf("boot %d: %zu files open, peak %zu, cache %zu (%llu opens, %llu evictions)\n", boot, fs.open_files(),
                  fs.peak_open_files(), manager->file_cache().size(),
                  static_cast<unsigned long long>(manager->file_cache().opens()),
                  static_cast<unsigned long long>(manager->file_cache().evictions()));
      ASSERT_TRUE(manager->close().ok());
    }));
  }
}

}  // namespace
}  // namespace sluice::storage
