// What a raft scenario records, for its checkers: every proposal and its fate, every entry each node applied (per
// boot), every leadership a node took, and leadership samples over time. The world events (faults, boots) go to the
// ordinary History the injector writes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/env/clock.h"
#include "core/raft/host.h"

namespace sluice::sim {

struct RaftProposal {
  std::string node;
  raft::GroupId group = 0;
  std::string payload;
  Instant invoked{};
  Instant completed{};
  bool done = false;
  raft::Proposed outcome;
};

struct RaftApplied {
  std::string node;
  uint32_t boot = 0;
  raft::GroupId group = 0;
  raft::Index index = 0;  // the entry's first index
  raft::Term term = 0;
  std::string payload;
  Instant at{};
  raft::Index count = 1;  // the indexes the entry covers, from `index`
};

struct RaftLeadership {
  std::string node;
  raft::GroupId group = 0;
  raft::Term term = 0;
  Instant at{};
};

// Who led which group in which term at one instant (only leaders are listed).
struct RaftLeaderSample {
  Instant at{};
  raft::GroupId group = 0;
  std::string node;
  raft::Term term = 0;
};

struct RaftHistory {
  std::vector<RaftProposal> proposals;
  std::vector<RaftApplied> applied;
  std::vector<RaftLeadership> leaderships;
  std::vector<RaftLeaderSample> samples;
  Instant healed_at{};
  bool healed = false;
};

}  // namespace sluice::sim
