// Entries covering spans of indexes (a partition's record batches: one entry per batch, one index per record):
// replication and commit in indexes, appends bounded by entries and bytes, a `next` inside an entry moved back to
// its start, and a divergent follower whose entries have other spans than the leader's.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/base/assert.h"
#include "tests/core/raft/raft_test_cluster.h"
#include "tests/probe_hits.h"

namespace sluice::raft::testing {
namespace {

ClusterConfig config_of(size_t voters, bool check_quorum = true) {
  ClusterConfig config;
  config.voters = voters;
  config.options.check_quorum = check_quorum;
  return config;
}

Entry span(Term term, std::string payload, Index count) {
  return Entry{.term = term, .count = count, .payload = std::move(payload)};
}

// Writes `entries` into a crashed node's log from index 1, synced, with `term` as its persisted term.
void seed(RaftTestCluster& c, NodeId id, const std::vector<Entry>& entries, Term term) {
  TestNode& n = c.node(id);
  ASSERT_FALSE(n.up);
  ASSERT_EQ(n.log.last_index(), 0u);
  n.log.append(1, entries);
  n.log.sync();
  n.disk.term = term;
}

TEST(RaftSpans, ProposalsReturnTheirFirstIndexAndReplicateWhole) {
  RaftTestCluster c(config_of(3));
  ASSERT_TRUE(c.elect(1));  // the no-op: index 1
  EXPECT_EQ(c.propose(1, "five", 5), 2u);
  EXPECT_EQ(c.propose(1, "one", 1), 7u);
  EXPECT_EQ(c.propose(1, "hundred", 100), 8u);
  EXPECT_EQ(c.node(1).log.last_index(), 107u);
  c.deliver_all();
  EXPECT_EQ(c.raft(1).commit_index(), 107u);
  c.tick(1);
  c.deliver_all();
  for (NodeId id : c.ids()) {
    EXPECT_EQ(c.node(id).log.entries(), c.node(1).log.entries()) << id;
    EXPECT_EQ(c.node(id).log.starts(), (std::vector<Index>{1, 2, 7, 8})) << id;
    EXPECT_EQ(c.raft(id).commit_index(), 107u) << id;
  }
  for (const FollowerStatus& f : c.raft(1).status().followers) {
    EXPECT_EQ(f.match, 107u);
    EXPECT_EQ(f.lag, 0u);
  }
}

TEST(RaftSpans, TheCommitIndexIsAlwaysAnEntryEnd) {
  ClusterConfig config = config_of(3);
  config.options.max_entries_per_append = 1;
  RaftTestCluster c(config);
  ASSERT_TRUE(c.elect(1));
  for (int i = 0; i < 6; ++i) c.propose(1, "b" + std::to_string(i), 3 + static_cast<Index>(i));
  // Answers one by one: every commit index seen on any node ends an entry.
  while (!c.network().empty()) {
    c.deliver_at(0);
    for (NodeId id : c.ids()) {
      const Index commit = c.raft(id).commit_index();
      ASSERT_TRUE(c.node(id).log.is_entry_end(commit)) << "node " << id << " commit " << commit;
    }
  }
  EXPECT_EQ(c.raft(1).commit_index(), c.node(1).log.last_index());
}

TEST(RaftSpans, AppendsAreBoundedByBytesButCarryAtLeastOneEntry) {
  ClusterConfig config = config_of(3);
  config.options.max_bytes_per_append = 100;
  config.options.max_inflight_appends = 1;  // what is proposed meanwhile waits, and leaves together
  RaftTestCluster c(config);
  ASSERT_TRUE(c.elect(1));
  c.propose(1, std::string(60, 'a'), 10);   // [2, 11]: in flight alone
  c.propose(1, std::string(30, 'b'), 10);   // [12, 21]
  c.propose(1, std::string(20, 'c'), 10);   // [22, 31]: b and c together are 50 bytes
  c.propose(1, std::string(300, 'd'), 10);  // [32, 41]: alone over the limit, sent alone
  std::vector<Message> to_2;
  c.deliver_all([&to_2](const Message& m) {
    if (m.to == 2 && m.type == MessageType::kAppend) to_2.push_back(m);
    return false;
  });
  std::vector<std::vector<Index>> spans;
  for (const Message& m : to_2) {
    uint64_t bytes = 0;
    std::vector<Index> counts;
    for (const Entry& e : m.entries) {
      bytes += e.payload.size();
      counts.push_back(e.count);
    }
    EXPECT_TRUE(m.entries.size() == 1 || bytes <= 100) << to_string(m);
    spans.push_back(counts);
  }
  EXPECT_EQ(spans, (std::vector<std::vector<Index>>{{10}, {10, 10}, {10}}));
  EXPECT_EQ(c.node(2).log.entries(), c.node(1).log.entries());
  EXPECT_EQ(c.raft(1).commit_index(), 41u);
}

TEST(RaftSpans, TheInflightWindowCountsAppendsAndNextMovesByWholeEntries) {
  ClusterConfig config = config_of(3);
  config.options.max_inflight_appends = 2;
  config.options.max_entries_per_append = 1;
  RaftTestCluster c(config);
  ASSERT_TRUE(c.elect(1));
  c.deliver_all();
  for (int i = 0; i < 4; ++i) c.propose(1, "w", 50);
  std::vector<Index> ends;
  for (const Message& m : c.network()) {
    if (m.to == 2 && m.type == MessageType::kAppend) ends.push_back(m.log_index + span_of(m.entries));
  }
  EXPECT_EQ(ends, (std::vector<Index>{51, 101})) << "two appends of one 50-index entry each in flight";
  for (const FollowerStatus& f : c.raft(1).status().followers) {
    EXPECT_EQ(f.next, 102u);
    EXPECT_EQ(f.inflight, 2u);
  }
  c.deliver_all();
  EXPECT_EQ(c.raft(1).commit_index(), 201u);
}

// The leader's entries [2, 11] (term 1) were never on node 3, whose own [2] and [3, 5] are of term 2 (a deposed
// leader's). When node 3 restarts, the leader probes it from its last index; node 3's hint (index 5, term 2) falls
// inside the leader's [2, 11], so `next` lands mid-entry, and the next append starts at 2, that entry's start.
TEST(RaftSpans, AFollowerWhoseNextLandsInsideAnEntryIsSentThatWholeEntry) {
  RaftTestCluster c(config_of(3));
  for (NodeId id : c.ids()) c.crash(id, false);
  seed(c, 1, {span(1, "", 1), span(1, "ten", 10)}, 2);
  seed(c, 2, {span(1, "", 1)}, 2);
  seed(c, 3, {span(1, "", 1), span(2, "", 1), span(2, "three", 3)}, 2);
  for (NodeId id : c.ids()) c.restart(id);
  c.cut(1, 3);
  ASSERT_TRUE(c.elect(1));  // term 3, with node 2; its no-op at 12
  EXPECT_EQ(c.propose(1, "four", 4), 13u);
  c.deliver_all();
  ASSERT_EQ(c.raft(1).commit_index(), 16u);
  c.heal();
  // Node 3 learns the leader from heartbeats, while every append to it is lost.
  auto appends_to_3 = [](const Message& m) { return m.to == 3 && m.type == MessageType::kAppend; };
  c.tick(1);
  c.deliver_all(appends_to_3);
  ASSERT_EQ(c.raft(3).leader(), 1u);
  // A restart: the leader forgets what it knew of node 3 and probes from its own last index (prev 16, term 3).
  c.crash(3, false);
  c.restart(3);
  const uint64_t inside_before = probe_hits("raft.next_inside_an_entry");
  std::vector<Message> appends;
  c.tick(1);
  c.deliver_all([&appends](const Message& m) {
    if (m.to == 3 && m.type == MessageType::kAppend) appends.push_back(m);
    return false;
  });
  EXPECT_GT(probe_hits("raft.next_inside_an_entry"), inside_before);
  bool sent_from_start = false;
  for (const Message& m : appends) {
    EXPECT_TRUE(c.node(1).log.is_entry_end(m.log_index)) << to_string(m);
    if (m.log_index == 1 && !m.entries.empty()) sent_from_start = m.entries.front() == span(1, "ten", 10);
  }
  EXPECT_TRUE(sent_from_start) << "the append after the hint starts at the entry holding index 6";
  EXPECT_EQ(c.node(3).log.entries(), c.node(1).log.entries());
  EXPECT_EQ(c.node(3).log.starts(), (std::vector<Index>{1, 2, 12, 13}));
}

// A divergent follower: a leader of a later term wrote entries with other spans over the same indexes. The
// follower keeps the common prefix and cuts at the first entry whose term differs, an entry start on both sides.
TEST(RaftSpans, ADivergentFollowerWithOtherSpansIsTruncatedToTheLeadersLog) {
  RaftTestCluster c(config_of(3, /*check_quorum=*/false));
  ASSERT_TRUE(c.elect(1));
  c.propose(1, "common", 4);  // [2, 5], committed everywhere
  c.deliver_all();
  c.tick(1);
  c.deliver_all();
  ASSERT_EQ(c.raft(3).commit_index(), 5u);
  c.isolate(1);
  c.propose(1, "lost-a", 3);  // [6, 8], term 1: never leave node 1
  c.propose(1, "lost-b", 2);  // [9, 10]
  c.propose(1, "lost-c", 1);  // [11]
  ASSERT_TRUE(c.elect(2) || c.elect(2));
  c.propose(2, "kept-a", 7);  // the no-op at 6, then [7, 13], term 2
  c.propose(2, "kept-b", 1);  // [14]
  c.deliver_all();
  ASSERT_EQ(c.raft(2).commit_index(), 14u);
  const uint64_t truncated_before = probe_hits("raft.follower_truncated");
  c.heal();
  for (int i = 0; i < 3; ++i) {
    c.tick(2);
    c.deliver_all();
  }
  EXPECT_EQ(c.raft(1).role(), Role::kFollower);
  EXPECT_GT(probe_hits("raft.follower_truncated"), truncated_before);
  EXPECT_EQ(c.node(1).log.entries(), c.node(2).log.entries());
  EXPECT_EQ(c.node(1).log.starts(), (std::vector<Index>{1, 2, 6, 7, 14}));
  EXPECT_EQ(c.raft(1).commit_index(), 14u);
  for (const Entry& e : c.node(1).log.entries()) EXPECT_EQ(e.payload.rfind("lost", 0), std::string::npos);
}

// The follower's conflict hint jumps whole entries: a follower far behind with long entries of an old term answers
// with the last index whose term is at most the leader's term at prev, found in one step per entry.
TEST(RaftSpans, TheConflictHintSkipsWholeEntriesOfLaterTerms) {
  RaftTestCluster c(config_of(3));
  for (NodeId id : c.ids()) c.crash(id, false);
  // Term 1: node 1 wrote [2, 1001] for itself. Term 2: node 3 led (with node 2's vote) and wrote 10000 indexes for
  // itself. Term 3: node 1 led (with node 2's vote), copied [2, 1001] to node 2, its no-op [1002] reached nobody.
  seed(c, 1, {span(1, "", 1), span(1, "a", 1000), span(3, "", 1)}, 3);
  seed(c, 2, {span(1, "", 1), span(1, "a", 1000)}, 3);
  seed(c, 3, {span(1, "", 1), span(2, "x", 5000), span(2, "y", 5000)}, 2);
  for (NodeId id : c.ids()) c.restart(id);
  std::vector<Message> rejections;
  auto watch = [&rejections](const Message& m) {
    if (m.type == MessageType::kAppendResponse && m.reject && m.from == 3) rejections.push_back(m);
    return false;
  };
  c.raft(1).campaign();  // term 4
  c.process(1);
  c.deliver_all(watch);
  ASSERT_EQ(c.raft(1).role(), Role::kLeader);
  for (int i = 0; i < 4; ++i) {
    c.tick(1);
    c.deliver_all(watch);
  }
  // Node 3 refuses prev 1002 (term 3) with its index 1002 (term 2); the leader skips its own term-3 entry and asks
  // at 1001 (term 1); node 3 jumps its 5000-index entry of term 2 at once and answers with index 1.
  std::vector<std::pair<Index, Term>> hints;
  for (const Message& m : rejections) {
    const std::pair<Index, Term> hint{m.hint_index, m.hint_term};
    if (hints.empty() || hints.back() != hint) hints.push_back(hint);
  }
  EXPECT_EQ(hints, (std::vector<std::pair<Index, Term>>{{1002, 2}, {1, 1}}));
  EXPECT_EQ(c.node(3).log.entries(), c.node(1).log.entries());
  EXPECT_EQ(c.raft(3).commit_index(), c.node(1).log.last_index());
}

}  // namespace
}  // namespace sluice::raft::testing
