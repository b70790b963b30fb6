// A consumer group: `members` classic group members, each with its own client, join, read their assigned
// partitions from the committed offsets (the earliest when none), commit what they read every commit interval, and
// rejoin when a heartbeat or commit learns of a rebalance. Joins, commits and committed-offset fetches go into the
// history; so do the fetches, as any consumer's.
#include <fmt/format.h>

#include <set>

#include "core/base/assert.h"
#include "core/protocol/error_codes.h"
#include "sim/workload/workload.h"
#include "sim/workload/workload_internal.h"

namespace sluice::sim {
namespace {

using namespace std::chrono_literals;

constexpr Duration kJoinDeadline = 30s;
constexpr Duration kErrorBackoff = 300ms;

struct MemberState {
  int32_t generation = -1;
  std::vector<client::TopicPartitionId> assignment;
  bool member = false;  // joined, and no rebalance learned of since
  bool committed_after_heal = false;
};

class GroupWorkload final : public Workload {
 public:
  GroupWorkload(const WorkloadSpec& spec, WorkloadContext& ctx)
      : Workload(spec.name, ctx), spec_(spec.group), members_(static_cast<size_t>(spec.group.members)) {
    SLUICE_ASSERT(spec_.members >= 1);
    for (size_t i = 0; i < members_.size(); ++i) processes_.push_back(name_ + '/' + std::to_string(i));
    for (const std::string& topic : spec_.topics) {
      for (int32_t p = 0; p < partition_count(ctx_, topic); ++p) all_partitions_.push_back({topic, p});
    }
  }

  void run(Env env) override {
    std::vector<FiberRef> fibers;
    for (size_t i = 0; i < members_.size(); ++i) {
      fibers.push_back(env.scheduler.spawn(fmt::format("{}.m{}", name_, i), [this, env, i] { member(env, i); }));
    }
    for (const FiberRef& f : fibers) env.scheduler.join(f);
  }

  bool converged() const override {
    std::set<client::TopicPartitionId> covered;
    const int32_t generation = members_.front().generation;
    for (const MemberState& m : members_) {
      if (!m.member || !m.committed_after_heal || m.generation != generation) return false;
      for (const auto& tp : m.assignment) {
        if (!covered.insert(tp).second) return false;  // two members own one partition
      }
    }
    return covered.size() == all_partitions_.size();
  }

  std::string progress() const override {
    std::string text;
    for (size_t i = 0; i < members_.size(); ++i) {
      const MemberState& m = members_[i];
      text += fmt::format("{}member {}: generation {}, {} partitions, {}, {}", i == 0 ? "" : "; ", i, m.generation,
                          m.assignment.size(), m.member ? "a member" : "rejoining",
                          m.committed_after_heal ? "committed since the heal" : "no commit since the heal");
    }
    return text;
  }

 private:
  // Every operation names its member: worked out once per member, not per fetch.
  const std::string& process(size_t i) const { return processes_[i]; }

  Operation group_op(size_t i, OpKind kind, const client::GroupMember& member) const {
    Operation op;
    op.process = process(i);
    op.kind = kind;
    OperationDetails& details = op.edit_details();
    details.group = spec_.group;
    details.member = member.member_id();
    details.generation = member.generation();
    return op;
  }

  void member(Env env, size_t i) {
    client::Client client(env, ctx_.client);
    client::GroupConfig config;
    config.group_id = spec_.group;
    config.topics = spec_.topics;
    config.session_timeout = spec_.session_timeout;
    config.heartbeat_interval = spec_.heartbeat_interval;
    config.rebalance_timeout = spec_.rebalance_timeout;
    client::GroupMember member(client, config);
    while (!ctx_.stopping) {
      if (!join(env, i, member)) {
        env.scheduler.sleep_for(kErrorBackoff);
        continue;
      }
      std::map<client::TopicPartitionId, int64_t> positions;
      if (!fetch_committed(env, i, client, member, positions)) continue;
      consume_generation(env, i, client, member, positions);
    }
    if (!member.member_id().empty()) member.leave().ignore();
  }

  bool join(Env env, size_t i, client::GroupMember& member) {
    const uint64_t id = ctx_.history.invoke(group_op(i, OpKind::kJoin, member), env.clock.now());
    const Status joined = member.join(env.clock.now() + kJoinDeadline);
    Operation& op = ctx_.history.op(id);
    settle_from_status(op, joined);
    OperationDetails& details = op.edit_details();
    details.member = member.member_id();
    details.generation = member.generation();
    for (const auto& tp : member.assignment()) details.offsets[tp] = -1;
    ctx_.history.complete(id, env.clock.now());
    if (!joined.ok()) return false;
    MemberState& state = members_[i];
    state.generation = member.generation();
    state.assignment = member.assignment();
    state.member = true;
    state.committed_after_heal = false;
    return true;
  }

