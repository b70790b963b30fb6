// IndexFile: the file under an OffsetIndex or a TimeIndex, which its segment may close while the segment is closed
// (segment_file_cache.h) and open again, by its current path, before it changes the index. The entries stay in
// memory either way; only the descriptor goes.
//
// The handle is shared: a fiber suspended in a write or sync through it keeps the file open across a release().
#pragma once

#include <memory>
#include <string>
#include <utility>

#include "core/base/assert.h"
#include "core/env/file_system.h"
#include "core/storage/tracked_file.h"

namespace sluice::storage {

class IndexFile {
 public:
  IndexFile(FileSystem& fs, std::string path, std::unique_ptr<File> file)
      : fs_(fs), path_(std::move(path)), file_(std::make_shared<TrackedFile>(std::move(file))) {}

  const std::string& path() const { return path_; }
  // After a rename: where reopen() and a released sync look.
  void set_path(std::string path) { path_ = std::move(path); }
  bool is_open() const { return file_ != nullptr; }
  // REQUIRES: is_open(). Hold it only across the I/O made with it.
  std::shared_ptr<TrackedFile> handle() const {
    SLUICE_ASSERT(is_open());
    return file_;
  }
  // Closes the descriptor (once the calls in flight on it return), remembering whether it still needs a sync.
  void release() {
    if (file_ == nullptr) return;
    released_unsynced_ = file_->unsynced();
    file_.reset();
  }
  // Opens the file again (it must exist: read-write, never created), as synced as it was when released.
  Status reopen() {
    if (file_ != nullptr) return Status();
    SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<File> file, fs_.open(path_, OpenMode::kReadWrite));
    file_ = std::make_shared<TrackedFile>(std::move(file), /*synced=*/!released_unsynced_);
    return Status();
  }
  // Free when unchanged since the last sync. A released file that still needs one is synced through a descriptor of
  // its own (fdatasync covers the file, whichever descriptor asks).
  Status sync() {
    if (std::shared_ptr<TrackedFile> file = file_; file != nullptr) return file->sync();
    if (!released_unsynced_) return Status();
    SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<File> file, fs_.open(path_, OpenMode::kRead));
    SLUICE_TRY(file->sync());
    SLUICE_TRY(file->close());
    released_unsynced_ = false;
    return Status();
  }
  bool unsynced() const { return file_ != nullptr ? file_->unsynced() : released_unsynced_; }
  Status close() {
    if (file_ == nullptr) return Status();
    std::shared_ptr<TrackedFile> file = std::move(file_);
    released_unsynced_ = file->unsynced();
    return file->close();
  }

 private:
  FileSystem& fs_;
  std::string path_;
  std::shared_ptr<TrackedFile> file_;  // null while released
  bool released_unsynced_ = false;     // while released: it changed since its last sync
};

}  // namespace sluice::storage
