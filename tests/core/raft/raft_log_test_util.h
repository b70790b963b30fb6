// Helpers for the raft log tests: entries, whole-log reads, and a FileRaftLog on a fresh simulated disk.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "core/env/file_system.h"
#include "core/env/random.h"
#include "core/raft/file_raft_log.h"
#include "core/raft/raft_log.h"
#include "sim/world/sim_disk.h"
#include "sim/world/sim_file_system.h"

namespace sluice::raft::testing {

inline const std::string kLogPath = "raft.log";

// No limit on a read's payload bytes.
inline constexpr uint64_t kAnyBytes = UINT64_MAX;

inline Entry entry(Term term, std::string payload, Index count = 1) {
  return Entry{.term = term, .count = count, .payload = std::move(payload)};
}

// Every entry of the log.
inline std::vector<Entry> all_entries(const RaftLog& log) {
  if (log.last_index() == 0) return {};
  return log.read(1, log.last_index(), kAnyBytes);
}

// Null, with a test failure, when it does not open.
inline std::unique_ptr<FileRaftLog> open_log(FileSystem& fs, const std::string& path = kLogPath) {
  Result<std::unique_ptr<FileRaftLog>> log = FileRaftLog::open(fs, path);
  EXPECT_TRUE(log.ok()) << log.status().to_string();
  return log.ok() ? std::move(log).value() : nullptr;
}

// A handle on a file the test damages or inspects directly.
inline std::unique_ptr<File> open_raw(FileSystem& fs, const std::string& path = kLogPath) {
  Result<std::unique_ptr<File>> file = fs.open(path, OpenMode::kReadWrite);
  EXPECT_TRUE(file.ok()) << file.status().to_string();
  return file.ok() ? std::move(file).value() : nullptr;
}

// A disk, its file system, and at most one open log over it (the log closes before the disk goes).
struct DiskWorld {
  explicit DiskWorld(uint64_t seed = 1) : disk(Random(seed)), fs(disk) {}
  ~DiskWorld() { log.reset(); }

  FileRaftLog& reopen() {
    log.reset();
    log = open_log(fs);
    return *log;
  }
  void power_loss(uint64_t seed) {
    log.reset();
    Random rng(seed);
    disk.power_loss(rng);
  }

  SimDisk disk;
  SimFileSystem fs;
  std::unique_ptr<FileRaftLog> log;
};

}  // namespace sluice::raft::testing
