#include "sim/selftest/journal.h"

#include <gtest/gtest.h>

#include "sim/world/sim_disk.h"
#include "sim/world/sim_file_system.h"

namespace sluice {
namespace {

std::vector<std::string> strings(const std::vector<Bytes>& records) {
  std::vector<std::string> out;
  for (const Bytes& r : records) out.emplace_back(as_chars(r));
  return out;
}

TEST(Journal, AppendsSurviveReopen) {
  SimDisk disk{Random(1)};
  SimFileSystem fs(disk);
  {
    auto journal = Journal::open(fs, "j");
    ASSERT_TRUE(journal.ok());
    for (const char* m : {"a", "bb", ""}) ASSERT_TRUE((*journal)->append(as_bytes(m)).ok());
    ASSERT_TRUE((*journal)->sync().ok());
  }
  auto reopened = Journal::open(fs, "j");
  ASSERT_TRUE(reopened.ok());
  EXPECT_EQ(strings((*reopened)->records()), (std::vector<std::string>{"a", "bb", ""}));
  EXPECT_EQ((*reopened)->truncated_bytes(), 0u);
}

// Synced records always survive a power loss; an un-synced tail is lost, kept, or torn and then truncated.
TEST(Journal, RecoveryTruncatesATornTailAndKeepsEverySyncedRecord) {
  int torn = 0;
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    SimDisk disk{Random(seed)};
    SimFileSystem fs(disk);
    {
      auto journal = Journal::open(fs, "j");
      ASSERT_TRUE(journal.ok());
      for (int i = 0; i < 3; ++i) ASSERT_TRUE((*journal)->append(as_bytes(std::string(300, 'a' + i))).ok());
      ASSERT_TRUE((*journal)->sync().ok());
      ASSERT_TRUE((*journal)->append(as_bytes(std::string(2000, 'z'))).ok());
    }
    Random faults(seed * 7919);
    disk.power_loss(faults);
    auto recovered = Journal::open(fs, "j");
    ASSERT_TRUE(recovered.ok()) << "seed " << seed;
    const size_t kept = (*recovered)->records().size();
    ASSERT_TRUE(kept == 3 || kept == 4) << "seed " << seed << " kept " << kept;
    for (int i = 0; i < 3; ++i) EXPECT_EQ(strings((*recovered)->records())[i], std::string(300, 'a' + i));
    if ((*recovered)->truncated_bytes() > 0) {
      ++torn;
      EXPECT_EQ(kept, 3u);
      EXPECT_EQ(*fs.open("j", OpenMode::kRead).value()->size(), (*recovered)->size_bytes());
    }
  }
  EXPECT_GT(torn, 0) << "some seed must tear the un-synced record";
}

TEST(Journal, ReportsDiskErrorsInsteadOfHidingThem) {
  SimDisk disk{Random(3)};
  SimFileSystem fs(disk);
  auto journal = Journal::open(fs, "j");
  ASSERT_TRUE(journal.ok());
  disk.set_capacity_bytes(disk.used_bytes() + 20);
  EXPECT_EQ((*journal)->append(as_bytes(std::string(100, 'x'))).code(), Code::kNoSpace);
  disk.fail_next(DiskOp::kSync, 1);
  EXPECT_EQ((*journal)->sync().code(), Code::kIoError);
}

}  // namespace
}  // namespace sluice
