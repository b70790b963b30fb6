// SimInodeTable (sim_inode.h): the map that keeps inodes in id order, and the index by id that finds them. SimFileImage:
// its durable image, kept as a prefix of the volatile one while it is one, against two plain buffers.
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
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

// The images kept as two buffers, each operation applied to one and then, at its commit, to the other: what
// SimFileImage did before it shared the durable prefix. Draws from the power loss's generator as it does.
struct TwoBufferImage {
  Bytes data;
  Bytes durable;
  std::deque<SimDataOp> unsynced;
  bool diverged = false;

  void write(uint64_t offset, const Bytes& bytes) {
    SimDataOp op{SimDataOp::Kind::kWrite, offset, bytes};
    apply_data_op(data, op);
    unsynced.push_back(std::move(op));
  }
  void truncate(uint64_t size) {
    if (size == data.size() && !diverged) return;
    SimDataOp op{SimDataOp::Kind::kTruncate, size, {}};
    apply_data_op(data, op);
    unsynced.push_back(std::move(op));
  }
  void commit(size_t count) {
    for (size_t i = 0; i < count; ++i) {
      apply_data_op(durable, unsynced.front());
      unsynced.pop_front();
    }
  }
  void fail_sync(size_t persisted) {
    commit(persisted);
    if (!unsynced.empty()) diverged = true;
    unsynced.clear();
  }
  void lose_power(Random& rng) {
    const size_t count = unsynced.size();
    commit(count == 0 ? 0 : static_cast<size_t>(rng.uniform(count + 1)));
    if (!unsynced.empty() && unsynced.front().kind == SimDataOp::Kind::kWrite) {
      apply_torn_write(durable, unsynced.front(), rng);
    }
    unsynced.clear();
    diverged = false;
    data = durable;
  }
};

void expect_same_images(const SimFileImage& image, const TwoBufferImage& model, int step) {
  ASSERT_TRUE(std::ranges::equal(image.data(), model.data)) << "volatile image, step " << step;
  ASSERT_TRUE(std::ranges::equal(image.durable(), model.durable)) << "durable image, step " << step;
  ASSERT_EQ(image.durable_size(), model.durable.size()) << "step " << step;
  ASSERT_EQ(image.unsynced().size(), model.unsynced.size()) << "step " << step;
  ASSERT_TRUE(image.consistent()) << "step " << step;
}

// Appends (the usual life of a file), overwrites below and above the synced length, writes past the end,
// truncates, partial commits, failed syncs and power losses: both forms of the durable image must give the same
// images, and the durable image must become a prefix again after a power loss.
TEST(SimFileImage, DurablePrefixGivesTheImagesOfTwoBuffers) {
  Random rng(11);
  Random image_power(5);
  Random model_power(5);
  SimFileImage image;
  TwoBufferImage model;
  bool copied_once = false;
  for (int step = 0; step < 20000; ++step) {
    const uint64_t draw = rng.uniform(100);
    const uint64_t size = model.data.size();
    if (draw < 45) {
      Bytes bytes(1 + rng.uniform(700));
      for (uint8_t& b : bytes) b = static_cast<uint8_t>(rng.next_u64());
      // Mostly appends; else anywhere up to a little past the end.
      const uint64_t offset = rng.uniform(4) != 0 ? size : rng.uniform(size + 600);
      image.write(offset, bytes);
      model.write(offset, bytes);
    } else if (draw < 52) {
      const uint64_t new_size = rng.uniform(size + 800);
      image.truncate(new_size);
      model.truncate(new_size);
    } else if (draw < 82) {
      const size_t count = static_cast<size_t>(rng.uniform(model.unsynced.size() + 1));
      image.commit(count);
      model.commit(count);
    } else if (draw < 90) {
      image.commit_all();
      model.commit(model.unsynced.size());
    } else if (draw < 93) {
      const size_t persisted = static_cast<size_t>(rng.uniform(model.unsynced.size() + 1));
      image.fail_sync(persisted);
      model.fail_sync(persisted);
    } else if (draw < 97) {
      image.lose_power(image_power);
      model.lose_power(model_power);
      ASSERT_FALSE(image.durable_copied()) << "after a power loss one buffer holds both images, step " << step;
    } else if (model.data.size() > 200000) {
      image.truncate(0);
      model.truncate(0);
    }
    copied_once = copied_once || image.durable_copied();
    expect_same_images(image, model, step);
    if (testing::Test::HasFatalFailure()) return;
  }
  EXPECT_TRUE(copied_once);
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
