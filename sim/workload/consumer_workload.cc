// A consumer: reads every partition of its topic from the earliest offset onwards, long-polling, as Kafka's
// consumers do: one Fetch request per leader for all the partitions it leads, from a fetcher fiber per leader (a
// long poll held by one broker does not hold up another's partitions). It records every partition's fetch (what it
// asked for, what came back, the high watermark and log start the broker reported). An offset out of range
// (retention or DeleteRecords moved the log start past it) restarts that partition from the earliest offset, as
// auto.offset.reset=earliest does.
#include <fmt/format.h>

#include <map>
#include <optional>
#include <vector>

#include "core/base/assert.h"
#include "core/client/errors.h"
#include "core/env/sync.h"
#include "core/protocol/error_codes.h"
#include "sim/workload/workload.h"
#include "sim/workload/workload_internal.h"

namespace sluice::sim {
namespace {

using namespace std::chrono_literals;

// A partition's next fetch after an error (broker down, topic gone, a leader moved).
constexpr Duration kErrorBackoff = 200ms;
// How often the consumer looks for a leader without a fetcher, and a fetcher with nothing to fetch looks again.
constexpr Duration kRouteEvery = 50ms;

class ConsumerWorkload final : public Workload {
 public:
  ConsumerWorkload(const WorkloadSpec& spec, WorkloadContext& ctx) : Workload(spec.name, ctx), spec_(spec.consumer) {}

  // One client (a connection per broker, as a Kafka consumer has): each leader's connection carries that leader's
  // fetcher's long polls, so they hold up nothing of another broker's. This fiber gives each leader a fetcher.
  void run(Env env) override {
    const int32_t partitions = partition_count(ctx_, spec_.topic);
    partitions_.assign(static_cast<size_t>(partitions), PartitionState{});
    client::Client client(env, ctx_.client);
    std::map<int32_t, FiberRef> fetchers;
    Instant next_refresh{};
    while (!ctx_.stopping) {
      bool stale = false;
      for (int32_t p = 0; p < partitions && !ctx_.stopping; ++p) {
        if (partitions_[static_cast<size_t>(p)].fetcher != kNoFetcher) continue;
        Result<int32_t> leader = client.leader_for({spec_.topic, p});
        if (!leader.ok()) {
          stale = stale || client::invalidates_metadata(leader.status().protocol_error());
          continue;
        }
        if (fetchers.contains(*leader)) continue;
        const int32_t node = *leader;
        fetchers.emplace(node, env.scheduler.spawn(fmt::format("{}.n{}", name_, node),
                                                   [this, env, &client, node] { fetch_from(env, client, node); }));
      }
      // A partition without a leader (an election under way): the metadata is asked again, at most this often,
      // rather than when the cache ages out.
      if (stale && env.clock.now() >= next_refresh) {
        client.invalidate_metadata();
        next_refresh = env.clock.now() + kErrorBackoff;
      }
      env.scheduler.sleep_for(kRouteEvery);
    }
    for (const auto& [node, fiber] : fetchers) env.scheduler.join(fiber);
  }

  bool converged() const override {
    for (const PartitionState& state : partitions_) {
      if (!state.caught_up) return false;
    }
    return !partitions_.empty();
  }

  std::string progress() const override {
    size_t caught = 0;
    for (const PartitionState& state : partitions_) caught += state.caught_up ? 1 : 0;
    return fmt::format("{} of {} partitions read to their high watermark since the heal, {} records read", caught,
                       partitions_.size(), records_read_);
  }

 private:
  static constexpr int32_t kNoFetcher = -1;
  struct PartitionState {
    std::optional<int64_t> position;  // nullopt: look the earliest offset up first
    // The node whose fetcher holds the partition: it took it when the metadata named that node its leader, and
    // lets it go at an error (a leader that moved answers NOT_LEADER_OR_FOLLOWER), as a Kafka consumer moves a
    // partition between its brokers' fetch requests.
    int32_t fetcher = kNoFetcher;
    Instant not_before{};    // after an error
    bool caught_up = false;  // read to its high watermark since the heal
  };

  // The fetcher of `node`'s partitions: each round, one fetch for every partition it holds, after taking those the
  // metadata says `node` leads that no fetcher holds.
  void fetch_from(Env env, client::Client& client, int32_t node) {
    FetchRound round;
    std::vector<int32_t>& mine = round.mine;
    while (!ctx_.stopping) {
      mine.clear();
      for (int32_t p = 0; p < static_cast<int32_t>(partitions_.size()); ++p) {
        if (!ready(env, p, node)) continue;
        PartitionState& state = partitions_[static_cast<size_t>(p)];
        if (state.fetcher != node) {
          Result<int32_t> leader = client.leader_for({spec_.topic, p});  // may refresh the metadata, suspending
          if (!leader.ok() || *leader != node || !ready(env, p, node)) continue;
          state.fetcher = node;
        }
        mine.push_back(p);
      }
      if (mine.empty()) {
        env.scheduler.sleep_for(kRouteEvery);
        continue;
      }
      fetch_round(env, client, node, round);
    }
  }

