// The raft checkers on hand-built histories: each fails on the history its invariant forbids and passes on a clean one.
#include "sim/raft/raft_checks.h"

#include <gtest/gtest.h>

namespace sluice::sim {
namespace {

using namespace std::chrono_literals;

Instant at(Duration d) { return Instant{} + d; }

RaftProposal committed(std::string node, raft::GroupId g, std::string payload, raft::Index index, raft::Term term) {
  RaftProposal p;
  p.node = std::move(node);
  p.group = g;
  p.payload = std::move(payload);
  p.done = true;
  p.outcome = raft::Proposed{raft::ProposeOutcome::kCommitted, index, term};
  return p;
}

// n1 leads term 1 of group 1 and commits "a" at 1 and "b" at 2; every node applies both.
RaftProposal proposed(std::string node, raft::GroupId g, std::string payload) {
  RaftProposal p;
  p.node = std::move(node);
  p.group = g;
  p.payload = std::move(payload);
  return p;
}

RaftHistory clean() {
  RaftHistory h;
  h.proposals = {committed("n1", 1, "a", 1, 1), committed("n1", 1, "b", 2, 1)};
  for (const char* node : {"n1", "n2", "n3"}) {
    h.applied.push_back({node, 1, 1, 1, 1, "a", at(1s)});
    h.applied.push_back({node, 1, 1, 2, 1, "b", at(2s)});
  }
  h.leaderships = {{"n1", 1, 1, at(0s)}};
  return h;
}

std::vector<std::string> invariants(const RaftHistory& h, Duration max_stale = 0s) {
  CheckReport report;
  check_raft(RaftCheckInputs{h, {"n1", "n2", "n3"}, max_stale}, {}, report);
  std::vector<std::string> names;
  for (const Violation& v : report.violations) names.push_back(v.invariant);
  return names;
}

TEST(RaftChecks, ACleanHistoryPasses) { EXPECT_TRUE(invariants(clean(), 3s).empty()); }

TEST(RaftChecks, TwoEntriesAtOneIndexBreakAgreement) {
  RaftHistory h = clean();
  h.applied[3].payload = "b2";  // n2 applied another entry at index 2
  h.proposals.push_back(proposed("n2", 1, "b2"));
  const auto found = invariants(h);
  EXPECT_NE(std::find(found.begin(), found.end(), "raft-agreement"), found.end());
}

TEST(RaftChecks, ACommittedEntryMissingOrReplacedIsCaught) {
  RaftHistory h = clean();
  h.applied.pop_back();  // n3 never applied index 2
  EXPECT_EQ(invariants(h), std::vector<std::string>{"raft-committed-kept"});
  RaftHistory replaced = clean();
  replaced.proposals[1].outcome.term = 2;  // answered committed in a term whose entry is not there
  EXPECT_EQ(invariants(replaced), std::vector<std::string>{"raft-committed-kept"});
}

TEST(RaftChecks, ALaterBootMustApplyCommittedEntriesAgain) {
  RaftHistory h = clean();
  h.applied.push_back({"n3", 2, 1, 1, 1, "a", at(5s)});  // n3 rebooted and got only index 1 back
  EXPECT_EQ(invariants(h), std::vector<std::string>{"raft-committed-kept"});
}

TEST(RaftChecks, TwoLeadersInOneTermAreCaught) {
  RaftHistory h = clean();
  h.leaderships.push_back({"n2", 1, 1, at(3s)});
  EXPECT_EQ(invariants(h), std::vector<std::string>{"raft-one-leader-per-term"});
}

TEST(RaftChecks, PhantomAndDuplicatedEntriesAreCaught) {
  RaftHistory phantom = clean();
  phantom.proposals.erase(phantom.proposals.begin() + 1);
  phantom.proposals.push_back(proposed("n1", 2, "b"));  // "b" was proposed to group 2, not 1
  EXPECT_EQ(invariants(phantom), std::vector<std::string>{"raft-no-phantom"});
  RaftHistory twice = clean();
  for (const char* node : {"n1", "n2", "n3"}) twice.applied.push_back({node, 1, 1, 3, 1, "a", at(3s)});
  EXPECT_EQ(invariants(twice), std::vector<std::string>{"raft-no-phantom"});
}

TEST(RaftChecks, ALeaderThatKeepsLeadingAfterALaterTermIsCaughtOnlyPastTheBound) {
  RaftHistory h = clean();
  for (int i = 0; i <= 40; ++i) {  // 4 s of samples: n1 leads term 1 while n2 leads term 2
    h.samples.push_back({at(i * 100ms), 1, "n1", 1});
    h.samples.push_back({at(i * 100ms), 1, "n2", 2});
  }
  EXPECT_EQ(invariants(h, 3s), std::vector<std::string>{"raft-stale-leader"});
  EXPECT_TRUE(invariants(h, 5s).empty());
  EXPECT_TRUE(invariants(h, 0s).empty());  // unchecked
}

}  // namespace
}  // namespace sluice::sim
