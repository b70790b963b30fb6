// Replicated partitions (issue 22, step 2-3): three simulated nodes, each a log manager in cluster mode and a
// PartitionManager whose partition is a replica in one raft group driven by the node's RaftHost, messages carried
// as world events. The partition log is the raft log (partition_raft_log.h): the leader's produce is a raft
// proposal, acks=all waits for the quorum's commit, the high watermark follows the commit index, followers refuse
// produce and reads with NOT_LEADER_OR_FOLLOWER, and a deposed leader's uncommitted suffix is cut.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/cluster/partition.h"
#include "core/cluster/partition_manager.h"
#include "core/protocol/error_codes.h"
#include "sim/world/sim_cluster.h"
#include "tests/core/storage/log_test_util.h"

namespace sluice::cluster {
namespace {

using namespace std::chrono_literals;
using namespace storage::log_testing;
using storage::TopicPartition;

const TopicPartition kTp{"orders", 0};
constexpr raft::GroupId kGroup = 1;

ErrorCode error_of(const Status& status) { return status.ok() ? ErrorCode::kNone : to_error_code(status); }

class ReplicaWorld {
 public:
  explicit ReplicaWorld(std::map<std::string, std::string> topic = {}, size_t nodes = 3)
      : cluster_(11, LogLevel::kOff), topic_(std::move(topic)) {
    for (size_t i = 1; i <= nodes; ++i) replicas_.push_back(static_cast<int32_t>(i));
    for (size_t i = 0; i < nodes; ++i) {
      cluster_.add_node();
      nodes_.push_back(std::make_unique<NodeState>());
    }
    options_.tick = 50ms;
    for (size_t i = 1; i <= nodes; ++i) boot(static_cast<int32_t>(i));
  }
  ~ReplicaWorld() {
    for (size_t i = 0; i < nodes_.size(); ++i) {
      if (cluster_.node(i).up()) cluster_.node(i).crash();
    }
  }

  void boot(int32_t id) {
    cluster_.node(static_cast<size_t>(id - 1)).boot([this, id](Env env) { main(env, id); });
  }
  void crash(int32_t id) { cluster_.node(static_cast<size_t>(id - 1)).crash(); }
  void cut(int32_t a, int32_t b) { cut_.insert({std::min(a, b), std::max(a, b)}); }
  void isolate(int32_t id) {
    for (int32_t other : replicas_) {
      if (other != id) cut(id, other);
    }
  }
  // Drops what `from` sends to `to`, not the other way.
  void cut_one_way(int32_t from, int32_t to) { one_way_.insert({from, to}); }
  void heal() {
    cut_.clear();
    one_way_.clear();
  }

  SimWorld& world() { return cluster_.world(); }
  SimNode& node(int32_t id) { return cluster_.node(static_cast<size_t>(id - 1)); }
  Partition* partition(int32_t id) { return nodes_[static_cast<size_t>(id - 1)]->partition.get(); }
  bool run_until(const std::function<bool()>& done, Duration limit = 30s) {
    return world().run_until(done, world().now() + limit);
  }
  // The leader every running replica agrees on, or -1.
  int32_t agreed_leader() {
    int32_t leader = -1;
    for (int32_t id : replicas_) {
      Partition* p = partition(id);
      if (p == nullptr) continue;
      if (p->leader() < 0 || (leader >= 0 && p->leader() != leader)) return -1;
      leader = p->leader();
    }
    return leader >= 0 && partition(leader) != nullptr && partition(leader)->is_leader() ? leader : -1;
  }
  int32_t elect() {
    EXPECT_TRUE(run_until([&] { return agreed_leader() >= 0; }));
    return agreed_leader();
  }

  // Runs `body` on a fiber of node `id` and the world until it returns.
  void on(int32_t id, std::function<void(Env, Partition&)> body, Duration limit = 30s) {
    bool done = false;
    SimNode& n = node(id);
    Env env = n.env();
    std::shared_ptr<Partition> held = nodes_[static_cast<size_t>(id - 1)]->partition;
    ASSERT_NE(held, nullptr);
    n.scheduler().spawn("test", [env, held, body, &done] {
      body(env, *held);
      done = true;
    });
    ASSERT_TRUE(run_until([&] { return done; }, limit));
  }

