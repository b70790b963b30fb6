// Helpers shared by the SimDisk tests: open, write and read whole files through a FileSystem, and run one
// scenario on a fresh disk for each of many power-loss seeds.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/base/bytes.h"
#include "core/env/file_system.h"
#include "core/env/random.h"
#include "sim/world/sim_disk.h"
#include "sim/world/sim_file_system.h"

namespace sluice::sim_disk_test {

// A file handle that must open; the test fails (and the handle is null) otherwise.
inline std::unique_ptr<File> must_open(FileSystem& fs, std::string_view path, OpenMode mode) {
  Result<std::unique_ptr<File>> file = fs.open(path, mode);
  EXPECT_TRUE(file.ok()) << path << ": " << file.status().to_string();
  if (!file.ok()) return nullptr;
  return std::move(file).value();
}

inline void write_file(FileSystem& fs, std::string_view path, std::string_view content, bool sync) {
  std::unique_ptr<File> file = must_open(fs, path, OpenMode::kCreateTruncate);
  ASSERT_NE(file, nullptr);
  ASSERT_TRUE(file->append(as_bytes(content)).ok());
  if (sync) {
    ASSERT_TRUE(file->sync().ok());
  }
  ASSERT_TRUE(file->close().ok());
}

inline std::string read_handle(File& file) {
  Result<uint64_t> size = file.size();
  EXPECT_TRUE(size.ok());
  if (!size.ok()) return {};
  std::string out(*size, '\0');
  Result<size_t> n = file.pread(0, MutableByteView(reinterpret_cast<uint8_t*>(out.data()), out.size()));
  EXPECT_TRUE(n.ok());
  EXPECT_EQ(n.ok() ? *n : 0, out.size());
  return out;
}

// The file's content, or nothing when it does not exist.
inline std::optional<std::string> read_file(FileSystem& fs, std::string_view path) {
  Result<std::unique_ptr<File>> file = fs.open(path, OpenMode::kRead);
  if (!file.ok()) {
    EXPECT_EQ(file.status().code(), Code::kNotFound) << file.status().to_string();
    return std::nullopt;
  }
  return read_handle(**file);
}

inline bool file_exists(FileSystem& fs, std::string_view path) {
  Result<bool> exists = fs.exists(path);
  EXPECT_TRUE(exists.ok());
  return exists.ok() && *exists;
}

// A durable directory "d" at the root, as storage would make it: mkdir, then sync the parent.
inline void make_durable_dir(FileSystem& fs, std::string_view dir) {
  ASSERT_TRUE(fs.create_dirs(dir).ok());
  ASSERT_TRUE(fs.sync_dir(parent_dir(dir)).ok());
}

// Runs `scenario(disk, fs)` on a fresh disk for every seed in [0, seeds), each time followed by a power loss
// drawn from that seed and by `check(disk, fs)`.
template <typename Scenario, typename Check>
void for_each_power_loss(uint64_t seeds, Scenario scenario, Check check) {
  for (uint64_t seed = 0; seed < seeds; ++seed) {
    SCOPED_TRACE("power-loss seed " + std::to_string(seed));
    SimDisk disk(Random(seed + 1000));
    SimFileSystem fs(disk);
    scenario(disk, fs);
    Random fault_rng(seed);
    disk.power_loss(fault_rng);
    EXPECT_TRUE(disk.consistent());
    check(disk, fs);
    if (::testing::Test::HasFailure()) return;
  }
}

}  // namespace sluice::sim_disk_test