  // Whether `node`'s fetcher may fetch partition `p` now.
  bool ready(Env env, int32_t p, int32_t node) const {
    const PartitionState& state = partitions_[static_cast<size_t>(p)];
    return (state.fetcher == node || state.fetcher == kNoFetcher) && env.clock.now() >= state.not_before;
  }

  // A fetcher's buffers, kept from round to round (tens of thousands of rounds of a few partitions each).
  struct FetchRound {
    std::vector<int32_t> mine;
    std::vector<client::FetchPosition> positions;
    std::vector<uint64_t> ops;
  };

  void fetch_round(Env env, client::Client& client, int32_t node, FetchRound& round) {
    std::vector<client::FetchPosition>& positions = round.positions;
    positions.clear();
    for (int32_t p : round.mine) {
      PartitionState& state = partitions_[static_cast<size_t>(p)];
      if (!state.position) state.position = list_earliest(env, client, {spec_.topic, p});
      if (!state.position) {
        back_off(state, env.clock.now());
        continue;
      }
      client::FetchPosition& position = positions.emplace_back();  // the topic copied once, into its place
      position.tp.topic = spec_.topic;
      position.tp.partition = p;
      position.offset = *state.position;
    }
    if (positions.empty() || ctx_.stopping) return;
    const Instant invoked = env.clock.now();
    std::vector<uint64_t>& ops = round.ops;
    ops.clear();
    for (const client::FetchPosition& position : positions) {
      Operation& op = ctx_.history.invoke_in_place(invoked);
      op.process = name_;
      op.kind = OpKind::kFetch;
      op.tp = position.tp;
      op.offset = position.offset;
      ops.push_back(op.id);
    }
    client::FetchOptions options;
    options.max_wait = spec_.max_wait;
    options.max_bytes = spec_.max_bytes;
    const client::FetchMany fetched = client.fetch_from(node, positions, options);
    const Instant completed = env.clock.now();
    for (size_t i = 0; i < positions.size(); ++i) {
      settle(positions[i], fetched.partitions[i], ops[i], invoked, completed);
    }
  }

  // Records partition `position.tp`'s part of a fetch and moves its position on.
  void settle(const client::FetchPosition& position, const Result<client::FetchView>& fetched, uint64_t id,
              Instant invoked, Instant completed) {
    PartitionState& state = partitions_[static_cast<size_t>(position.tp.partition)];
    Operation& o = ctx_.history.op(id);
    settle_fetch(o, fetched);
    int64_t next = position.offset;
    if (fetched.ok()) {
      records_read_ += o.records.size();
      if (!o.records.empty()) next = o.records.back().offset + 1;
      // Past empty batches too (a replica's cleaner leaves one where every record went), as Kafka's consumer does.
      next = std::max(next, fetched->next_offset);
      if (fetched->error_code == 0 && next >= fetched->high_watermark && after_heal(invoked)) state.caught_up = true;
    }
    ctx_.history.complete(id, completed);
    state.position = next;
    if (!fetched.ok() || fetched->error_code != 0) {
      back_off(state, completed);
      if (fetched.ok() && (fetched->error_code == wire_code(ErrorCode::kOffsetOutOfRange) ||
                           fetched->error_code == wire_code(ErrorCode::kUnknownTopicOrPartition))) {
        state.position.reset();
      }
    }
  }

  // After an error: the partition rests, then goes to whichever fetcher the metadata names then.
  static void back_off(PartitionState& state, Instant now) {
    state.not_before = now + kErrorBackoff;
    state.fetcher = kNoFetcher;
  }

  std::optional<int64_t> list_earliest(Env env, client::Client& client, const client::TopicPartitionId& tp) {
    Operation op;
    op.process = name_;
    op.kind = OpKind::kListOffsets;
    op.tp = tp;
    op.offset = client::kEarliestTimestamp;
    const uint64_t id = ctx_.history.invoke(std::move(op), env.clock.now());
    Result<client::ListedOffset> listed = client.list_offset(tp, client::kEarliestTimestamp);
    Operation& o = ctx_.history.op(id);
    settle_from_status(o, listed.status());
    if (listed.ok()) {
      o.result_offset = listed->offset;
      o.log_start_offset = listed->offset;
    }
    ctx_.history.complete(id, env.clock.now());
    if (!listed.ok()) return std::nullopt;
    return listed->offset;
  }

  ConsumerSpec spec_;
  std::vector<PartitionState> partitions_;
  uint64_t records_read_ = 0;
};

}  // namespace

std::unique_ptr<Workload> make_consumer_workload(const WorkloadSpec& spec, WorkloadContext& ctx) {
  return std::make_unique<ConsumerWorkload>(spec, ctx);
}

}  // namespace sluice::sim
