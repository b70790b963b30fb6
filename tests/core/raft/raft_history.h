// A random history for a raft group on the in-memory transport: messages delivered out of order, dropped and
// duplicated, ticks, proposals (of entries covering 1 to max_count indexes), syncs, process crashes, power losses and
// partitions; safety checked after every step, liveness after everything heals. Shared by the RapidCheck property
// and the mutation proofs. Committed entries are compared whole, by their first index.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tests/core/raft/raft_test_cluster.h"

namespace sluice::raft::testing {

struct HistoryOp {
  uint32_t kind = 0;  // 0..99, a weighted choice (see apply)
  uint32_t a = 0;
  uint32_t b = 0;
};

struct HistorySettings {
  size_t voters = 3;
  CommitMode mode = CommitMode::kPersisted;
  bool pre_vote = true;
  bool check_quorum = true;
  uint32_t election_ticks = 5;
  uint32_t max_inflight = 2;
  uint32_t max_entries = 2;
  uint64_t max_bytes = UINT64_MAX;  // per append
  Index max_count = 1;              // a proposal covers 1 to max_count indexes
  uint64_t seed = 1;
  MutationSet mutations;
};

class RaftHistory {
 public:
  explicit RaftHistory(const HistorySettings& settings) : settings_(settings), c_(config_of(settings)) {
    for (NodeId id : c_.ids()) c_.node(id).auto_sync = false;
  }

  // Runs the ops then the heal; the first violation found, if any.
  std::optional<std::string> run(const std::vector<HistoryOp>& ops) {
    for (size_t i = 0; i < ops.size(); ++i) {
      apply(ops[i]);
      if (std::optional<std::string> v = check_safety()) return "after op " + std::to_string(i) + ": " + *v;
    }
    return heal_and_check_liveness();
  }

 private:
  static ClusterConfig config_of(const HistorySettings& s) {
    ClusterConfig config;
    config.voters = s.voters;
    config.seed = s.seed;
    config.options.commit_mode = s.mode;
    config.options.pre_vote = s.pre_vote;
    config.options.check_quorum = s.check_quorum;
    config.options.election_ticks = s.election_ticks;
    config.options.max_inflight_appends = s.max_inflight;
    config.options.max_entries_per_append = s.max_entries;
    config.options.max_bytes_per_append = s.max_bytes;
    config.options.mutations = s.mutations;
    return config;
  }

  NodeId pick(uint32_t a) const { return static_cast<NodeId>(a % settings_.voters) + 1; }

  void apply(const HistoryOp& op) {
    std::deque<Message>& net = c_.network();
    const uint32_t k = op.kind % 100;
    if (k < 30) {
      if (!net.empty()) c_.deliver_at(op.a % net.size());
    } else if (k < 37) {
      if (!net.empty()) net.erase(net.begin() + static_cast<ptrdiff_t>(op.a % net.size()));
    } else if (k < 41) {
      if (!net.empty()) net.push_back(net[op.a % net.size()]);
    } else if (k < 62) {
      c_.tick(pick(op.a));
    } else if (k < 72) {
      const Index count = 1 + op.b % settings_.max_count;
      for (NodeId id : c_.ids()) {
        if (c_.node(id).up && c_.raft(id).role() == Role::kLeader) {
          c_.propose(id, "v" + std::to_string(++proposed_), count);
        }
      }
    } else if (k < 82) {
      c_.sync(pick(op.a));
    } else if (k < 89) {
      crash(pick(op.a), k >= 85 && settings_.mode == CommitMode::kPersisted);
    } else if (k < 96) {
      const NodeId id = pick(op.a);
      if (!c_.node(id).up) c_.restart(id);
    } else if (k < 98) {
      if (pick(op.a) != pick(op.b)) c_.cut(pick(op.a), pick(op.b));
    } else {
      c_.heal();
    }
  }

  void crash(NodeId id, bool power_loss) {
    if (!c_.node(id).up) return;
    size_t down = 0;
    for (NodeId other : c_.ids()) down += c_.node(other).up ? 0 : 1;
    if (down + 1 > settings_.voters / 2) return;  // keep a majority up, so liveness after the heal is a fair ask
    c_.crash(id, power_loss);
  }

  std::optional<std::string> check_safety() {
    for (NodeId id : c_.ids()) {
      if (!c_.node(id).up) continue;
      Raft& raft = c_.raft(id);
      if (raft.role() == Role::kLeader) {
        auto [it, inserted] = leader_of_term_.emplace(raft.term(), id);
        if (it->second != id) {
          return "two leaders in term " + std::to_string(raft.term()) + ": " + std::to_string(it->second) + " and " +
                 std::to_string(id);
        }
      }
      if (std::optional<std::string> v = check_committed_prefix(id)) return v;
    }
    if (std::optional<std::string> v = check_committed_on_a_majority()) return v;
    return check_leaders_hold_committed();
  }

