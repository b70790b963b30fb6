// Journal: an append-only file of checksummed, length-prefixed records. A tiny stand-in for a partition log that
// the echo scenario and the two-world tests use to exercise the FileSystem seam: appends, sync, directory sync
// on creation, and recovery that truncates a torn tail after a crash.
//
// Record layout (little endian): u32 length, u64 checksum of (length, payload), payload.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/base/bytes.h"
#include "core/base/result.h"
#include "core/env/file_system.h"

namespace sluice {

class Journal {
 public:
  static constexpr size_t kHeaderBytes = 12;
  static constexpr size_t kMaxRecordBytes = 1 << 20;

  // Opens or creates the journal at `path`. Recovery keeps the longest prefix of valid records and truncates
  // whatever follows (a torn tail); a newly created file's directory entry is synced before returning.
  static Result<std::unique_ptr<Journal>> open(FileSystem& fs, const std::string& path);

  Status append(ByteView payload);
  Status sync();
  const std::vector<Bytes>& records() const { return records_; }
  uint64_t size_bytes() const { return size_bytes_; }
  // Bytes dropped from the tail by the last recovery.
  uint64_t truncated_bytes() const { return truncated_bytes_; }

  // Reads the valid records of a journal without changing the file (for checkers).
  static Result<std::vector<Bytes>> read_records(FileSystem& fs, const std::string& path);

 private:
  Journal(std::unique_ptr<File> file, std::vector<Bytes> records, uint64_t size, uint64_t truncated)
      : file_(std::move(file)), records_(std::move(records)), size_bytes_(size), truncated_bytes_(truncated) {}

  std::unique_ptr<File> file_;
  std::vector<Bytes> records_;
  uint64_t size_bytes_;
  uint64_t truncated_bytes_;
};

}  // namespace sluice
