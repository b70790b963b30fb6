#include "core/storage/key_offset_map.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "core/env/random.h"

namespace sluice::storage {
namespace {

TEST(KeyOffsetMap, KeepsTheLatestOffsetPerKey) {
  KeyOffsetMap map(24 * 100, 0.9);
  // The seed 001 example: keys A B A C B A D C B A E D at offsets 0..11.
  const std::string keys = "ABACBADCBAED";
  for (size_t i = 0; i < keys.size(); ++i) ASSERT_TRUE(map.put(as_bytes(keys.substr(i, 1)), static_cast<int64_t>(i)));
  EXPECT_EQ(map.size(), 5u);
  EXPECT_EQ(map.get(as_bytes("A")), 9);
  EXPECT_EQ(map.get(as_bytes("B")), 8);
  EXPECT_EQ(map.get(as_bytes("C")), 7);
  EXPECT_EQ(map.get(as_bytes("D")), 11);
  EXPECT_EQ(map.get(as_bytes("E")), 10);
  EXPECT_FALSE(map.get(as_bytes("F")).has_value());
  EXPECT_EQ(map.latest_offset(), 11);
}

TEST(KeyOffsetMap, FullAtTheLoadFactorButUpdatesStillWork) {
  KeyOffsetMap map(24 * 10, 0.9);  // 10 slots, 9 keys
  EXPECT_EQ(map.slots(), 10u);
  EXPECT_EQ(map.capacity(), 9u);
  for (int i = 0; i < 9; ++i) ASSERT_TRUE(map.put(as_bytes("k" + std::to_string(i)), i));
  EXPECT_TRUE(map.full());
  EXPECT_FALSE(map.put(as_bytes("new"), 100)) << "a new key is refused: the cleaner stops its pass here";
  EXPECT_FALSE(map.get(as_bytes("new")).has_value());
  EXPECT_EQ(map.latest_offset(), 8);
  EXPECT_TRUE(map.put(as_bytes("k3"), 50)) << "a key already mapped can still move forward";
  EXPECT_EQ(map.get(as_bytes("k3")), 50);
  map.clear();
  EXPECT_EQ(map.size(), 0u);
  EXPECT_FALSE(map.get(as_bytes("k3")).has_value());
  EXPECT_EQ(map.latest_offset(), -1);
}

TEST(KeyOffsetMap, AlwaysLeavesAnEmptySlot) {
  KeyOffsetMap map(24 * 4, 1.0);
  EXPECT_EQ(map.capacity(), 3u);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(map.put(as_bytes(std::to_string(i)), i));
  EXPECT_FALSE(map.get(as_bytes("absent")).has_value()) << "the probe for an absent key ends";
}

TEST(KeyOffsetMap, MatchesAStdMapOnManyRandomKeysWithShortProbes) {
  KeyOffsetMap map(uint64_t{24} << 17, 0.75);  // 131072 slots
  std::map<std::string, int64_t> model;
  Random random(7);
  for (int64_t offset = 0; offset < 90000; ++offset) {
    // Keys of many lengths (0 to 40 bytes), some repeated.
    std::string key(static_cast<size_t>(random.uniform(41)), '\0');
    for (char& c : key) c = static_cast<char>('a' + random.uniform(4));
    if (!map.put(as_bytes(key), offset)) break;
    model[key] = offset;
  }
  for (const auto& [key, offset] : model) ASSERT_EQ(map.get(as_bytes(key)), offset) << key;
  EXPECT_EQ(map.size(), model.size());
  const double probes_per_operation = static_cast<double>(map.probes()) / (90000.0 + model.size());
  EXPECT_LT(probes_per_operation, 4.0) << "the digest spreads keys over the slots";
}

}  // namespace
}  // namespace sluice::storage
