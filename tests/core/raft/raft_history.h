// A random history for a raft group on the in-memory transport: messages delivered out of order, dropped and
// duplicated, ticks, proposals, syncs, process crashes, power losses and partitions; safety checked after every
// step, liveness after everything heals. Shared by the RapidCheck property and the mutation proofs.
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
      for (NodeId id : c_.ids()) {
        if (c_.node(id).up && c_.raft(id).role() == Role::kLeader) c_.propose(id, "v" + std::to_string(++proposed_));
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

  // Every node's committed prefix agrees with every entry ever seen committed, and commits never shrink the record.
  std::optional<std::string> check_committed_prefix(NodeId id) {
    Raft& raft = c_.raft(id);
    const std::vector<Entry>& log = c_.node(id).log.entries();
    if (raft.commit_index() > log.size()) return "node " + std::to_string(id) + " commits beyond its log";
    for (Index i = 1; i <= raft.commit_index(); ++i) {
      auto [it, inserted] = committed_.emplace(i, log[i - 1]);
      if (!(it->second == log[i - 1])) {
        return "committed entry " + std::to_string(i) + " changed on node " + std::to_string(id);
      }
      auto [term_it, fresh] = commit_term_.emplace(i, raft.term());
      term_it->second = std::min(term_it->second, raft.term());
    }
    return std::nullopt;
  }

  // A committed entry survives: a majority holds it durably (`persisted`) or in its log (`replicated`, where only
  // process crashes happen, which keep the log).
  std::optional<std::string> check_committed_on_a_majority() {
    for (const auto& [index, entry] : committed_) {
      size_t holders = 0;
      for (NodeId id : c_.ids()) {
        const std::vector<Entry>& log = settings_.mode == CommitMode::kPersisted ? c_.node(id).log.durable_entries()
                                                                                 : c_.node(id).log.entries();
        if (log.size() >= index && log[index - 1] == entry) ++holders;
      }
      if (holders < settings_.voters / 2 + 1) {
        return "committed entry " + std::to_string(index) + " is on " + std::to_string(holders) + " nodes only";
      }
    }
    return std::nullopt;
  }

  // Leader completeness: a leader of a later term than an entry's commit holds that entry.
  std::optional<std::string> check_leaders_hold_committed() {
    for (NodeId id : c_.ids()) {
      if (!c_.node(id).up || c_.raft(id).role() != Role::kLeader) continue;
      const std::vector<Entry>& log = c_.node(id).log.entries();
      for (const auto& [index, entry] : committed_) {
        if (commit_term_[index] >= c_.raft(id).term()) continue;
        if (log.size() < index || !(log[index - 1] == entry)) {
          return "leader " + std::to_string(id) + " of term " + std::to_string(c_.raft(id).term()) +
                 " lacks committed entry " + std::to_string(index);
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
  std::map<Index, Entry> committed_;
  std::map<Index, Term> commit_term_;
};

}  // namespace sluice::raft::testing
