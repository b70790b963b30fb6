// RapidCheck: random histories on 3 and 5 nodes (drops, duplicates, reordering, crashes, power losses, partitions)
// keep raft's safety properties, and a healed group makes progress; entries cover one index or random spans, and
// appends are limited by entries or by bytes.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include "tests/core/raft/raft_history.h"

namespace sluice::raft::testing {
namespace {

rc::Gen<HistoryOp> op_gen() {
  return rc::gen::build<HistoryOp>(rc::gen::set(&HistoryOp::kind, rc::gen::inRange<uint32_t>(0, 100)),
                                   rc::gen::set(&HistoryOp::a, rc::gen::inRange<uint32_t>(0, 1000)),
                                   rc::gen::set(&HistoryOp::b, rc::gen::inRange<uint32_t>(0, 1000)));
}

HistorySettings settings_gen(CommitMode mode) {
  HistorySettings s;
  s.voters = *rc::gen::element(size_t{3}, size_t{5});
  s.mode = mode;
  s.pre_vote = *rc::gen::arbitrary<bool>();
  s.check_quorum = *rc::gen::arbitrary<bool>();
  s.election_ticks = *rc::gen::inRange<uint32_t>(3, 8);
  s.max_inflight = *rc::gen::inRange<uint32_t>(1, 4);
  s.max_entries = *rc::gen::inRange<uint32_t>(1, 4);
  s.max_bytes = *rc::gen::element(uint64_t{1}, uint64_t{9}, UINT64_MAX);
  s.max_count = *rc::gen::element(Index{1}, Index{3}, Index{50});
  s.seed = *rc::gen::inRange<uint64_t>(1, 1000000);
  return s;
}

void check_history(CommitMode mode) {
  const HistorySettings settings = settings_gen(mode);
  const std::vector<HistoryOp> ops = *rc::gen::container<std::vector<HistoryOp>>(
      *rc::gen::inRange<size_t>(50, 600), op_gen());
  RaftHistory history(settings);
  const std::optional<std::string> violation = history.run(ops);
  if (violation) RC_FAIL(*violation);
}

RC_GTEST_PROP(RaftProperty, PersistedModeIsSafeUnderCrashesPowerLossAndMessageChaos, ()) {
  check_history(CommitMode::kPersisted);
}

RC_GTEST_PROP(RaftProperty, ReplicatedModeIsSafeUnderCrashesAndMessageChaos, ()) {
  check_history(CommitMode::kReplicated);
}

}  // namespace
}  // namespace sluice::raft::testing
