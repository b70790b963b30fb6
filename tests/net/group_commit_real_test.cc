// Group commit on the real Env: fdatasync runs on the event loop's worker threads while appenders keep running.
#include <gtest/gtest.h>

#include <vector>

#include "core/storage/partition_log.h"
#include "net/real_env.h"
#include "tests/core/storage/log_test_util.h"
#include "tests/net/temp_dir.h"

namespace sluice {
namespace {

using net_test::TempDir;
using storage::LogSettings;
using storage::PartitionLog;

// The writers one round acknowledges come back with their next append just as the next round would start; that
// round must cover them (the flusher yields once first) instead of only the writers that waited meanwhile —
// otherwise rounds alternate between two halves of the writers and each round carries half the bytes.
TEST(GroupCommitRealEnv, ARoundCoversTheWritersItsPredecessorJustAcknowledged) {
  TempDir dir;
  RealEnv real("group-commit", LogLevel::kOff);
  ASSERT_EQ(real.run([&](Env& env) {
    LogSettings settings;
    settings.persisted = true;
    auto log = PartitionLog::open(env, dir / "p-0", settings);
    ASSERT_TRUE(log.ok()) << log.status().to_string();
    constexpr int kWriters = 32;
    constexpr int kAppendsEach = 8;
    std::vector<FiberRef> writers;
    for (int w = 0; w < kWriters; ++w) {
      writers.push_back(env.scheduler.spawn("writer", [&] {
        for (int i = 0; i < kAppendsEach; ++i) ASSERT_TRUE((*log)->append(storage::log_testing::batch_of(1, 1000, "v")).ok());
      }));
    }
    for (const FiberRef& w : writers) env.scheduler.join(w);
    // Ideal: kAppendsEach rounds of kWriters appends; alternating halves would take about twice as many.
    EXPECT_LE((*log)->stats().sync_rounds, uint64_t{kAppendsEach} * 3 / 2);
    ASSERT_TRUE((*log)->close().ok());
  }), 0);
}

}  // namespace
}  // namespace sluice
