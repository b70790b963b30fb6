// GroupStorage: what one raft group keeps on a node: its log and its hard state. The host persists through it and
// nothing else; a file implementation (FileRaftLog beside a HardStateFile) serves real nodes and the simulator, the
// memory one tests of the host's own logic.
#pragma once

#include "core/base/status.h"
#include "core/raft/raft_log.h"
#include "core/raft/types.h"

namespace sluice::raft {

class GroupStorage {
 public:
  virtual ~GroupStorage() = default;

  virtual RaftLog& log() = 0;
  // The hard state last stored (as loaded at open for a restarted node; {} for a new one).
  virtual HardState hard_state() const = 0;
  // Returns once `state` survives a power loss.
  virtual Status store_hard_state(const HardState& state) = 0;
  // Returns once every entry of the log survives a power loss: log().durable_index() == log().last_index().
  virtual Status sync_log() = 0;
  // Ok, or the disk error that stopped this storage (a failed append poisons a file log without a caller to tell).
  virtual Status status() const { return Status(); }
  // True when the last stop is known to have been clean (a clean-shutdown marker), so the log holds everything it held
  // before; false after a crash or power loss, and whenever the storage cannot tell (Options::unclean_start).
  virtual bool clean_start() const { return false; }
};

// In memory, with MemoryRaftLog's durable image: power_loss() forgets what was not synced. Outlives a "process".
class MemoryGroupStorage final : public GroupStorage {
 public:
  RaftLog& log() override { return log_; }
  HardState hard_state() const override { return hard_state_; }
  Status store_hard_state(const HardState& state) override {
    hard_state_ = state;
    return Status();
  }
  Status sync_log() override {
    log_.sync();
    return Status();
  }
  void power_loss() {
    log_.power_loss();
    clean_start_ = false;
  }
  bool clean_start() const override { return clean_start_; }
  void set_clean_start(bool clean) { clean_start_ = clean; }
  MemoryRaftLog& memory_log() { return log_; }

 private:
  MemoryRaftLog log_;
  HardState hard_state_;
  bool clean_start_ = true;  // a test's "process restart" keeps everything
};

}  // namespace sluice::raft
