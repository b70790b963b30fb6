// SimDisk durability: what survives a power loss, what may not, and how a write tears.
#include "sim/world/sim_disk.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bitset>
#include <set>
#include <string>

#include "sim/world/sim_file_system.h"
#include "tests/sim/world/sim_disk_model.h"
#include "tests/sim/world/sim_disk_test_util.h"

namespace sluice {
namespace {

using namespace sim_disk_test;
using testing_model::model_crash_ok;
using testing_model::ModelOp;

constexpr uint64_t kSeeds = 200;

TEST(SimDisk, SyncedDataSurvivesPowerLoss) {
  const std::string content(3000, 'x');
  for_each_power_loss(
      kSeeds,
      [&](SimDisk&, SimFileSystem& fs) {
        make_durable_dir(fs, "d");
        write_file(fs, "d/f", content, /*sync=*/true);
        ASSERT_TRUE(fs.sync_dir("d").ok());
      },
      [&](SimDisk& disk, SimFileSystem& fs) {
        EXPECT_EQ(read_file(fs, "d/f"), content);
        EXPECT_EQ(disk.used_bytes(), content.size());
      });
}

TEST(SimDisk, UnsyncedAppendsSurviveAsAnOrderedPrefixWithTheNextTorn) {
  const std::string synced(100, 'a');
  const std::vector<ModelOp> ops{{false, 100, std::string(600, 'b')},
                                 {false, 700, std::string(600, 'c')},
                                 {false, 1300, std::string(600, 'd')}};
  std::set<size_t> sizes;
  for_each_power_loss(
      kSeeds,
      [&](SimDisk&, SimFileSystem& fs) {
        make_durable_dir(fs, "d");
        write_file(fs, "d/f", synced, /*sync=*/true);
        ASSERT_TRUE(fs.sync_dir("d").ok());
        std::unique_ptr<File> file = must_open(fs, "d/f", OpenMode::kReadWrite);
        for (const ModelOp& op : ops) ASSERT_TRUE(file->append(as_bytes(op.data)).ok());
      },
      [&](SimDisk&, SimFileSystem& fs) {
        const std::optional<std::string> actual = read_file(fs, "d/f");
        ASSERT_TRUE(actual.has_value());
        EXPECT_EQ(actual->substr(0, 100), synced);
        EXPECT_TRUE(model_crash_ok(*actual, synced, ops));
        sizes.insert(actual->size());
      });
  // All lost, all kept, and cuts in between (1024 is a sector boundary inside the second append).
  EXPECT_TRUE(sizes.contains(100));
  EXPECT_TRUE(sizes.contains(1900));
  EXPECT_GT(sizes.size(), 4u);
}

TEST(SimDisk, TornWriteStaysInsideItsSectors) {
  const std::string synced(4096, 'a');
  const ModelOp op{false, 1000, std::string(2000, 'b')};
  int untouched = 0;
  int whole = 0;
  int torn = 0;
  for_each_power_loss(
      kSeeds,
      [&](SimDisk&, SimFileSystem& fs) {
        make_durable_dir(fs, "d");
        write_file(fs, "d/f", synced, /*sync=*/true);
        ASSERT_TRUE(fs.sync_dir("d").ok());
        std::unique_ptr<File> file = must_open(fs, "d/f", OpenMode::kReadWrite);
        ASSERT_TRUE(file->pwrite(op.offset, as_bytes(op.data)).ok());
      },
      [&](SimDisk&, SimFileSystem& fs) {
        const std::string actual = read_file(fs, "d/f").value_or("");
        ASSERT_EQ(actual.size(), synced.size());
        // Bytes the write did not cover keep their synced value, whatever happened inside.
        EXPECT_EQ(actual.substr(0, 1000), synced.substr(0, 1000));
        EXPECT_EQ(actual.substr(3000), synced.substr(3000));
        EXPECT_TRUE(model_crash_ok(actual, synced, {op}));
        const std::string middle = actual.substr(1000, 2000);
        if (middle == std::string(2000, 'a')) {
          ++untouched;
        } else if (middle == op.data) {
          ++whole;
        } else {
          ++torn;
        }
      });
  EXPECT_GT(untouched, 0);
  EXPECT_GT(whole, 0);
  EXPECT_GT(torn, 0);
}

TEST(SimDisk, TornAppendNeverCorruptsTheSyncedPrefix) {
  // 700 bytes synced: the torn append shares sector 1 with synced bytes, which must still survive.
  const std::string synced(700, 'a');
  const ModelOp op{false, 700, std::string(1500, 'b')};
  bool saw_garbage_or_tear = false;
  for_each_power_loss(
      kSeeds,
      [&](SimDisk&, SimFileSystem& fs) {
        make_durable_dir(fs, "d");
        write_file(fs, "d/f", synced, /*sync=*/true);
        ASSERT_TRUE(fs.sync_dir("d").ok());
        std::unique_ptr<File> file = must_open(fs, "d/f", OpenMode::kReadWrite);
        ASSERT_TRUE(file->append(as_bytes(op.data)).ok());
      },
      [&](SimDisk& disk, SimFileSystem& fs) {
        const std::string actual = read_file(fs, "d/f").value_or("");
        ASSERT_GE(actual.size(), 700u);
        ASSERT_LE(actual.size(), 2200u);
        EXPECT_EQ(actual.substr(0, 700), synced);
        EXPECT_TRUE(model_crash_ok(actual, synced, {op}));
        saw_garbage_or_tear |= disk.stats().torn_writes > 0;
      });
  EXPECT_TRUE(saw_garbage_or_tear);
}

TEST(SimDisk, UnsyncedTruncateMayRevertSyncedTruncateStays) {
  std::set<size_t> unsynced_sizes;
  for (const bool sync : {false, true}) {
    for_each_power_loss(
        kSeeds,
        [&](SimDisk&, SimFileSystem& fs) {
          make_durable_dir(fs, "d");
          write_file(fs, "d/f", std::string(1000, 'a'), /*sync=*/true);
          ASSERT_TRUE(fs.sync_dir("d").ok());
          std::unique_ptr<File> file = must_open(fs, "d/f", OpenMode::kReadWrite);
          ASSERT_TRUE(file->truncate(100).ok());
          if (sync) {
            ASSERT_TRUE(file->sync().ok());
          }
        },
        [&](SimDisk&, SimFileSystem& fs) {
          const std::string actual = read_file(fs, "d/f").value_or("");
          if (sync) {
            EXPECT_EQ(actual, std::string(100, 'a'));
          } else {
            EXPECT_TRUE(actual == std::string(100, 'a') || actual == std::string(1000, 'a'));
            unsynced_sizes.insert(actual.size());
          }
        });
  }
  EXPECT_EQ(unsynced_sizes, (std::set<size_t>{100, 1000}));
}

TEST(SimDisk, CreateWithoutSyncDirMayVanishWithSyncDirStays) {
  int vanished = 0;
  for (const bool sync_dir : {false, true}) {
    for_each_power_loss(
        kSeeds,
        [&](SimDisk&, SimFileSystem& fs) {
          make_durable_dir(fs, "d");
          write_file(fs, "d/f", "payload", /*sync=*/true);
          if (sync_dir) {
            ASSERT_TRUE(fs.sync_dir("d").ok());
          }
        },
        [&](SimDisk&, SimFileSystem& fs) {
          const std::optional<std::string> actual = read_file(fs, "d/f");
          if (sync_dir) {
            EXPECT_EQ(actual, "payload");
          } else if (!actual.has_value()) {
            ++vanished;
          } else {
            EXPECT_EQ(*actual, "payload");  // its data was synced: if the name survives, so do the bytes
          }
        });
  }
  EXPECT_GT(vanished, 0);
  EXPECT_LT(vanished, static_cast<int>(kSeeds));
}

TEST(SimDisk, NewDirectoryNeedsItsParentSynced) {
  int vanished = 0;
  for (const bool sync_parents : {false, true}) {
    for_each_power_loss(
        kSeeds,
        [&](SimDisk&, SimFileSystem& fs) {
          ASSERT_TRUE(fs.create_dirs("a/b").ok());
          write_file(fs, "a/b/f", "payload", /*sync=*/true);
          ASSERT_TRUE(fs.sync_dir("a/b").ok());
          if (sync_parents) {
            ASSERT_TRUE(fs.sync_dir("a").ok());
            ASSERT_TRUE(fs.sync_dir(".").ok());
          }
        },
        [&](SimDisk&, SimFileSystem& fs) {
          const std::optional<std::string> actual = read_file(fs, "a/b/f");
          if (sync_parents) {
            EXPECT_EQ(actual, "payload");
          } else if (!actual.has_value()) {
            ++vanished;
          }
        });
  }
  EXPECT_GT(vanished, 0);
}

// The write-temp-then-rename pattern (Kafka's checkpoints and cleaner swaps).
TEST(SimDisk, RenameIsAtomicAndDurableAfterSyncDir) {
  std::set<std::string> outcomes;
  for (const bool sync_dir : {false, true}) {
    for_each_power_loss(
        kSeeds,
        [&](SimDisk&, SimFileSystem& fs) {
          make_durable_dir(fs, "d");
          write_file(fs, "d/f", "old", /*sync=*/true);
          ASSERT_TRUE(fs.sync_dir("d").ok());
          write_file(fs, "d/f.tmp", "new", /*sync=*/true);
          ASSERT_TRUE(fs.rename("d/f.tmp", "d/f").ok());
          if (sync_dir) {
            ASSERT_TRUE(fs.sync_dir("d").ok());
          }
        },
        [&](SimDisk&, SimFileSystem& fs) {
          const std::optional<std::string> f = read_file(fs, "d/f");
          const bool tmp = file_exists(fs, "d/f.tmp");
          ASSERT_TRUE(f.has_value());  // never neither
          if (sync_dir) {
            EXPECT_EQ(*f, "new");
            EXPECT_FALSE(tmp);
          } else {
            EXPECT_TRUE(*f == "old" || (*f == "new" && !tmp));
            outcomes.insert(*f);
          }
        });
  }
  EXPECT_EQ(outcomes, (std::set<std::string>{"old", "new"}));
}

TEST(SimDisk, CrossDirectoryRenameSurvivesWholeOrNotAtAll) {
  std::set<bool> moved;
  for (const bool sync_source : {false, true}) {
    for_each_power_loss(
        kSeeds,
        [&](SimDisk&, SimFileSystem& fs) {
          make_durable_dir(fs, "d1");
          make_durable_dir(fs, "d2");
          write_file(fs, "d1/x", "payload", /*sync=*/true);
          ASSERT_TRUE(fs.sync_dir("d1").ok());
          write_file(fs, "d2/other", "o", /*sync=*/true);  // an earlier pending op in the target directory
          ASSERT_TRUE(fs.rename("d1/x", "d2/x").ok());
          // Syncing one side commits the other half too, as one journal commit.
          if (sync_source) {
            ASSERT_TRUE(fs.sync_dir("d1").ok());
          }
        },
        [&](SimDisk&, SimFileSystem& fs) {
          const bool in_source = file_exists(fs, "d1/x");
          const bool in_target = file_exists(fs, "d2/x");
          EXPECT_NE(in_source, in_target);
          if (sync_source) {
            EXPECT_TRUE(in_target);
            EXPECT_TRUE(file_exists(fs, "d2/other"));  // it preceded the rename in d2's journal
          } else {
            moved.insert(in_target);
          }
          EXPECT_EQ(read_file(fs, in_target ? "d2/x" : "d1/x"), "payload");
        });
  }
  EXPECT_EQ(moved, (std::set<bool>{false, true}));
}

TEST(SimDisk, RemoveIsDurableOnlyAfterSyncDir) {
  int came_back = 0;
  for (const bool sync_dir : {false, true}) {
    for_each_power_loss(
        kSeeds,
        [&](SimDisk&, SimFileSystem& fs) {
          make_durable_dir(fs, "d");
          write_file(fs, "d/f", "payload", /*sync=*/true);
          ASSERT_TRUE(fs.sync_dir("d").ok());
          ASSERT_TRUE(fs.remove("d/f").ok());
          EXPECT_FALSE(file_exists(fs, "d/f"));
          if (sync_dir) {
            ASSERT_TRUE(fs.sync_dir("d").ok());
          }
        },
        [&](SimDisk& disk, SimFileSystem& fs) {
          const std::optional<std::string> actual = read_file(fs, "d/f");
          if (sync_dir) {
            EXPECT_FALSE(actual.has_value());
            EXPECT_EQ(disk.used_bytes(), 0u);
          } else if (actual.has_value()) {
            EXPECT_EQ(*actual, "payload");
            ++came_back;
          }
        });
  }
  EXPECT_GT(came_back, 0);
}

TEST(SimDisk, FailedSyncPromisesNothingEvenAfterASuccessfulRetry) {
  int lost = 0;
  for_each_power_loss(
      kSeeds,
      [&](SimDisk& disk, SimFileSystem& fs) {
        make_durable_dir(fs, "d");
        write_file(fs, "d/f", "", /*sync=*/true);
        ASSERT_TRUE(fs.sync_dir("d").ok());
        std::unique_ptr<File> file = must_open(fs, "d/f", OpenMode::kReadWrite);
        ASSERT_TRUE(file->append(as_bytes("payload")).ok());
        disk.fail_next(DiskOp::kSync, 1);
        EXPECT_EQ(file->sync().code(), Code::kIoError);
        EXPECT_EQ(read_handle(*file), "payload");  // the page cache still shows it
        EXPECT_TRUE(file->sync().ok());            // fsyncgate: the retry succeeds without writing the pages
        EXPECT_EQ(disk.stats().failed_syncs, 1u);
      },
      [&](SimDisk&, SimFileSystem& fs) {
        const std::string actual = read_file(fs, "d/f").value_or("?");
        EXPECT_TRUE(actual.empty() || actual == "payload");
        lost += actual.empty() ? 1 : 0;
      });
  EXPECT_GT(lost, 0);
}

TEST(SimDisk, HandlesAreDeadAfterPowerLoss) {
  SimDisk disk(Random(1));
  SimFileSystem fs(disk);
  make_durable_dir(fs, "d");
  std::unique_ptr<File> file = must_open(fs, "d/f", OpenMode::kCreate);
  ASSERT_TRUE(file->append(as_bytes("abc")).ok());
  ASSERT_TRUE(file->sync().ok());
  ASSERT_TRUE(fs.sync_dir("d").ok());
  Random fault_rng(5);
  disk.power_loss(fault_rng);
  uint8_t buffer[3];
  EXPECT_EQ(file->pread(0, buffer).status().code(), Code::kIoError);
  EXPECT_NE(file->pread(0, buffer).status().message().find("handle from before power loss"),
            std::string::npos);
  EXPECT_EQ(file->append(as_bytes("x")).code(), Code::kIoError);
  EXPECT_EQ(file->pwrite(0, as_bytes("x")).code(), Code::kIoError);
  EXPECT_EQ(file->size().status().code(), Code::kIoError);
  EXPECT_EQ(file->truncate(0).code(), Code::kIoError);
  EXPECT_EQ(file->sync().code(), Code::kIoError);
  EXPECT_EQ(file->close().code(), Code::kIoError);
  EXPECT_EQ(read_file(fs, "d/f"), "abc");  // a new handle sees the surviving state
  file.reset();
  EXPECT_TRUE(disk.consistent());
}

// Garbage collection: an inode goes once neither the root (through volatile, durable or un-synced entries) nor an
// open handle reaches it, and only then. The disk counts references instead of walking the tree at every sync, so
// the count of inodes is checked exactly, and consistent() recounts every reference and walks the tree.
TEST(SimDisk, AnInodeIsForgottenOnceNothingReachesIt) {
  SimDisk disk(Random(1));
  SimFileSystem fs(disk);
  make_durable_dir(fs, "d");
  const size_t base = disk.inode_count();  // the root and d
  // A log's rolls: a new segment, a state file replaced by rename, the oldest segment removed.
  for (int i = 0; i < 300; ++i) {
    write_file(fs, "d/seg-" + std::to_string(i), "records", /*sync=*/true);
    write_file(fs, "d/state.tmp", "state " + std::to_string(i), /*sync=*/true);
    ASSERT_TRUE(fs.rename("d/state.tmp", "d/state").ok());
    if (i >= 2) ASSERT_TRUE(fs.remove("d/seg-" + std::to_string(i - 2)).ok());
    // Replaced and removed inodes keep their durable names until the directory is synced.
    EXPECT_EQ(disk.inode_count(), base + (i >= 2 ? 5 : i == 1 ? 4 : 2)) << i;
    ASSERT_TRUE(fs.sync_dir("d").ok());
    EXPECT_EQ(disk.inode_count(), base + std::min(i + 1, 2) + 1) << i;  // two segments and the state
    if (i % 50 == 0) ASSERT_TRUE(disk.consistent()) << disk.describe();
  }
  // An open handle keeps a removed file, synced or not, until it closes.
  std::unique_ptr<File> held = must_open(fs, "d/seg-299", OpenMode::kRead);
  ASSERT_TRUE(fs.remove("d/seg-299").ok());
  ASSERT_TRUE(fs.sync_dir("d").ok());
  EXPECT_EQ(disk.inode_count(), base + 3);
  EXPECT_EQ(read_handle(*held), "records");
  ASSERT_TRUE(held->close().ok());
  held.reset();
  EXPECT_EQ(disk.inode_count(), base + 2);
  // A directory moved into another and then removed with what it held: the move drops one of its names and keeps
  // the other until the sync, which is when a cycle of directories could be left behind, so the disk walks.
  ASSERT_TRUE(fs.create_dirs("t/u").ok());
  write_file(fs, "t/u/f", "f", /*sync=*/true);
  ASSERT_TRUE(fs.sync_dir("t/u").ok());
  ASSERT_TRUE(fs.sync_dir("t").ok());
  ASSERT_TRUE(fs.sync_dir("").ok());
  EXPECT_EQ(disk.inode_count(), base + 5);
  ASSERT_TRUE(fs.rename("t/u", "d/u").ok());
  ASSERT_TRUE(fs.sync_dir("t").ok());  // commits both halves
  ASSERT_TRUE(disk.consistent()) << disk.describe();
  EXPECT_EQ(disk.inode_count(), base + 5);
  ASSERT_TRUE(fs.remove("d/u/f").ok());
  ASSERT_TRUE(fs.remove_dir("d/u").ok());
  ASSERT_TRUE(fs.remove_dir("t").ok());
  EXPECT_EQ(disk.inode_count(), base + 5);  // all still named durably
  ASSERT_TRUE(fs.sync_dir("").ok());
  EXPECT_EQ(disk.inode_count(), base + 4);  // t
  ASSERT_TRUE(fs.sync_dir("d").ok());
  EXPECT_EQ(disk.inode_count(), base + 2);  // u, and f with it, though f's removal was never synced
  ASSERT_TRUE(disk.consistent()) << disk.describe();
  Random fault_rng(7);
  disk.power_loss(fault_rng);
  EXPECT_EQ(disk.inode_count(), base + 2);
  EXPECT_EQ(read_file(fs, "d/state"), "state 299");
}

// corrupt_next_reads damages what a read returns, never the file: one flipped bit or one sector of zeros inside
// the bytes read, of the next N files read under the path prefix, once each.
TEST(SimDisk, CorruptedReadsDamageTheAnswerNotTheFile) {
  int bit_flips = 0;
  int zeroed_sectors = 0;
  for (uint64_t seed = 1; seed <= 50; ++seed) {
    SimDisk disk{Random(seed)};
    SimFileSystem fs(disk);
    make_durable_dir(fs, "d");
    make_durable_dir(fs, "e");
    const std::string content(3000, '\xa5');
    for (const char* name : {"d/f", "d/g", "e/h"}) write_file(fs, name, content, /*sync=*/true);
    disk.corrupt_next_reads(2, "d/");
    std::unique_ptr<File> other = must_open(fs, "e/h", OpenMode::kRead);
    EXPECT_EQ(read_handle(*other), content) << "another path is not matched";
    for (const char* name : {"d/f", "d/g"}) {
      std::unique_ptr<File> file = must_open(fs, name, OpenMode::kRead);
      std::string bytes(1000, '\0');
      auto n = file->pread(700, MutableByteView(reinterpret_cast<uint8_t*>(bytes.data()), bytes.size()));
      ASSERT_TRUE(n.ok());
      ASSERT_EQ(*n, 1000u);
      size_t differing = 0;
      size_t first = bytes.size();
      size_t last = 0;
      for (size_t i = 0; i < bytes.size(); ++i) {
        if (bytes[i] == content[700 + i]) continue;
        ++differing;
        first = std::min(first, i);
        last = i;
      }
      ASSERT_GT(differing, 0u) << "seed " << seed;
      if (differing == 1 && std::bitset<8>(static_cast<uint8_t>(bytes[first] ^ content[0])).count() == 1) {
        ++bit_flips;
      } else {
        // Zeros within one 512-byte sector of the file (file offsets 700.. are sectors 1..3).
        EXPECT_EQ((700 + first) / 512, (700 + last) / 512) << "seed " << seed;
        for (size_t i = first; i <= last; ++i) EXPECT_EQ(bytes[i], '\0');
        ++zeroed_sectors;
      }
      EXPECT_EQ(read_handle(*file), content) << "a file is damaged once: the next read is true";
    }
    std::unique_ptr<File> again = must_open(fs, "d/f", OpenMode::kRead);
    EXPECT_EQ(read_handle(*again), content) << "the rule is spent";
    EXPECT_EQ(disk.stats().corrupted_reads, 2u);
    again.reset();
    other.reset();
    EXPECT_TRUE(disk.consistent());
  }
  EXPECT_GT(bit_flips, 20);
  EXPECT_GT(zeroed_sectors, 20);
}

TEST(SimDisk, WritebackBoundsTheUnsyncedBytes) {
  SimDiskOptions options;
  options.writeback_bytes_max = 1000;
  for (uint64_t seed = 0; seed < 50; ++seed) {
    SimDisk disk(Random(seed), options);
    SimFileSystem fs(disk);
    make_durable_dir(fs, "d");
    write_file(fs, "d/f", "", /*sync=*/true);
    ASSERT_TRUE(fs.sync_dir("d").ok());
    std::unique_ptr<File> file = must_open(fs, "d/f", OpenMode::kReadWrite);
    for (int i = 0; i < 30; ++i) ASSERT_TRUE(file->append(as_bytes(std::string(100, 'a' + i % 26))).ok());
    file.reset();
    Random fault_rng(seed);
    disk.power_loss(fault_rng);
    EXPECT_GE(read_file(fs, "d/f").value_or("").size(), 2000u);
    EXPECT_GT(disk.stats().writeback_ops, 0u);
  }
}

TEST(SimDisk, WritebackCommitsAPrefix) {
  SimDisk disk(Random(3));
  SimFileSystem fs(disk);
  ASSERT_TRUE(fs.create_dirs("d").ok());
  write_file(fs, "d/f", std::string(5000, 'a'), /*sync=*/false);
  Random rng(11);
  for (int i = 0; i < 20; ++i) disk.writeback(rng);
  EXPECT_GT(disk.stats().writeback_ops, 0u);
  EXPECT_TRUE(disk.consistent());
  EXPECT_EQ(read_file(fs, "d/f"), std::string(5000, 'a'));  // writeback changes nothing a reader sees
}

TEST(SimDisk, PowerLossIsDeterministic) {
  const auto run = [](uint64_t seed) {
    SimDisk disk{Random(seed)};
    SimFileSystem fs(disk);
    EXPECT_TRUE(fs.create_dirs("d/e").ok());
    for (int i = 0; i < 10; ++i) {
      std::unique_ptr<File> file = must_open(fs, "d/f" + std::to_string(i % 3), OpenMode::kCreate);
      EXPECT_TRUE(file->append(as_bytes(std::string(300 + i * 77, 'a' + i))).ok());
      if (i % 4 == 0) {
        EXPECT_TRUE(file->sync().ok());
      }
      if (i % 5 == 0) {
        EXPECT_TRUE(fs.sync_dir("d").ok());
      }
    }
    EXPECT_TRUE(fs.rename("d/f1", "d/e/g").ok());
    Random fault_rng(seed * 31);
    disk.power_loss(fault_rng);
    return std::make_pair(disk.trace_state_hash(), disk.describe());
  };
  std::set<uint64_t> hashes;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const auto first = run(seed);
    EXPECT_EQ(first, run(seed));
    hashes.insert(first.first);
  }
  EXPECT_GT(hashes.size(), 1u);  // the seed matters
}

}  // namespace
}  // namespace sluice
