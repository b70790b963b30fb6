// A producer: batches of unique values at a rate, keyed (a key space, some tombstones) or round-robin, at one acks
// level, idempotent or not. Every batch is one produce operation in the history; its outcome is the client's.
#include <fmt/format.h>

#include "core/base/assert.h"
#include "core/env/sync.h"
#include "sim/workload/workload.h"
#include "sim/workload/workload_internal.h"

namespace sluice::sim {
namespace {

using namespace std::chrono_literals;

class ProducerWorkload final : public Workload {
 public:
  ProducerWorkload(const WorkloadSpec& spec, WorkloadContext& ctx) : Workload(spec.name, ctx), spec_(spec.producer) {
    SLUICE_ASSERT(spec_.rate > 0);
    SLUICE_ASSERT(spec_.batch_records >= 1);
  }

  void run(Env env) override {
    clock_ = &env.clock;
    client::Client client(env, ctx_.client);
    client::ProducerConfig config;
    config.acks = spec_.acks;
    config.idempotent = spec_.idempotent;
    config.compression = spec_.compression;
    config.max_in_flight = spec_.max_in_flight;
    config.delivery_timeout = spec_.delivery_timeout;
    config.via_node = spec_.via_node;
    client::Producer producer(client, config);
    const auto partitions = partition_count(ctx_, spec_.topic);
    const Duration gap = std::chrono::duration_cast<Duration>(std::chrono::duration<double>(1.0 / spec_.rate));
    int32_t next_partition = 0;
    while (!ctx_.stopping) {
      env.scheduler.sleep_for(jittered(gap, env.random));
      if (producer.in_flight() >= static_cast<size_t>(spec_.max_outstanding)) continue;
      send_one(env, producer, partitions, next_partition);
    }
    producer.flush();
  }

  bool converged() const override { return acked_after_heal_ > 0; }

  std::string progress() const override {
    return fmt::format("{} batches sent, {} acknowledged, {} since the heal", sent_, acked_, acked_after_heal_);
  }

 private:
  void send_one(Env env, client::Producer& producer, int32_t partitions, int32_t& next_partition) {
    Operation& op = ctx_.history.invoke_in_place(env.clock.now());  // nothing below suspends before the send
    op.process = name_;
    op.kind = OpKind::kProduce;
    op.acks = spec_.acks;
    op.idempotent = spec_.idempotent;
    std::vector<client::ProducerRecord> records;
    std::optional<std::string> first_key;
    const int64_t now_ms = to_unix_ms(env.clock.wall_now());
    for (int i = 0; i < spec_.batch_records; ++i) {
      client::ProducerRecord record;
      RecordView view;
      view.timestamp_ms = now_ms;
      view.batch_max_timestamp_ms = now_ms;
      if (spec_.keyed) {
        if (!first_key) first_key = "k" + std::to_string(env.random.uniform(static_cast<uint64_t>(spec_.key_space)));
        view.key = *first_key;  // one key per batch: a keyed batch goes to one partition
        record.key = Bytes(view.key->begin(), view.key->end());
      }
      if (spec_.keyed && spec_.tombstone_ratio > 0 && env.random.chance(spec_.tombstone_ratio)) {
        view.tombstone = true;
      } else {
        Bytes value = make_value(name_, ++values_, spec_.value_bytes, env.random);
        view.value_digest = digest_of(value);
        record.value = std::move(value);
      }
      record.timestamp_ms = now_ms;
      records.push_back(std::move(record));
      op.records.push_back(std::move(view));
    }
    const int32_t partition = first_key ? partition_of_key(*first_key, partitions) : next_partition++ % partitions;
    op.tp = client::TopicPartitionId{spec_.topic, partition};
    const uint64_t id = op.id;
    ++sent_;
    // Two words, which std::function holds without an allocation (an Env would not fit): a callback per batch.
    producer.send(op.tp, std::move(records),
                  [this, id](const client::ProduceResult& result) { settle(id, result, clock_->now()); });
  }

  void settle(uint64_t id, const client::ProduceResult& result, Instant now) {
    Operation& op = ctx_.history.op(id);
    op.outcome = result.outcome;
    op.error_code = result.error_code;
    if (!result.error.empty()) op.set_error(result.error);
    op.attempts = result.attempts;
    op.log_start_offset = result.log_start_offset;
    if (result.outcome == Outcome::kOk && result.base_offset >= 0) {
      for (size_t i = 0; i < op.records.size(); ++i) {
        op.records[i].offset = result.base_offset + static_cast<int64_t>(i);
      }
    }
    ctx_.history.complete(id, now);
    if (result.outcome == Outcome::kOk) {
      ++acked_;
      if (after_heal(op.invoked_at)) ++acked_after_heal_;
    }
  }

  ProducerSpec spec_;
  Clock* clock_ = nullptr;  // run()'s node's: callbacks all come before run() returns
  uint64_t values_ = 0;
  uint64_t sent_ = 0;
  uint64_t acked_ = 0;
  uint64_t acked_after_heal_ = 0;
};

}  // namespace

std::unique_ptr<Workload> make_producer_workload(const WorkloadSpec& spec, WorkloadContext& ctx) {
  return std::make_unique<ProducerWorkload>(spec, ctx);
}

}  // namespace sluice::sim