  bool fetch_committed(Env env, size_t i, client::Client& client, client::GroupMember& member,
                       std::map<client::TopicPartitionId, int64_t>& positions) {
    Result<std::map<client::TopicPartitionId, int64_t>> committed = fetch_committed_only(env, i, member);
    if (!committed.ok()) {
      env.scheduler.sleep_for(kErrorBackoff);
      return false;
    }
    for (const auto& [tp, offset] : *committed) {
      if (offset >= 0) {
        positions[tp] = offset;
        continue;
      }
      Result<client::ListedOffset> earliest = client.list_offset(tp, client::kEarliestTimestamp);
      if (!earliest.ok()) return false;
      positions[tp] = earliest->offset;
    }
    return true;
  }

  Result<std::map<client::TopicPartitionId, int64_t>> fetch_committed_only(Env env, size_t i,
                                                                         client::GroupMember& member) {
    const uint64_t id = ctx_.history.invoke(group_op(i, OpKind::kCommitted, member), env.clock.now());
    Result<std::map<client::TopicPartitionId, int64_t>> committed = member.committed(member.assignment());
    Operation& op = ctx_.history.op(id);
    settle_from_status(op, committed.status());
    if (committed.ok()) op.edit_details().offsets = *committed;
    ctx_.history.complete(id, env.clock.now());
    return committed;
  }

  void consume_generation(Env env, size_t i, client::Client& client, client::GroupMember& member,
                          std::map<client::TopicPartitionId, int64_t>& positions) {
    Instant next_commit = env.clock.now() + spec_.commit_interval;
    while (!ctx_.stopping && !member.needs_rejoin()) {
      for (auto& [tp, position] : positions) fetch(env, i, client, tp, position);
      if (positions.empty()) env.scheduler.sleep_for(100ms);
      if (env.clock.now() >= next_commit) {
        commit(env, i, member, positions);
        next_commit = env.clock.now() + jittered(spec_.commit_interval, env.random);
        // Now and then read the commits back, as a lag monitor does: the committed-offsets checker judges these.
        if (env.random.chance(0.5)) {
          fetch_committed_only(env, i, member).status().ignore();
        }
      }
    }
    if (member.needs_rejoin()) members_[i].member = false;
    if (ctx_.stopping && !member.needs_rejoin()) commit(env, i, member, positions);
  }

  void fetch(Env env, size_t i, client::Client& client, const client::TopicPartitionId& tp, int64_t& position) {
    Operation& op = ctx_.history.invoke_in_place(env.clock.now());
    op.process = process(i);
    op.kind = OpKind::kFetch;
    op.tp = tp;
    op.offset = position;
    const uint64_t id = op.id;
    client::FetchOptions options;
    options.max_wait = 50ms;
    Result<client::FetchView> fetched = client.fetch_view(tp, position, options);
    Operation& o = ctx_.history.op(id);
    settle_fetch(o, fetched);
    if (fetched.ok()) {
      if (!o.records.empty()) position = o.records.back().offset + 1;
      position = std::max(position, fetched->next_offset);  // past empty and control batches
      if (fetched->error_code == wire_code(ErrorCode::kOffsetOutOfRange) && fetched->log_start_offset > position) {
        position = fetched->log_start_offset;
      }
    }
    ctx_.history.complete(id, env.clock.now());
  }

  void commit(Env env, size_t i, client::GroupMember& member,
              const std::map<client::TopicPartitionId, int64_t>& positions) {
    if (positions.empty()) return;
    Operation op = group_op(i, OpKind::kCommit, member);
    op.edit_details().offsets = positions;
    const uint64_t id = ctx_.history.invoke(std::move(op), env.clock.now());
    const Status committed = member.commit(positions);
    Operation& o = ctx_.history.op(id);
    settle_from_status(o, committed);
    // Kafka's coordinator answers these when its append's fate is unknown (the leader moved or the quorum wait
    // timed out; GroupMetadataManager's error mapping): the offsets may still be committed.
    const int16_t error = committed.protocol_error();
    if (error == wire_code(ErrorCode::kNotCoordinator) || error == wire_code(ErrorCode::kCoordinatorNotAvailable) ||
        error == wire_code(ErrorCode::kRequestTimedOut)) {
      o.outcome = Outcome::kUnknown;
    }
    ctx_.history.complete(id, env.clock.now());
    if (committed.ok() && after_heal(o.invoked_at)) members_[i].committed_after_heal = true;
    members_[i].member = !member.needs_rejoin();
  }

  GroupSpec spec_;
  std::vector<MemberState> members_;
  std::vector<std::string> processes_;  // member i's operations' process: "<name>/<i>"
  std::vector<client::TopicPartitionId> all_partitions_;
};

}  // namespace

std::unique_ptr<Workload> make_group_workload(const WorkloadSpec& spec, WorkloadContext& ctx) {
  return std::make_unique<GroupWorkload>(spec, ctx);
}

}  // namespace sluice::sim
