// SimInodeTable (sim_inode.h): the map that keeps inodes in id order, and the index by id that finds them.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "sim/world/sim_inode.h"

namespace sluice {
namespace {

std::vector<InodeId> ids_in_order(const SimInodeTable& table) {
  std::vector<InodeId> ids;
  for (const auto& [id, node] : table) ids.push_back(id);
  return ids;
}

TEST(SimInodeTable, FindsWhatItHoldsAndNothingItDropped) {
  SimInodeTable table;
  EXPECT_EQ(table.find(kRootInode), nullptr);
  SimInode root;
  root.is_dir = true;
  table.emplace(kRootInode, std::move(root));
  for (InodeId id = 2; id <= 40; ++id) table.emplace(id, SimInode{});
  EXPECT_EQ(table.size(), 40u);
  EXPECT_TRUE(table.at(kRootInode).is_dir);
  // Every other file goes, as a collection drops them.
  for (InodeId id = 2; id <= 40; id += 2) table.erase(id);
  EXPECT_EQ(table.size(), 20u);
  for (InodeId id = 1; id <= 40; ++id) {
    EXPECT_EQ(table.contains(id), id % 2 == 1) << id;
    EXPECT_EQ(table.find(id) != nullptr, id % 2 == 1) << id;
  }
  EXPECT_EQ(table.find(0), nullptr);
  EXPECT_EQ(table.find(41), nullptr);
  EXPECT_EQ(table.find(1000000), nullptr);
  // What the index finds is what the map holds, and a change through one shows through the other.
  table.at(7).open_handles = 3;
  for (auto& [id, node] : table) EXPECT_EQ(table.find(id), &node) << id;
  EXPECT_EQ(table.find(7)->open_handles, 3u);
  // Ids count up and are never reused: one past the highest comes next, and iteration stays in id order.
  table.emplace(41, SimInode{});
  table.emplace(100, SimInode{});
  const std::vector<InodeId> ids = ids_in_order(table);
  EXPECT_EQ(ids.size(), 22u);
  EXPECT_TRUE(std::is_sorted(ids.begin(), ids.end()));
  EXPECT_EQ(ids.back(), 100u);
  EXPECT_FALSE(table.contains(99));
}

TEST(SimInodeTableDeathTest, RefusesADuplicateIdAndAnUnknownOne) {
  SimInodeTable table;
  table.emplace(kRootInode, SimInode{});
  EXPECT_DEATH(table.emplace(kRootInode, SimInode{}), "");
  EXPECT_DEATH(table.erase(2), "");
  EXPECT_DEATH((void)table.at(2), "");
}

}  // namespace
}  // namespace sluice
