// The coordinator's planted bug (core/base/mutations.h) really bites: the same commits, without the mutation and
// with it, are both acknowledged, but with it each offset is stored under the next partition.
#include <gtest/gtest.h>

#include <map>

#include "tests/core/group/group_test_util.h"

namespace sluice::group::testing {
namespace {

using storage::log_testing::OneNode;

// Commits orders-0 at 10 and orders-3 (the last of 4) at 30; what each partition of "orders" then fetches, and
// the commit's answers.
struct Committed {
  std::vector<ErrorCode> answers;
  std::map<int32_t, int64_t> fetched;
};

Committed commit_and_fetch(const MutationSet& mutations) {
  Committed out;
  OneNode node;
  EXPECT_TRUE(node.run([&](Env env) {
    CoordinatorConfig config = fast_config();
    config.mutations = mutations;
    Rig rig(env, config);
    CommitRequest request;
    request.group_id = "g";
    request.offsets = {offset("orders", 0, 10), offset("orders", 3, 30)};
    out.answers = rig.c().commit(request);
    std::vector<storage::TopicPartition> all;
    for (int32_t p = 0; p < 4; ++p) all.push_back({"orders", p});
    for (const FetchedOffset& fetched : rig.c().fetch("g", all).partitions) {
      out.fetched[fetched.tp.partition] = fetched.offset;
    }
  }));
  return out;
}

TEST(GroupMutations, CommitWrongPartitionStoresUnderTheNextPartitionAndAcknowledges) {
  const std::vector<ErrorCode> acknowledged{ErrorCode::kNone, ErrorCode::kNone};
  const Committed right = commit_and_fetch({});
  EXPECT_EQ(right.answers, acknowledged);
  EXPECT_EQ(right.fetched, (std::map<int32_t, int64_t>{{0, 10}, {1, -1}, {2, -1}, {3, 30}}));
  MutationSet planted;
  planted.add(Mutation::kCommitWrongPartition);
  const Committed wrong = commit_and_fetch(planted);
  EXPECT_EQ(wrong.answers, acknowledged) << "acknowledged as if right";
  EXPECT_EQ(wrong.fetched, (std::map<int32_t, int64_t>{{0, 30}, {1, 10}, {2, -1}, {3, -1}})) << "3 wraps to 0";
}

}  // namespace
}  // namespace sluice::group::testing
