#include "core/raft/file_group_storage.h"

namespace sluice::raft {

Result<std::unique_ptr<FileGroupStorage>> FileGroupStorage::open(FileSystem& fs, const std::string& dir) {
  SLUICE_TRY(create_dirs_durably(fs, dir));  // a power loss cannot take the new directories away
  SLUICE_ASSIGN_OR_RETURN(HardStateFile hard_state, HardStateFile::open(fs, dir + "/hard_state"));
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<FileRaftLog> log, FileRaftLog::open(fs, dir + "/log"));
  SLUICE_TRY(fs.sync_dir(dir));
  return std::unique_ptr<FileGroupStorage>(new FileGroupStorage(std::move(log), std::move(hard_state)));
}

Status FileGroupStorage::status() const {
  if (log_->failed()) return log_->status();
  return hard_state_.status();
}

}  // namespace sluice::raft
