// A consumer: one fiber per partition reads from the earliest offset onwards, long-polling, and records every fetch
// (what it asked for, what came back, the high watermark and log start the broker reported). An offset out of range
// (retention or DeleteRecords moved the log start past it) restarts it from the earliest offset, as
// auto.offset.reset=earliest does.
#include <fmt/format.h>

#include "core/base/assert.h"
#include "core/env/sync.h"
#include "core/protocol/error_codes.h"
#include "sim/workload/workload.h"
#include "sim/workload/workload_internal.h"

namespace sluice::sim {
namespace {

using namespace std::chrono_literals;

// Between attempts after an error (broker down, topic gone).
constexpr Duration kErrorBackoff = 200ms;

class ConsumerWorkload final : public Workload {
 public:
  ConsumerWorkload(const WorkloadSpec& spec, WorkloadContext& ctx) : Workload(spec.name, ctx), spec_(spec.consumer) {}

  // A client per partition: one connection answers in order, so long polls of several partitions on one would
  // wait for each other.
  void run(Env env) override {
    const int32_t partitions = partition_count(ctx_, spec_.topic);
    caught_up_.assign(static_cast<size_t>(partitions), false);
    std::vector<FiberRef> fibers;
    for (int32_t p = 0; p < partitions; ++p) {
      fibers.push_back(env.scheduler.spawn(fmt::format("{}.p{}", name_, p), [this, env, p] {
        client::Client client(env, ctx_.client);
        consume(env, client, p);
      }));
    }
    for (const FiberRef& f : fibers) env.scheduler.join(f);
  }

  bool converged() const override {
    for (bool c : caught_up_) {
      if (!c) return false;
    }
    return !caught_up_.empty();
  }

  std::string progress() const override {
    size_t caught = 0;
    for (bool c : caught_up_) caught += c ? 1 : 0;
    return fmt::format("{} of {} partitions read to their high watermark since the heal, {} records read", caught,
                       caught_up_.size(), records_read_);
  }

 private:
  void consume(Env env, client::Client& client, int32_t partition) {
    const client::TopicPartitionId tp{spec_.topic, partition};
    std::optional<int64_t> position;
    while (!ctx_.stopping) {
      if (!position) {
        position = list_earliest(env, client, tp);
        if (!position) {
          env.scheduler.sleep_for(kErrorBackoff);
          continue;
        }
      }
      position = fetch_once(env, client, tp, *position);
    }
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

  // One fetch at `position`; the next position (nullopt: look the earliest offset up again).
  std::optional<int64_t> fetch_once(Env env, client::Client& client, const client::TopicPartitionId& tp,
                                    int64_t position) {
    Operation op;
    op.process = name_;
    op.kind = OpKind::kFetch;
    op.tp = tp;
    op.offset = position;
    const Instant invoked = env.clock.now();
    const uint64_t id = ctx_.history.invoke(std::move(op), invoked);
    client::FetchOptions options;
    options.max_wait = spec_.max_wait;
    options.max_bytes = spec_.max_bytes;
    Result<client::FetchView> fetched = client.fetch_view(tp, position, options);
    Operation& o = ctx_.history.op(id);
    settle_fetch(o, fetched);
    int64_t next = position;
    if (fetched.ok()) {
      records_read_ += o.records.size();
      if (!o.records.empty()) next = o.records.back().offset + 1;
      // Past empty batches too (a replica's cleaner leaves one where every record went), as Kafka's consumer does.
      next = std::max(next, fetched->next_offset);
      if (fetched->error_code == 0 && next >= fetched->high_watermark && after_heal(invoked)) {
        caught_up_[static_cast<size_t>(tp.partition)] = true;
      }
    }
    ctx_.history.complete(id, env.clock.now());
    if (!fetched.ok() || fetched->error_code != 0) {
      env.scheduler.sleep_for(kErrorBackoff);
      if (fetched.ok() && fetched->error_code == wire_code(ErrorCode::kOffsetOutOfRange)) return std::nullopt;
      if (fetched.ok() && fetched->error_code == wire_code(ErrorCode::kUnknownTopicOrPartition)) return std::nullopt;
    }
    return next;
  }

  ConsumerSpec spec_;
  std::vector<bool> caught_up_;
  uint64_t records_read_ = 0;
};

}  // namespace

std::unique_ptr<Workload> make_consumer_workload(const WorkloadSpec& spec, WorkloadContext& ctx) {
  return std::make_unique<ConsumerWorkload>(spec, ctx);
}

}  // namespace sluice::sim
