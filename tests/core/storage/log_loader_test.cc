// LogLoader on directories the fuzzer (fuzz/loader_fuzzer.cc) found answered wrongly: each loads as a broker would
// load it, and loads again the same way.
#include <gtest/gtest.h>

#include "core/storage/log_format.h"
#include "core/storage/log_loader.h"
#include "tests/core/storage/log_test_util.h"

namespace sluice::storage {
namespace {

using namespace log_testing;

const std::string kDir = "p0";

void write_file(FileSystem& fs, const std::string& name, ByteView bytes) {
  auto file = fs.open(kDir + "/" + name, OpenMode::kCreate);
  ASSERT_TRUE(file.ok()) << file.status().to_string();
  ASSERT_TRUE((*file)->append(bytes).ok());
  ASSERT_TRUE((*file)->sync().ok());
  ASSERT_TRUE((*file)->close().ok());
}

// Empty first segments (a cleaner's swap can leave one: here an empty .log.swap replaces the one at 0; the one at
// 50 is empty on disk) before a segment at 100, no partition.state. The empty segments go at load; the log then
// starts at 100, the first offset any segment holds, and a second load (which never sees the empty segments) says
// the same. It used to say 0 first, then 100.
TEST(LogLoader, EmptyFirstSegmentsThatGoMoveTheLogStartToTheNextOne) {
  OneNode world;
  ASSERT_TRUE(world.run([](Env env) {
    ASSERT_TRUE(env.fs.create_dirs(kDir).ok());
    Bytes batch = batch_of(3, 1000);
    set_base_offset(batch, 100);
    write_file(env.fs, segment_file_name(0, kLogSuffix), batch_of(2, 1000));
    write_file(env.fs, segment_file_name(0, std::string(kLogSuffix) + std::string(kSwapSuffix)), Bytes());
    write_file(env.fs, segment_file_name(50, kLogSuffix), Bytes());
    write_file(env.fs, segment_file_name(100, kLogSuffix), batch);

    Result<LoadedLog> first = LogLoader::load(env, kDir, SegmentConfig{});
    ASSERT_TRUE(first.ok()) << first.status().to_string();
    ASSERT_EQ(first->segments.size(), 1u);
    EXPECT_EQ(first->segments.begin()->first, 100);
    EXPECT_EQ(first->log_start_offset, 100);
    EXPECT_EQ(first->recovery_point, 103);
    for (auto& [base, segment] : first->segments) ASSERT_TRUE(segment->close().ok());

    Result<LoadedLog> second = LogLoader::load(env, kDir, SegmentConfig{});
    ASSERT_TRUE(second.ok()) << second.status().to_string();
    EXPECT_EQ(second->log_start_offset, 100);
    EXPECT_EQ(second->recovery_point, 103);
    for (auto& [base, segment] : second->segments) ASSERT_TRUE(segment->close().ok());
  }));
}

}  // namespace
}  // namespace sluice::storage