  // The entries of a log image by their first index.
  static std::map<Index, const Entry*> by_start(const std::vector<Entry>& entries) {
    std::map<Index, const Entry*> out;
    Index start = 1;
    for (const Entry& entry : entries) {
      out.emplace(start, &entry);
      start += entry.count;
    }
    return out;
  }

  // Every node's committed prefix agrees with every entry ever seen committed, and commits never shrink the record.
  // The commit index is an entry end; two committed prefixes that differ first differ at an entry both start at.
  std::optional<std::string> check_committed_prefix(NodeId id) {
    Raft& raft = c_.raft(id);
    const MemoryRaftLog& log = c_.node(id).log;
    if (raft.commit_index() > log.last_index()) return "node " + std::to_string(id) + " commits beyond its log";
    for (size_t k = 0; k < log.entries().size() && log.starts()[k] <= raft.commit_index(); ++k) {
      const Index start = log.starts()[k];
      const Entry& entry = log.entries()[k];
      if (start + entry.count - 1 > raft.commit_index()) {
        return "node " + std::to_string(id) + " commits inside the entry at " + std::to_string(start);
      }
      auto [it, inserted] = committed_.emplace(start, entry);
      if (!(it->second == entry)) {
        return "committed entry " + std::to_string(start) + " changed on node " + std::to_string(id);
      }
      auto [term_it, fresh] = commit_term_.emplace(start, raft.term());
      term_it->second = std::min(term_it->second, raft.term());
    }
    return std::nullopt;
  }

  // A committed entry survives: a majority holds it durably (`persisted`) or in its log (`replicated`, where only
  // process crashes happen, which keep the log).
  std::optional<std::string> check_committed_on_a_majority() {
    std::vector<std::map<Index, const Entry*>> images;
    for (NodeId id : c_.ids()) {
      images.push_back(by_start(settings_.mode == CommitMode::kPersisted ? c_.node(id).log.durable_entries()
                                                                         : c_.node(id).log.entries()));
    }
    for (const auto& [start, entry] : committed_) {
      size_t holders = 0;
      for (const auto& image : images) {
        auto it = image.find(start);
        if (it != image.end() && *it->second == entry) ++holders;
      }
      if (holders < settings_.voters / 2 + 1) {
        return "committed entry " + std::to_string(start) + " is on " + std::to_string(holders) + " nodes only";
      }
    }
    return std::nullopt;
  }

  // Leader completeness: a leader of a later term than an entry's commit holds that entry.
  std::optional<std::string> check_leaders_hold_committed() {
    for (NodeId id : c_.ids()) {
      if (!c_.node(id).up || c_.raft(id).role() != Role::kLeader) continue;
      const std::map<Index, const Entry*> log = by_start(c_.node(id).log.entries());
      for (const auto& [start, entry] : committed_) {
        if (commit_term_[start] >= c_.raft(id).term()) continue;
        auto it = log.find(start);
        if (it == log.end() || !(*it->second == entry)) {
          return "leader " + std::to_string(id) + " of term " + std::to_string(c_.raft(id).term()) +
                 " lacks committed entry " + std::to_string(start);
        }
      }
    }
    return std::nullopt;
  }

  std::optional<std::string> heal_and_check_liveness() {
    c_.heal();
    for (NodeId id : c_.ids()) {
      if (!c_.node(id).up) c_.restart(id);
    }
    std::optional<Index> final_index;
    std::optional<NodeId> final_leader;
    for (int round = 0; round < 400; ++round) {
      c_.tick_all();
      for (NodeId id : c_.ids()) c_.sync(id);
      c_.deliver_all();
      if (std::optional<std::string> v = check_safety()) return "while healing: " + *v;
      std::optional<NodeId> leader = c_.leader();
      if (!leader) continue;
      if (!final_index || final_leader != leader) {
        final_index = c_.propose(*leader, "final");
        final_leader = leader;
        if (*final_index == 0) final_index.reset();
        continue;
      }
      bool all = true;
      for (NodeId id : c_.ids()) all = all && c_.raft(id).commit_index() >= *final_index;
      if (all) return std::nullopt;
    }
    return std::string("no progress within 400 rounds after the heal");
  }

  HistorySettings settings_;
  RaftTestCluster c_;
  uint64_t proposed_ = 0;
  std::map<Term, NodeId> leader_of_term_;
  std::map<Index, Entry> committed_;   // by first index
  std::map<Index, Term> commit_term_;  // by first index: the lowest term a node was in when it saw it committed
};

}  // namespace sluice::raft::testing
