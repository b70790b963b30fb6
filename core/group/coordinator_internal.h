// Helpers shared by the coordinator's files: error-only answers, and the guard of a parked request.
#pragma once

#include <memory>
#include <string>

#include "core/group/group.h"

namespace sluice::group::internal {

inline JoinResult join_error(ErrorCode error, std::string member_id) {
  JoinResult result;
  result.error = error;
  result.member_id = std::move(member_id);
  return result;
}

inline SyncResult sync_error(ErrorCode error) {
  SyncResult result;
  result.error = error;
  return result;
}

// Clears a member's pointer to a parked request whose fiber unwinds before it was answered (a node kill).
template <typename R>
struct Unpark {
  std::shared_ptr<Group> group;
  Parked<R>& parked;
  Parked<R>* Member::*slot;
  ~Unpark() {
    if (parked.result.has_value() || group == nullptr) return;
    for (auto& [id, member] : group->members) {
      if (member.*slot == &parked) member.*slot = nullptr;
    }
  }
};

}  // namespace sluice::group::internal
