// The raft checkers: what a run's RaftHistory must satisfy, whatever the faults did.
//   raft-agreement          every node that applied an index applied the same entry there (term and payload)
//   raft-committed-kept     every proposal answered "committed" at (index, term) is the entry at that index, and
//                           every node that was up at the end applied it
//   raft-one-leader-per-term no two nodes led one group in one term
//   raft-no-phantom         every applied payload was proposed, and to that group at most once
//   raft-stale-leader       (when max_stale_leader is set) no node kept leading a term for longer than that after
//                           another node led a later term of the group: check-quorum must depose it
#pragma once

#include <set>
#include <string>
#include <vector>

#include "sim/checkers/check.h"
#include "sim/raft/raft_history.h"

namespace sluice::sim {

struct RaftCheckInputs {
  const RaftHistory& history;
  std::vector<std::string> up_at_end;  // nodes whose final applied log must hold every committed entry
  Duration max_stale_leader{0};
};

// Runs the checkers named in `only` (every raft checker when empty) and adds their violations to `report`.
void check_raft(const RaftCheckInputs& inputs, const std::set<std::string>& only, CheckReport& report);

// Every raft checker's name.
const std::vector<std::string>& raft_checker_names();

}  // namespace sluice::sim
