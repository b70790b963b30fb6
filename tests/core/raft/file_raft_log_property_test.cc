// FileRaftLog against a model: random appends (of entries covering 1 to 64 indexes), truncations at entry starts,
// syncs, power losses and reopens on the simulated disk.
// The model is a MemoryRaftLog (what the log holds now) plus a durable marker (how much of it must survive). After
// every reopen the recovered log is a prefix of the model that includes everything synced.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/env/random.h"
#include "core/raft/file_raft_log.h"
#include "core/raft/raft_log.h"
#include "tests/core/raft/raft_log_test_util.h"

namespace sluice::raft::testing {
namespace {

class ModelRun {
 public:
  explicit ModelRun(uint64_t seed) : world_(seed + 7), rng_(seed), rng_probe_(seed + 1000) { world_.reopen(); }

  void step() {
    const uint64_t op = rng_.uniform(100);
    if (op < 45) return append();
    if (op < 60) return truncate();
    if (op < 80) return sync();
    if (op < 90) return reopen(false);
    return reopen(true);
  }

  void check_equal() const {
    const FileRaftLog& log = *world_.log;
    ASSERT_EQ(log.last_index(), model_.last_index());
    ASSERT_GE(log.durable_index(), durable_);
    for (Index i = 0; i <= log.last_index(); ++i) ASSERT_EQ(log.term_at(i), model_.term_at(i)) << i;
    for (Index i = 1; i <= log.last_index(); ++i) ASSERT_EQ(log.entry_start(i), model_.entry_start(i)) << i;
    ASSERT_EQ(all_entries(log), model_.entries());
    if (log.last_index() > 0) {
      const Index probe = 1 + rng_probe_.uniform(log.last_index());
      const Term term = rng_probe_.uniform(log.term_at(log.last_index()) + 2);
      ASSERT_EQ(log.last_index_with_term_at_most(probe, term), model_.last_index_with_term_at_most(probe, term));
    }
  }

 private:
  void append() {
    const size_t count = 1 + rng_.uniform(4);
    std::vector<Entry> entries;
    Term term = model_.term_at(model_.last_index());
    for (size_t i = 0; i < count; ++i) {
      term += rng_.uniform(2);
      const Index indexes = rng_.uniform(3) == 0 ? 1 + rng_.uniform(64) : 1;
      entries.push_back(
          entry(term, std::string(rng_.uniform(900), static_cast<char>('a' + rng_.uniform(26))), indexes));
    }
    world_.log->append(model_.last_index() + 1, entries);
    model_.append(model_.last_index() + 1, entries);
  }

  void truncate() {
    if (model_.last_index() == 0) return;
    const Index from = model_.starts()[rng_.uniform(model_.starts().size())];
    world_.log->truncate_suffix(from);
    model_.truncate_suffix(from);
    durable_ = std::min(durable_, from - 1);
  }

  void sync() {
    ASSERT_TRUE(world_.log->sync().ok());
    durable_ = model_.last_index();
  }

  // With a power loss, whatever was not synced may go; without one (a process crash), the page cache keeps it all.
  void reopen(bool power_loss) {
    if (power_loss) {
      world_.power_loss(rng_.next_u64());
    } else {
      world_.log.reset();
    }
    FileRaftLog& log = world_.reopen();
    ASSERT_GE(log.last_index(), durable_) << "lost a synced entry";
    ASSERT_LE(log.last_index(), model_.last_index());
    if (!power_loss) {
      ASSERT_EQ(log.last_index(), model_.last_index());
    }
    const std::vector<Entry> got = all_entries(log);
    ASSERT_LE(got.size(), model_.entries().size());
    ASSERT_TRUE(std::equal(got.begin(), got.end(), model_.entries().begin())) << "not a prefix of the model";
    ASSERT_EQ(log.durable_index(), log.last_index());
    if (log.last_index() < model_.last_index()) model_.truncate_suffix(log.last_index() + 1);
    model_.sync();
    durable_ = log.last_index();
  }

  DiskWorld world_;
  Random rng_;
  mutable Random rng_probe_;  // the queries check_equal makes
  MemoryRaftLog model_;
  Index durable_ = 0;
};

TEST(FileRaftLogProperty, RecoveredLogIsAPrefixOfTheModelWithEverythingSynced) {
  for (uint64_t seed = 0; seed < 60; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    ModelRun run(seed);
    for (int step = 0; step < 120; ++step) {
      run.step();
      run.check_equal();
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

}  // namespace
}  // namespace sluice::raft::testing
