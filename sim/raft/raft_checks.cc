#include "sim/raft/raft_checks.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <utility>

namespace sluice::sim {
namespace {

using raft::GroupId;
using raft::Index;
using raft::Term;

double seconds(Instant at) { return std::chrono::duration<double>(at.time_since_epoch()).count(); }

// Caps one invariant's reported violations; the rest are counted in a figure.
class Reporter {
 public:
  Reporter(CheckReport& report, std::string invariant) : report_(report), invariant_(std::move(invariant)) {}
  void fail(std::string evidence) {
    if (++count_ <= kViolationsPerInvariantMax) {
      report_.fail(invariant_, std::move(evidence));
    } else {
      report_.count(invariant_ + " violations not shown");
    }
  }

 private:
  CheckReport& report_;
  std::string invariant_;
  size_t count_ = 0;
};

// The first entry applied at each (group, index), and by whom.
using Agreed = std::map<std::pair<GroupId, Index>, const RaftApplied*>;

Agreed check_agreement(const RaftHistory& h, CheckReport& report, bool enabled) {
  Agreed agreed;
  Reporter r(report, "raft-agreement");
  for (const RaftApplied& a : h.applied) {
    auto [it, inserted] = agreed.emplace(std::make_pair(a.group, a.index), &a);
    if (inserted || !enabled) continue;
    const RaftApplied& first = *it->second;
    if (first.term != a.term || first.payload != a.payload || first.count != a.count) {
      r.fail(fmt::format("group {} index {}: {} (boot {}) applied term {} '{}' ({} indexes) at {:.3f}s, {} (boot {}) "
                         "applied term {} '{}' ({} indexes) at {:.3f}s",
                         a.group, a.index, first.node, first.boot, first.term, first.payload, first.count,
                         seconds(first.at), a.node, a.boot, a.term, a.payload, a.count, seconds(a.at)));
    }
  }
  report.count("raft entries agreed", static_cast<int64_t>(agreed.size()));
  return agreed;
}

void check_committed_kept(const RaftCheckInputs& in, const Agreed& agreed, CheckReport& report) {
  Reporter r(report, "raft-committed-kept");
  // The last boot's applied index per (node, group): what each node holds at the end.
  std::map<std::pair<std::string, GroupId>, std::pair<uint32_t, Index>> final_applied;
  for (const RaftApplied& a : in.history.applied) {
    auto& [boot, index] = final_applied[{a.node, a.group}];
    if (a.boot > boot) index = 0;
    boot = std::max(boot, a.boot);
    if (a.boot == boot) index = std::max(index, a.index);
  }
  int64_t committed = 0;
  for (const RaftProposal& p : in.history.proposals) {
    if (!p.done || p.outcome.outcome != raft::ProposeOutcome::kCommitted) continue;
    ++committed;
    auto it = agreed.find({p.group, p.outcome.index});
    if (it == agreed.end() || it->second->payload != p.payload || it->second->term != p.outcome.term) {
      r.fail(fmt::format("group {}: '{}' was answered committed at index {} term {} (by {} at {:.3f}s), but {}",
                         p.group, p.payload, p.outcome.index, p.outcome.term, p.node, seconds(p.completed),
                         it == agreed.end() ? std::string("no node applied that index")
                                            : fmt::format("the index holds term {} '{}'", it->second->term,
                                                          it->second->payload)));
      continue;
    }
    for (const std::string& node : in.up_at_end) {
      auto f = final_applied.find({node, p.group});
      if (f == final_applied.end() || f->second.second < p.outcome.index) {
        r.fail(fmt::format("group {}: '{}' committed at index {}, but {} applied only up to {} by the end", p.group,
                           p.payload, p.outcome.index, node, f == final_applied.end() ? 0 : f->second.second));
      }
    }
  }
  report.count("raft proposals committed", committed);
}

void check_one_leader_per_term(const RaftHistory& h, CheckReport& report) {
  Reporter r(report, "raft-one-leader-per-term");
  std::map<std::pair<GroupId, Term>, const RaftLeadership*> leaders;
  for (const RaftLeadership& l : h.leaderships) {
    auto [it, inserted] = leaders.emplace(std::make_pair(l.group, l.term), &l);
    if (!inserted && it->second->node != l.node) {
      r.fail(fmt::format("group {} term {}: {} became leader at {:.3f}s and {} at {:.3f}s", l.group, l.term,
                         it->second->node, seconds(it->second->at), l.node, seconds(l.at)));
    }
  }
  report.count("raft leaderships", static_cast<int64_t>(h.leaderships.size()));
}

void check_no_phantom(const RaftHistory& h, const Agreed& agreed, CheckReport& report) {
  Reporter r(report, "raft-no-phantom");
  std::map<std::string, GroupId> proposed;
  for (const RaftProposal& p : h.proposals) proposed.emplace(p.payload, p.group);
  std::map<std::pair<GroupId, std::string>, Index> seen;
  for (const auto& [key, a] : agreed) {
    if (a->payload.empty()) continue;  // a new leader's no-op
    auto p = proposed.find(a->payload);
    if (p == proposed.end() || p->second != a->group) {
      r.fail(fmt::format("group {} index {}: '{}' was never proposed to this group", a->group, a->index, a->payload));
      continue;
    }
    auto [it, inserted] = seen.emplace(std::make_pair(a->group, a->payload), a->index);
    if (!inserted) {
      r.fail(fmt::format("group {}: '{}' was applied at index {} and at index {}", a->group, a->payload, it->second,
                         a->index));
    }
  }
}

// Samples are taken in time order; a node's streak of leading a term while a later term had a leader grows until
// it steps down (or the later leader goes away).
void check_stale_leader(const RaftCheckInputs& in, CheckReport& report) {
  if (in.max_stale_leader <= Duration(0)) return;
  Reporter r(report, "raft-stale-leader");
  std::map<std::pair<GroupId, std::string>, std::pair<Term, Instant>> streaks;  // stale since
  std::map<GroupId, std::vector<const RaftLeaderSample*>> at_instant;
  Instant current{};
  std::set<std::pair<GroupId, std::string>> reported;
  const auto judge = [&] {
    for (const auto& [group, leaders] : at_instant) {
      Term newest = 0;
      for (const RaftLeaderSample* s : leaders) newest = std::max(newest, s->term);
      for (const RaftLeaderSample* s : leaders) {
        const auto key = std::make_pair(group, s->node);
        if (s->term == newest) {
          streaks.erase(key);
          continue;
        }
        auto [it, fresh] = streaks.emplace(key, std::make_pair(s->term, s->at));
        if (!fresh && it->second.first != s->term) it->second = {s->term, s->at};
        if (s->at - it->second.second > in.max_stale_leader && reported.insert(key).second) {
          r.fail(fmt::format("group {}: {} still led term {} at {:.3f}s, {:.3f}s after a later term ({}) had a leader",
                             group, s->node, s->term, seconds(s->at), std::chrono::duration<double>(s->at -
                                                                                                     it->second.second)
                                                                          .count(),
                             newest));
        }
      }
    }
    // Nodes not leading at this instant end their streaks.
    for (auto it = streaks.begin(); it != streaks.end();) {
      const auto& leaders = at_instant[it->first.first];
      const bool leading = std::any_of(leaders.begin(), leaders.end(),
                                       [&](const RaftLeaderSample* s) { return s->node == it->first.second; });
      it = leading ? std::next(it) : streaks.erase(it);
    }
    at_instant.clear();
  };
  for (const RaftLeaderSample& s : in.history.samples) {
    if (s.at != current) {
      judge();
      current = s.at;
    }
    at_instant[s.group].push_back(&s);
  }
  judge();
}

bool wanted(const std::set<std::string>& only, const std::string& name) { return only.empty() || only.contains(name); }

}  // namespace

const std::vector<std::string>& raft_checker_names() {
  static const std::vector<std::string> names = {"raft-agreement", "raft-committed-kept", "raft-one-leader-per-term",
                                                 "raft-no-phantom", "raft-stale-leader"};
  return names;
}

void check_raft(const RaftCheckInputs& in, const std::set<std::string>& only, CheckReport& report) {
  const Agreed agreed = check_agreement(in.history, report, wanted(only, "raft-agreement"));
  if (wanted(only, "raft-committed-kept")) check_committed_kept(in, agreed, report);
  if (wanted(only, "raft-one-leader-per-term")) check_one_leader_per_term(in.history, report);
  if (wanted(only, "raft-no-phantom")) check_no_phantom(in.history, agreed, report);
  if (wanted(only, "raft-stale-leader")) check_stale_leader(in, report);
}

}  // namespace sluice::sim
