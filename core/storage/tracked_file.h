// TrackedFile: a File decorator that remembers whether the file changed since its last successful sync, so that
// sync() of an unchanged file costs nothing. The index files use it: most group-commit rounds add no index entry
// (one per index.interval.bytes). The count is read before the sync, so a write made while the syncing fiber
// waits for the device is covered by the next sync.
#pragma once

#include <algorithm>
#include <memory>

#include "core/base/assert.h"
#include "core/env/file_system.h"

namespace sluice::storage {

class TrackedFile final : public File {
 public:
  // `synced`: known to be synced already (a file reopened after it was closed synced); by default it is in doubt.
  explicit TrackedFile(std::unique_ptr<File> file, bool synced = false) : file_(std::move(file)) {
    SLUICE_ASSERT(file_ != nullptr);
    if (synced) synced_writes_ = writes_;
  }

  Result<size_t> pread(uint64_t offset, MutableByteView out) override { return file_->pread(offset, out); }
  Result<size_t> pread_append(uint64_t offset, size_t count, Bytes& out) override {
    return file_->pread_append(offset, count, out);
  }
  // Counted before the write: a failed write still leaves the file in doubt.
  Status append(ByteView data) override {
    ++writes_;
    return file_->append(data);
  }
  Status pwrite(uint64_t offset, ByteView data) override {
    ++writes_;
    return file_->pwrite(offset, data);
  }
  Status pwrite_gathered(uint64_t offset, std::span<const ByteView> parts) override {
    ++writes_;
    return file_->pwrite_gathered(offset, parts);
  }
  Status preallocate(uint64_t size) override {
    ++writes_;
    return file_->preallocate(size);
  }
  Result<uint64_t> size() override { return file_->size(); }
  Status truncate(uint64_t size) override {
    ++writes_;
    return file_->truncate(size);
  }
  Status sync() override {
    const uint64_t writes = writes_;
    if (writes == synced_writes_) return Status();
    SLUICE_TRY(file_->sync());
    synced_writes_ = std::max(synced_writes_, writes);
    return Status();
  }
  Status close() override { return file_->close(); }
  bool unsynced() const { return writes_ != synced_writes_; }

 private:
  std::unique_ptr<File> file_;
  uint64_t writes_ = 1;  // starts unsynced: a new or reopened file is in doubt
  uint64_t synced_writes_ = 0;
};

}  // namespace sluice::storage
