// DigestMap (digest_map.h): finds what it holds and nothing else, through growth and colliding digests.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>

#include "core/env/random.h"
#include "sim/checkers/digest_map.h"

namespace sluice::sim {
namespace {

TEST(DigestMap, FindsWhatItHoldsThroughGrowthAndNothingElse) {
  Random rng(7);
  DigestMap<int64_t> map;  // no size given: grows from its smallest table
  std::map<uint64_t, int64_t> model;
  for (int64_t i = 0; i < 20000; ++i) {
    // Small numbers (as tests write), zero among them, and random digests (as XXH3 gives).
    const uint64_t digest = i % 3 == 0 ? static_cast<uint64_t>(i / 3) : rng.next_u64();
    if (i % 7 == 0) {
      map.insert_or_assign(digest, i);
      model[digest] = i;
    } else {
      const auto [held, added] = map.try_emplace(digest, i);
      const auto [it, model_added] = model.try_emplace(digest, i);
      ASSERT_EQ(added, model_added);
      ASSERT_EQ(*held, it->second);
    }
  }
  EXPECT_EQ(map.size(), model.size());
  for (const auto& [digest, value] : model) {
    const int64_t* found = map.find(digest);
    ASSERT_NE(found, nullptr) << digest;
    EXPECT_EQ(*found, value);
  }
  for (int i = 0; i < 20000; ++i) {
    const uint64_t absent = rng.next_u64();
    if (model.count(absent) == 0) EXPECT_FALSE(map.contains(absent));
  }
  EXPECT_FALSE(map.contains(7000));  // past the small numbers written
}

TEST(DigestMap, DigestsThatShareTheirLowBitsAllStay) {
  DigestMap<int> map(4);
  for (int i = 0; i < 1000; ++i) map.try_emplace(static_cast<uint64_t>(i) << 40, i);
  for (int i = 0; i < 1000; ++i) {
    const int* found = map.find(static_cast<uint64_t>(i) << 40);
    ASSERT_NE(found, nullptr);
    EXPECT_EQ(*found, i);
  }
  EXPECT_EQ(map.size(), 1000u);
}

}  // namespace
}  // namespace sluice::sim
