#include "core/storage/log_inspector.h"

#include <gtest/gtest.h>

#include "core/storage/log_manager.h"
#include "tests/core/storage/log_test_util.h"

namespace sluice::storage {
namespace {

using namespace log_testing;
constexpr int64_t kHour = 3600 * 1000;

InspectOptions options_at(Env env) {
  InspectOptions options;
  options.now_ms = to_unix_ms(env.clock.wall_now());
  return options;
}

TEST(LogInspector, ReportsSegmentsOffsetsAndTheCleanStop) {
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    auto manager = LogManager::open(env, "data", BrokerStorageConfig());
    ASSERT_TRUE(manager.ok());
    const TopicPartition tp{"orders", 0};
    auto config = TopicConfig::from_overrides({{"retention.ms", "3600000"}}, TopicConfig());
    ASSERT_TRUE(config.ok());
    PartitionLog* log = *(*manager)->create_partition(tp, *config);
    ASSERT_TRUE(log->append(batch_of(3, 1000)).ok());
    ASSERT_TRUE(log->roll().ok());
    ASSERT_TRUE(log->append(batch_of(2, 2000)).ok());
    ASSERT_TRUE((*manager)->close().ok());

    auto reports = inspect_path(env, "data", options_at(env));
    ASSERT_TRUE(reports.ok()) << reports.status().to_string();
    ASSERT_EQ(reports->size(), 1u);
    const PartitionReport& r = reports->front();
    EXPECT_TRUE(r.clean_shutdown_marker);
    EXPECT_TRUE(r.config_file_found);
    EXPECT_EQ(r.log_start_offset, 0);
    EXPECT_EQ(r.log_end_offset, 5);
    ASSERT_EQ(r.segments.size(), 2u);
    EXPECT_EQ(r.segments[0].last_offset, 2);
    EXPECT_EQ(r.segments[1].base_offset, 3);
    EXPECT_EQ(r.segments[1].records, 2);
    EXPECT_EQ(r.segments[1].max_timestamp, 2000);
    const std::string text = format_report(r);
    EXPECT_NE(text.find("00000000000000000003.log  offsets 3-4"), std::string::npos) << text;
    EXPECT_NE(text.find("retention.ms=3600000"), std::string::npos) << text;
    const std::string json = format_reports_json(*reports);
    EXPECT_NE(json.find("\"log_end_offset\":5"), std::string::npos) << json;
    EXPECT_NE(json.find("\"retention.ms\":\"3600000\""), std::string::npos) << json;
  }));
}

// Seed 004's question: why can I still read this expired message? The report says when it goes, and why.
TEST(LogInspector, ExplainsWhenTheOldestBatchExpiresAndWhyItIsStillReadable) {
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    LogSettings settings = small_settings();
    auto log = PartitionLog::open(env, "p", settings);
    ASSERT_TRUE(log.ok());
    const int64_t now = to_unix_ms(env.clock.wall_now());
    ASSERT_TRUE((*log)->append(batch_with({now - 2 * kHour, now - 10})).ok());  // one batch, one old record
    ASSERT_TRUE((*log)->close().ok());
    InspectOptions options = options_at(env);
    auto config = TopicConfig::from_overrides({{"retention.ms", "3600000"}}, TopicConfig());
    ASSERT_TRUE(config.ok());
    options.broker_defaults = *config;
    auto report = inspect_partition(env, "p", options);
    ASSERT_TRUE(report.ok());
    EXPECT_NE(report->retention.find("a batch goes only once its newest record is older"), std::string::npos)
        << report->retention;
    EXPECT_NE(report->retention.find("It expires at"), std::string::npos) << report->retention;
    ASSERT_TRUE(report->next_eviction_ms.has_value());
    EXPECT_EQ(*report->next_eviction_ms, now - 10 + kHour + options.retention_check_interval_ms);
  }));
}

