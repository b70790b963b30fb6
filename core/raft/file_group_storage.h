// FileGroupStorage: one raft group's storage in a directory of the Env's FileSystem: `log` (FileRaftLog) and
// `hard_state` (HardStateFile). Opening recovers both (a torn log tail is cut; a hard state file with no valid slot
// is refused).
#pragma once

#include <memory>
#include <string>

#include "core/base/result.h"
#include "core/env/file_system.h"
#include "core/raft/file_raft_log.h"
#include "core/raft/group_storage.h"
#include "core/raft/hard_state_file.h"

namespace sluice::raft {

class FileGroupStorage final : public GroupStorage {
 public:
  // Creates `dir` (and its parents) when missing and syncs it.
  static Result<std::unique_ptr<FileGroupStorage>> open(FileSystem& fs, const std::string& dir);

  RaftLog& log() override { return *log_; }
  HardState hard_state() const override { return hard_state_.loaded(); }
  Status store_hard_state(const HardState& state) override { return hard_state_.store(state); }
  Status sync_log() override { return log_->sync(); }
  Status status() const override;

  const FileRaftLog& file_log() const { return *log_; }
  // The log stopped for space (FileRaftLog::stopped_for_space) and the hard state never failed: opening the
  // directory again gives the group what it had, as a restart of the node would.
  bool stopped_for_space() const { return log_->stopped_for_space() && hard_state_.status().ok(); }

 private:
  FileGroupStorage(std::unique_ptr<FileRaftLog> log, HardStateFile hard_state)
      : log_(std::move(log)), hard_state_(std::move(hard_state)) {}

  std::unique_ptr<FileRaftLog> log_;
  HardStateFile hard_state_;
};

}  // namespace sluice::raft
