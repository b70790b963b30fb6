// The analysis every checker reads: observations grouped by offset in history order whatever the offsets a broker
// returned (dense ones are counted into place, sparse or extreme ones sorted), and each operation's partition key.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "sim/checkers/analysis.h"
#include "tests/sim/checkers/history_builder.h"

namespace sluice::sim::testing {
namespace {

using Item = std::pair<int64_t, int>;  // (offset, order it was added in)

std::vector<Item> sorted_by_offset(std::vector<Item> items) {
  sort_by_offset(items, [](const Item& item) { return item.first; });
  return items;
}

// What sort_by_offset promises: by offset, and in the order given among equal offsets.
std::vector<Item> expected(std::vector<Item> items) {
  std::stable_sort(items.begin(), items.end(), [](const Item& x, const Item& y) { return x.first < y.first; });
  return items;
}

TEST(SortByOffset, DenseOffsetsKeepTheirOrderAmongEqualOnes) {
  const std::vector<Item> items = {{7, 0}, {5, 1}, {7, 2}, {6, 3}, {5, 4}, {9, 5}, {7, 6}};
  EXPECT_EQ(sorted_by_offset(items), expected(items));
}

TEST(SortByOffset, SparseAndExtremeOffsetsAreSortedToo) {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  const std::vector<Item> items = {{kMax, 0}, {3, 1}, {kMin, 2}, {-1, 3}, {3, 4}, {kMax - 1, 5}, {kMin, 6}};
  EXPECT_EQ(sorted_by_offset(items), expected(items));
  const std::vector<Item> spread = {{1'000'000, 0}, {0, 1}, {500'000, 2}, {0, 3}};
  EXPECT_EQ(sorted_by_offset(spread), expected(spread));
}

TEST(SortByOffset, EmptyAndSingleItemsStayAsTheyAre) {
  EXPECT_TRUE(sorted_by_offset({}).empty());
  EXPECT_EQ(sorted_by_offset({{42, 0}}), (std::vector<Item>{{42, 0}}));
}

// A broker bug may answer any offset: the checkers judge it (here a phantom) instead of failing themselves.
TEST(Analysis, ReadsAtWildOffsetsAreJudgedNotFatal) {
  HistoryBuilder h;
  h.produce("t", 0, 0, 11, 1s);
  h.read(OpKind::kFetch, "t", 0, 0,
         {{0, std::nullopt, 11}, {std::numeric_limits<int64_t>::max() - 1, std::nullopt, 22}}, 2s);
  const std::map<std::string, TopicFacts> topics = {{"t", topic_facts("t")}};
  EXPECT_TRUE(has_violation(h.check(topics, "phantoms"), "phantom"));
  EXPECT_TRUE(h.check(topics, "offsets").violations.empty());
}

// One key per partition incarnation, shared by every operation on it; null for an operation that straddled the
// partition's declared deletion.
TEST(Analysis, OperationsOnOnePartitionShareOneKey) {
  HistoryBuilder h;
  const uint64_t first = h.produce("t", 0, 0, 11, 1s);
  const uint64_t second = h.produce("t", 0, 1, 12, 2s);
  const uint64_t other = h.produce("t", 1, 0, 13, 3s);
  const uint64_t straddling = h.produce("t", 0, 2, 14, 4s, std::nullopt, -1, true, Outcome::kOk, -1, 2s);
  h.effect(storage::LogEffect::Kind::kPartitionDeleted, "t", 0, 0, 3, 5s);
  const uint64_t after = h.produce("t", 0, 0, 15, 7s);
  const CheckContext ctx{h.history, {{"t", topic_facts("t")}}, 1000, 0, 1};
  const Analysis a(ctx);
  const auto key = [&](uint64_t id) { return a.key_of(h.history.ops().at(id)); };
  ASSERT_NE(key(first), nullptr);
  EXPECT_EQ(key(first), key(second));
  EXPECT_EQ(*key(first), (PartitionKey{"t", 0, 0}));
  EXPECT_EQ(*key(other), (PartitionKey{"t", 1, 0}));
  EXPECT_EQ(key(straddling), nullptr);
  EXPECT_EQ(*key(after), (PartitionKey{"t", 0, 1}));
}

}  // namespace
}  // namespace sluice::sim::testing