TEST(LogInspector, ShowsDamageWithoutChangingAByte) {
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    auto log = PartitionLog::open(env, "p", small_settings());
    ASSERT_TRUE(log.ok());
    ASSERT_TRUE((*log)->append(batch_of(2, 1)).ok());
    ASSERT_TRUE((*log)->append(batch_of(2, 1)).ok());
    ASSERT_TRUE((*log)->close().ok());
    const std::string path = "p/00000000000000000000.log";
    {
      auto file = env.fs.open(path, OpenMode::kReadWrite);
      ASSERT_TRUE(file.ok());
      const uint8_t junk = 0x5a;
      ASSERT_TRUE((*file)->pwrite(70, ByteView(&junk, 1)).ok());  // inside the first batch's records
    }
    const uint64_t size_before = *(*env.fs.open(path, OpenMode::kRead))->size();
    auto report = inspect_partition(env, "p", options_at(env));
    ASSERT_TRUE(report.ok());
    ASSERT_EQ(report->segments.size(), 1u);
    EXPECT_NE(report->segments[0].damage.find("CRC mismatch in the batch at byte 0"), std::string::npos);
    EXPECT_TRUE(report->clean_shutdown_marker) << "inspect must not consume the marker";
    EXPECT_EQ(*(*env.fs.open(path, OpenMode::kRead))->size(), size_before);
  }));
}

TEST(LogInspector, FormatsTimestamps) {
  EXPECT_EQ(format_timestamp(0), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(format_timestamp(1767225600123), "2026-01-01T00:00:00.123Z");
  EXPECT_EQ(format_timestamp(951782400000), "2000-02-29T00:00:00.000Z");
  EXPECT_EQ(format_timestamp(-1), "-");
}

// "Why can I still read this superseded value?": the dirty ratio against its gate, and the active segment.
TEST(LogInspector, ExplainsTheDirtySectionAndWhatTheCleanerWillDo) {
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    auto manager = LogManager::open(env, "data", BrokerStorageConfig());
    ASSERT_TRUE(manager.ok());
    const TopicPartition tp{"table", 0};
    auto config = TopicConfig::from_overrides({{"cleanup.policy", "compact"}}, TopicConfig());
    ASSERT_TRUE(config.ok());
    PartitionLog* log = *(*manager)->create_partition(tp, *config);
    for (int i = 0; i < 4; ++i) ASSERT_TRUE(log->append(one_record("k", std::to_string(i), 1000)).ok());
    ASSERT_TRUE(log->roll().ok());
    ASSERT_TRUE(log->append(one_record("k", "active", 2000)).ok());

    auto before = inspect_path(env, "data", options_at(env));
    ASSERT_TRUE(before.ok()) << before.status().to_string();
    const std::string& dirty = before->front().compaction;
    EXPECT_NE(dirty.find("dirty section [0, 4)"), std::string::npos) << dirty;
    EXPECT_NE(dirty.find("dirty ratio 1.000"), std::string::npos) << dirty;
    EXPECT_NE(dirty.find("will clean it"), std::string::npos) << dirty;
    EXPECT_NE(dirty.find("from offset 4 (the active segment"), std::string::npos) << dirty;

    auto cleaned = (*manager)->run_cleaner_once(options_at(env).now_ms);
    ASSERT_TRUE(cleaned.ok() && cleaned->has_value());
    auto after = inspect_path(env, "data", options_at(env));
    ASSERT_TRUE(after.ok());
    EXPECT_EQ(after->front().cleaner_checkpoint, std::optional<int64_t>(4));
    const std::string& clean = after->front().compaction;
    EXPECT_NE(clean.find("dirty ratio 0.000"), std::string::npos) << clean;
    EXPECT_NE(clean.find("Not cleaned yet"), std::string::npos) << clean;
    ASSERT_TRUE((*manager)->close().ok());
  }));
}

}  // namespace
}  // namespace sluice::storage