  // Produces `records` records at `acks` on node `id` and waits for the acknowledgement when the answer does.
  Status produce(int32_t id, int records, Acks acks, int64_t* base_offset = nullptr, Duration timeout = 5s) {
    Status outcome;
    on(id, [&](Env env, Partition& p) {
      std::vector<storage::RecordError> errors;
      Result<Appended> appended =
          p.append_records(batch_of(records, to_unix_ms(env.clock.wall_now())), acks, &errors);
      if (!appended.ok()) {
        outcome = appended.status();
        return;
      }
      if (base_offset != nullptr) *base_offset = appended->result.base_offset;
      if (appended->awaits_acknowledgement) {
        outcome = p.wait_acknowledged(appended->end_offset(), acks, env.clock.now() + timeout,
                                      appended->leader_epoch);
      }
    });
    return outcome;
  }

  // Every batch of node `id`'s log, as stored (offsets, epochs and bytes).
  Bytes log_bytes(int32_t id) {
    Bytes bytes;
    on(id, [&](Env, Partition& p) {
      storage::PartitionLog& log = *nodes_[static_cast<size_t>(id - 1)]->log;
      int64_t offset = log.log_start_offset();
      while (offset < log.log_end_offset()) {
        Result<storage::ReadResult> read = log.read(offset, 1 << 20, log.log_end_offset());
        ASSERT_TRUE(read.ok()) << read.status().to_string();
        const std::vector<storage::BatchHeader> headers = headers_of(read->records);
        ASSERT_FALSE(headers.empty());
        bytes.insert(bytes.end(), read->records.begin(), read->records.end());
        offset = headers.back().last_offset() + 1;
      }
    });
    return bytes;
  }

  raft::HostOptions options_;

 private:
  struct NodeState {
    std::shared_ptr<Partition> partition;  // while the node runs
    std::shared_ptr<storage::PartitionLog> log;
    raft::RaftHost* host = nullptr;
  };

  void main(Env env, int32_t id) {
    NodeState& state = *nodes_[static_cast<size_t>(id - 1)];
    storage::BrokerStorageConfig config;
    config.replicated_logs = true;
    std::unique_ptr<storage::LogManager> logs = open_log_manager(env, config);
    ASSERT_NE(logs, nullptr);
    PartitionManager partitions(env, id, *logs, MutationSet{});
    if (partitions.find(kTp) == nullptr) {
      ASSERT_TRUE(partitions.create(kTp, topic_config_with(topic_), "").ok());
    }
    raft::RaftHost host(
        env, static_cast<raft::NodeId>(id), options_,
        [this, id](raft::NodeId to, std::vector<raft::Envelope> batch) {
          deliver(id, static_cast<int32_t>(to), std::move(batch));
        },
        [](raft::GroupId, raft::Index, const raft::Entry&) {});
    Result<std::shared_ptr<Partition>> replica = partitions.replicate(kTp, host, kGroup, replicas_);
    ASSERT_TRUE(replica.ok()) << replica.status().to_string();
    struct Forget {
      NodeState& state;
      ~Forget() {
        state.partition = nullptr;
        state.log = nullptr;
        state.host = nullptr;
      }
    } forget{state};
    state.partition = *replica;
    state.log = logs->find_shared(kTp);
    state.host = &host;
    host.start();
    Event forever(env.scheduler);
    forever.wait();
  }

  void deliver(int32_t from, int32_t to, std::vector<raft::Envelope> batch) {
    if (cut_.contains({std::min(from, to), std::max(from, to)}) || one_way_.contains({from, to})) return;
    auto shared = std::make_shared<std::vector<raft::Envelope>>(std::move(batch));
    world().schedule_after(2ms, static_cast<sluice::NodeId>(to), EventKind::kNetwork, [this, from, to, shared] {
      if (raft::RaftHost* target = nodes_[static_cast<size_t>(to - 1)]->host) {
        target->receive(static_cast<raft::NodeId>(from), *shared);
      }
    });
  }

