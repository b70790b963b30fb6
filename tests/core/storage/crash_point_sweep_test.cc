// The crash-point sweep (issue 3): one fixed workload — keyed appends with rolls, a retention deletion, a forced
// cleaner pass with its segment swap, the delayed file removals and a graceful close — cut by a power loss after
// every simulation step. Each cut state is then recovered with a second power loss part-way through recovery
// (a different recovery step for each cut), and recovered again to the end. Every restart must load, and the
// contract must hold: acknowledged `persisted` appends all there up to the log end, no offset renumbered, no
// phantom record, the latest value of every key at or above the log start still readable.
#include <gtest/gtest.h>

#include <map>

#include "core/storage/cleaner.h"
#include "core/storage/retention.h"
#include "tests/core/storage/log_test_util.h"

namespace sluice::storage {
namespace {

using namespace log_testing;

constexpr const char* kDir = "sweep";
constexpr int kAppends = 12;
constexpr int kKeys = 4;

LogSettings sweep_settings() {
  LogSettings settings = small_settings();
  settings.persisted = true;
  settings.file_delete_delay_ms = 0;
  return settings;
}

std::string key_of(int i) { return "k" + std::to_string(i % kKeys); }
std::string value_of(int i) { return "v" + std::to_string(i); }

// Appends kAppends records (the first half an hour old), rolls every 3, evicts the old half by time, cleans,
// removes the retired files and closes. `acked` counts the appends that returned.
void workload(Env env, int& acked) {
  auto log = PartitionLog::open(env, kDir, sweep_settings());
  ASSERT_TRUE(log.ok()) << log.status().to_string();
  const int64_t now = to_unix_ms(env.clock.wall_now());
  for (int i = 0; i < kAppends; ++i) {
    if (i > 0 && i % 3 == 0) {
      ASSERT_TRUE((*log)->roll().ok());
    }
    const int64_t timestamp = i < kAppends / 2 ? now - 3600000 : now;
    ASSERT_TRUE((*log)->append(one_record(key_of(i), value_of(i), timestamp)).ok());
    acked = i + 1;
  }
  ASSERT_TRUE((*log)->roll().ok());
  auto evicted = enforce_retention(**log, RetentionLimits{600000, std::nullopt}, now);
  ASSERT_TRUE(evicted.ok());
  ASSERT_EQ(evicted->log_start_after, kAppends / 2);
  int64_t checkpoint = 0;
  auto cleaned = clean_once(**log, checkpoint, CleanerOptions{}, now, /*force=*/true);
  ASSERT_TRUE(cleaned.ok());
  ASSERT_EQ(cleaned->records_removed, 2) << "offsets 6 and 7 are superseded by 10 and 11";
  ASSERT_TRUE((*log)->run_housekeeping(env.clock.now()).ok());
  ASSERT_TRUE((*log)->close().ok());
}

void recover(Env env) {
  auto log = PartitionLog::open(env, kDir, sweep_settings());
  ASSERT_TRUE(log.ok()) << log.status().to_string();
  ASSERT_TRUE((*log)->close().ok());
}

void check_contract(Env env, int acked, const std::string& where) {
  auto opened = PartitionLog::open(env, kDir, sweep_settings());
  ASSERT_TRUE(opened.ok()) << where << ": " << opened.status().to_string();
  PartitionLog& log = **opened;
  EXPECT_GE(log.log_end_offset(), acked) << where << ": an acknowledged persisted append was lost";
  const std::vector<Seen> seen = read_all(log);
  std::map<std::string, int64_t> latest_seen;
  for (const Seen& s : seen) {
    ASSERT_LT(s.offset, kAppends) << where << ": a phantom offset";
    EXPECT_EQ(s.key, key_of(static_cast<int>(s.offset))) << where << ": renumbered at " << s.offset;
    EXPECT_EQ(s.value, value_of(static_cast<int>(s.offset))) << where << ": renumbered at " << s.offset;
    latest_seen[*s.key] = s.offset;
  }
  // Appends past `acked` may be there too (written, not yet acknowledged); they may supersede, never lose.
  std::map<std::string, int64_t> latest_acked;
  for (int i = 0; i < acked; ++i) latest_acked[key_of(i)] = i;
  for (const auto& [key, offset] : latest_acked) {
    if (offset < log.log_start_offset()) continue;  // evicted by retention
    EXPECT_GE(latest_seen[key], offset) << where << ": the latest value of " << key << " was lost";
  }
  ASSERT_TRUE(log.close().ok());
}

TEST(CrashPointSweep, PowerLossAtEveryStepOfAppendRollRetentionCleanerSwapAndRecovery) {
  size_t total_steps = 0;
  {
    OneNode world(5);
    int acked = 0;
    bool finished = false;
    total_steps = run_steps(world, [&](Env env) { workload(env, acked); }, SIZE_MAX, &finished);
    ASSERT_TRUE(finished);
  }
  ASSERT_GT(total_steps, 50u);
  size_t recovery_cuts = 0;
  for (size_t cut = 0; cut <= total_steps; ++cut) {
    OneNode world(5);
    int acked = 0;
    run_steps(world, [&](Env env) { workload(env, acked); }, cut, nullptr);
    world.node().power_loss();
    bool recovered = false;
    run_steps(world, recover, cut % 40, &recovered);  // a power loss inside recovery too
    if (!recovered) ++recovery_cuts;
    world.node().power_loss();
    const std::string where = "cut after step " + std::to_string(cut);
    ASSERT_TRUE(world.run([&](Env env) { check_contract(env, acked, where); })) << where;
    if (::testing::Test::HasFatalFailure()) return;
  }
  EXPECT_GT(recovery_cuts, total_steps / 4) << "recovery itself was interrupted at many points";
}

}  // namespace
}  // namespace sluice::storage