  SimCluster cluster_;
  std::map<std::string, std::string> topic_;
  std::vector<int32_t> replicas_;
  std::vector<std::unique_ptr<NodeState>> nodes_;
  std::set<std::pair<int32_t, int32_t>> cut_;
  std::set<std::pair<int32_t, int32_t>> one_way_;
};

TEST(ReplicatedPartition, OneReplicaLeadsInItsTermAndTheFollowersRefuseProduceNamingIt) {
  ReplicaWorld w;
  const int32_t leader = w.elect();
  ASSERT_GE(leader, 1);
  EXPECT_GE(w.partition(leader)->leader_epoch(), 1) << "the epoch is the raft term";
  for (int32_t id : {1, 2, 3}) {
    EXPECT_EQ(w.partition(id)->leader(), leader);
    EXPECT_EQ(w.partition(id)->replicas(), (std::vector<int32_t>{1, 2, 3}));
    if (id == leader) continue;
    EXPECT_FALSE(w.partition(id)->is_leader());
    EXPECT_EQ(error_of(w.produce(id, 1, Acks::kAll)), ErrorCode::kNotLeaderOrFollower);
    EXPECT_EQ(error_of(w.produce(id, 1, Acks::kNone)), ErrorCode::kNotLeaderOrFollower);
  }
}

TEST(ReplicatedPartition, AcksAllIsAnsweredAfterTheQuorumCommitAndEveryReplicaHoldsTheSameBytes) {
  ReplicaWorld w;
  const int32_t leader = w.elect();
  int64_t base = -1;
  ASSERT_TRUE(w.produce(leader, 3, Acks::kAll, &base).ok());
  int64_t second = -1;
  ASSERT_TRUE(w.produce(leader, 2, Acks::kAll, &second).ok());
  EXPECT_EQ(second, base + 3) << "offsets follow the log end";
  const int64_t end = w.partition(leader)->log_end_offset();
  EXPECT_EQ(w.partition(leader)->high_watermark(), end) << "acknowledged means committed";
  ASSERT_TRUE(w.run_until([&] {
    for (int32_t id : {1, 2, 3}) {
      if (w.partition(id)->high_watermark() != end) return false;
    }
    return true;
  })) << "followers learn the commit index with the next append or heartbeat";
  const Bytes expected = w.log_bytes(leader);
  for (int32_t id : {1, 2, 3}) EXPECT_EQ(w.log_bytes(id), expected) << "node " << id;
  EXPECT_EQ(w.partition(leader)->in_sync_replicas(), (std::vector<int32_t>{1, 2, 3}));
}

TEST(ReplicatedPartition, AnIsolatedLeaderAppendsAcksOneButNeitherCommitsNorAcknowledgesAcksAll) {
  ReplicaWorld w;
  const int32_t leader = w.elect();
  ASSERT_TRUE(w.produce(leader, 1, Acks::kAll).ok());
  const int64_t committed = w.partition(leader)->high_watermark();
  w.isolate(leader);
  EXPECT_TRUE(w.produce(leader, 2, Acks::kLeader).ok()) << "acks=1 is the leader's append";
  const Status all = w.produce(leader, 1, Acks::kAll, nullptr, 1s);
  EXPECT_TRUE(error_of(all) == ErrorCode::kRequestTimedOut || error_of(all) == ErrorCode::kNotLeaderOrFollower)
      << all.to_string();
  EXPECT_EQ(w.partition(leader)->high_watermark(), committed) << "nothing past the quorum's commit is readable";
  EXPECT_GT(w.partition(leader)->log_end_offset(), committed);
}

TEST(ReplicatedPartition, ANewLeaderKeepsEveryAcknowledgedWriteAndTheDeposedLeadersSuffixIsCut) {
  ReplicaWorld w;
  const int32_t first = w.elect();
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(w.produce(first, 2, Acks::kAll).ok());
  const Bytes acknowledged = w.log_bytes(first);
  const int64_t committed = w.partition(first)->high_watermark();
  w.isolate(first);
  ASSERT_TRUE(w.produce(first, 3, Acks::kLeader).ok()) << "appended on the isolated leader only";
  ASSERT_TRUE(w.run_until([&] {
    for (int32_t id : {1, 2, 3}) {
      if (id != first && w.partition(id)->is_leader()) return true;
    }
    return false;
  }));
  int32_t second = -1;
  for (int32_t id : {1, 2, 3}) {
    if (id != first && w.partition(id)->is_leader()) second = id;
  }
  EXPECT_GT(w.partition(second)->leader_epoch(), 1);
  ASSERT_TRUE(w.produce(second, 1, Acks::kAll).ok());
  w.heal();
  ASSERT_TRUE(w.run_until([&] {
    return w.partition(first)->leader() == second &&
           w.partition(first)->log_end_offset() == w.partition(second)->log_end_offset() &&
           w.partition(first)->high_watermark() == w.partition(second)->high_watermark();
  }));
  const Bytes after = w.log_bytes(first);
  EXPECT_EQ(after, w.log_bytes(second)) << "the deposed leader's acks=1 suffix was replaced by the new leader's log";
  ASSERT_GE(after.size(), acknowledged.size());
  EXPECT_TRUE(std::equal(acknowledged.begin(), acknowledged.end(), after.begin()))
      << "every acknowledged batch is still there, byte for byte";
  EXPECT_GT(w.partition(second)->high_watermark(), committed);
}

TEST(ReplicatedPartition, ARestartedReplicaRejoinsFromItsLogAndCatchesUp) {
  ReplicaWorld w;
  const int32_t leader = w.elect();
  const int32_t follower = leader == 1 ? 2 : 1;
  ASSERT_TRUE(w.produce(leader, 4, Acks::kAll).ok());
  w.crash(follower);
  ASSERT_TRUE(w.produce(leader, 4, Acks::kAll).ok()) << "two of three replicas are a quorum";
  w.boot(follower);
  ASSERT_TRUE(w.run_until([&] {
    Partition* p = w.partition(follower);
    return p != nullptr && p->log_end_offset() == w.partition(leader)->log_end_offset() &&
           p->high_watermark() == w.partition(leader)->high_watermark();
  }));
  EXPECT_EQ(w.log_bytes(follower), w.log_bytes(leader));
}

TEST(ReplicatedPartition, AcksAllIsRefusedBelowMinInsyncReplicasBeforeAppending) {
  ReplicaWorld w(std::map<std::string, std::string>{{"min.insync.replicas", "3"}});
  const int32_t leader = w.elect();
  // A new leader counts a follower in sync once it has acknowledged the committed prefix of its term.
  ASSERT_TRUE(w.run_until([&] { return w.partition(leader)->in_sync_replicas().size() == 3; }, 10s));
  ASSERT_TRUE(w.produce(leader, 1, Acks::kAll).ok()) << "all three in sync";
  const int32_t follower = leader == 1 ? 2 : 1;
  w.crash(follower);
  ASSERT_TRUE(w.run_until([&] { return w.partition(leader)->in_sync_replicas().size() == 2; }, 10s))
      << "a silent follower leaves the ISR";
  const int64_t end = w.partition(leader)->log_end_offset();
  EXPECT_EQ(error_of(w.produce(leader, 1, Acks::kAll)), ErrorCode::kNotEnoughReplicas);
  EXPECT_EQ(w.partition(leader)->log_end_offset(), end) << "refused before the append";
  EXPECT_TRUE(w.produce(leader, 1, Acks::kLeader).ok()) << "acks=1 is not checked";
}

// Kafka's acks=all holds min.insync.replicas copies when answered; a raft commit holds a majority's. With
// min.insync.replicas=3 on three replicas the answer waits for the third copy, and when that replica stops hearing
// the leader after the append, the answer is NOT_ENOUGH_REPLICAS_AFTER_APPEND with the records kept.
TEST(ReplicatedPartition, AcksAllWaitsForMinInsyncCopiesAndAnswersNotEnoughReplicasAfterAppend) {
  ReplicaWorld w(std::map<std::string, std::string>{{"min.insync.replicas", "3"}});
  const int32_t leader = w.elect();
  ASSERT_TRUE(w.run_until([&] { return w.partition(leader)->in_sync_replicas().size() == 3; }, 10s));
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(w.produce(leader, 1, Acks::kAll).ok()) << "healthy followers are waited for, not refused: " << i;
  }
  const int32_t cut_off = leader == 3 ? 2 : 3;
  w.cut_one_way(leader, cut_off);  // it hears nothing more, so it answers nothing more
  const int64_t end = w.partition(leader)->log_end_offset();
  int64_t base = -1;
  EXPECT_EQ(error_of(w.produce(leader, 1, Acks::kAll, &base)), ErrorCode::kNotEnoughReplicasAfterAppend)
      << "committed by two replicas; the third stopped answering before it had the records";
  EXPECT_EQ(base, end);
  EXPECT_GT(w.partition(leader)->log_end_offset(), end) << "the records stay";
  EXPECT_GE(w.partition(leader)->high_watermark(), end + 1) << "and are committed";
  w.heal();
  ASSERT_TRUE(w.run_until([&] { return w.partition(leader)->in_sync_replicas().size() == 3; }, 10s));
  EXPECT_TRUE(w.produce(leader, 1, Acks::kAll).ok()) << "all three in sync again";
}

TEST(ReplicatedPartition, AnIdempotentRetryOnANewLeaderIsAnsweredWithTheOriginalOffsets) {
  ReplicaWorld w;
  const int32_t first = w.elect();
  Bytes batch;
  int64_t original = -1;
  w.on(first, [&](Env env, Partition& p) {
    batch = idempotent_batch(/*producer_id=*/42, /*epoch=*/0, /*sequence=*/0, /*count=*/2);
    std::vector<storage::RecordError> errors;
    Result<Appended> appended = p.append_records(batch, Acks::kAll, &errors);
    ASSERT_TRUE(appended.ok()) << appended.status().to_string();
    original = appended->result.base_offset;
    ASSERT_TRUE(p.wait_acknowledged(appended->end_offset(), Acks::kAll, env.clock.now() + 5s,
                                    appended->leader_epoch)
                    .ok());
  });
  w.crash(first);
  ASSERT_TRUE(w.run_until([&] {
    for (int32_t id : {1, 2, 3}) {
      if (id != first && w.partition(id)->is_leader()) return true;
    }
    return false;
  }));
  int32_t second = -1;
  for (int32_t id : {1, 2, 3}) {
    if (id != first && w.partition(id)->is_leader()) second = id;
  }
  w.on(second, [&](Env env, Partition& p) {
    std::vector<storage::RecordError> errors;
    Result<Appended> retried = p.append_records(batch, Acks::kAll, &errors);
    ASSERT_TRUE(retried.ok()) << retried.status().to_string();
    EXPECT_TRUE(retried->duplicate) << "the new leader rebuilt the producer state from its log";
    EXPECT_EQ(retried->result.base_offset, original);
    if (retried->awaits_acknowledgement) {
      EXPECT_TRUE(p.wait_acknowledged(retried->end_offset(), Acks::kAll, env.clock.now() + 5s,
                                      retried->leader_epoch)
                      .ok());
    }
  });
}

// Seed 61 of cluster_crashes_partitions: the raft host's driver appends a proposal, finishes it (kAppended), and
// goes on stepping inbound messages in the same wake-up; one AppendEntries of a newer term whose previous entry the
// old leader holds both deposes it and cuts its uncommitted suffix, before the producing fiber resumes (and before
// the role change is even reported to the Partition). The produce must not answer offsets its log no longer holds
// (Partition asserted so, partition.cc): it answers NOT_LEADER_OR_FOLLOWER. Without the fix this aborts on that
// assertion.
TEST(ReplicatedPartition, AnAppendCutBeforeItsProducerResumesIsAnsweredNotLeader) {
  ReplicaWorld w;
  const int32_t first = w.elect();
  ASSERT_TRUE(w.produce(first, 2, Acks::kAll).ok());
  ASSERT_TRUE(w.run_until([&] {
    for (int32_t id : {1, 2, 3}) {
      if (w.partition(id)->log_end_offset() != w.partition(first)->log_end_offset()) return false;
    }
    return true;
  }));
  // The leader still hears the others but is not heard: they elect a new leader, whose first append to the old one
  // follows the last entry both hold, so that one message raises the term and cuts the old leader's suffix at once,
  // while the old leader's producers keep proposing.
  std::shared_ptr<Partition> held = w.partition(first)->shared_from_this();
  Env env = w.node(first).env();
  int running = 0;
  int answered_ok = 0;
  for (int f = 0; f < 16; ++f) {
    ++running;
    w.node(first).scheduler().spawn("producer", [&, held, env, f] {
      while (held->is_leader()) {
        std::vector<storage::RecordError> errors;
        Result<Appended> appended =
            held->append_records(batch_of(1, to_unix_ms(env.clock.wall_now())), Acks::kLeader, &errors);
        if (!appended.ok()) {
          EXPECT_EQ(error_of(appended.status()), ErrorCode::kNotLeaderOrFollower) << appended.status().to_string();
          break;
        }
        ++answered_ok;
        // An answered append is in this log when it is answered.
        EXPECT_LT(appended->result.last_offset, held->log_end_offset());
        if (f % 2 == 0) env.scheduler.sleep_for(std::chrono::microseconds(50 + 37 * f));
      }
      --running;
    });
  }
  for (int32_t id : {1, 2, 3}) {
    if (id != first) w.cut_one_way(first, id);
  }
  ASSERT_TRUE(w.run_until([&] { return running == 0; }, 20s));
  EXPECT_GT(answered_ok, 0);
  w.heal();
  int32_t second = -1;
  ASSERT_TRUE(w.run_until([&] {
    second = w.agreed_leader();
    return second >= 0 && second != first &&
           w.partition(first)->log_end_offset() == w.partition(second)->log_end_offset();
  }));
  EXPECT_EQ(w.log_bytes(first), w.log_bytes(second)) << "the deposed leader's suffix was replaced";
}
// ---- the log start (issue 22, step 6) ----

TEST(ReplicatedPartition, DeleteRecordsMovesEveryReplicasLogStartBeforeItIsAnswered) {
  ReplicaWorld w;
  const int32_t leader = w.elect();
  const int32_t follower = leader == 1 ? 2 : 1;
  ASSERT_TRUE(w.produce(leader, 6, Acks::kAll).ok());
  Result<int64_t> refused = int64_t{-1};
  w.on(follower, [&](Env env, Partition& p) { refused = p.delete_records(3, env.clock.now() + 1s); });
  EXPECT_EQ(error_of(refused.status()), ErrorCode::kNotLeaderOrFollower);
  Result<int64_t> too_far = int64_t{-1};
  w.on(leader, [&](Env env, Partition& p) { too_far = p.delete_records(p.high_watermark() + 1, env.clock.now() + 1s); });
  EXPECT_EQ(error_of(too_far.status()), ErrorCode::kOffsetOutOfRange);
  Result<int64_t> moved = int64_t{-1};
  w.on(leader, [&](Env env, Partition& p) { moved = p.delete_records(4, env.clock.now() + 5s); });
  ASSERT_TRUE(moved.ok()) << moved.status().to_string();
  EXPECT_EQ(*moved, 4);
  for (int32_t id : {1, 2, 3}) {
    EXPECT_EQ(w.partition(id)->log_start_offset(), 4) << "answered once every live replica moved: node " << id;
  }
  // Later writes still replicate, and the start stays where it is.
  ASSERT_TRUE(w.produce(leader, 2, Acks::kAll).ok());
  for (int32_t id : {1, 2, 3}) EXPECT_EQ(w.partition(id)->log_start_offset(), 4) << id;
}

TEST(ReplicatedPartition, AFollowerBehindTheLeadersLogStartRestartsThereAndCatchesUp) {
  ReplicaWorld w;
  const int32_t leader = w.elect();
  const int32_t offline = leader == 3 ? 2 : 3;
  ASSERT_TRUE(w.produce(leader, 3, Acks::kAll).ok());
  w.crash(offline);
  ASSERT_TRUE(w.produce(leader, 5, Acks::kAll).ok());
  const int64_t end = w.partition(leader)->high_watermark();
  Result<int64_t> moved = int64_t{-1};
  // The offline replica stops counting once the leader has not heard from it for an election timeout.
  w.on(leader, [&](Env env, Partition& p) { moved = p.delete_records(-1, env.clock.now() + 10s); });
  ASSERT_TRUE(moved.ok()) << moved.status().to_string();
  EXPECT_EQ(*moved, end);
  ASSERT_TRUE(w.produce(leader, 2, Acks::kAll).ok());
  w.boot(offline);
  ASSERT_TRUE(w.run_until([&] {
    Partition* p = w.partition(offline);
    return p != nullptr && p->log_end_offset() == w.partition(leader)->log_end_offset() &&
           p->high_watermark() == w.partition(leader)->high_watermark();
  }));
  EXPECT_GE(w.partition(offline)->log_start_offset(), end) << "it could not keep what the leader no longer holds";
  EXPECT_EQ(w.partition(offline)->log_start_offset(), w.partition(leader)->log_start_offset());
  EXPECT_EQ(w.log_bytes(offline), w.log_bytes(leader));
  // It can lead from there: the old leader's records above the start are all on it.
  w.crash(leader);
  const int32_t next = w.elect();
  ASSERT_NE(next, leader);
  ASSERT_TRUE(w.produce(next, 1, Acks::kAll).ok());
}

}  // namespace
}  // namespace sluice::cluster
