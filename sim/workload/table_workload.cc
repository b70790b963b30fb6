// A state reader: every cold_start_every it starts from nothing, as a service rebuilding a table from a compacted
// topic would, reads every partition from the earliest offset up to the high watermark it found when it started,
// and records the table it built (latest value per key; a tombstone deletes the key). The compaction checker
// compares each table with what was acknowledged.
#include <fmt/format.h>

#include "core/base/assert.h"
#include "core/protocol/error_codes.h"
#include "sim/workload/workload.h"
#include "sim/workload/workload_internal.h"

namespace sluice::sim {
namespace {

using namespace std::chrono_literals;

constexpr Duration kErrorBackoff = 300ms;
constexpr Duration kColdStartDeadline = 20s;

class TableWorkload final : public Workload {
 public:
  TableWorkload(const WorkloadSpec& spec, WorkloadContext& ctx) : Workload(spec.name, ctx), spec_(spec.table) {}

  void run(Env env) override {
    while (!ctx_.stopping) {
      const Instant started = env.clock.now();
      cold_start(env);
      const Instant next = started + spec_.cold_start_every;
      while (!ctx_.stopping && env.clock.now() < next) env.scheduler.sleep_for(100ms);
    }
  }

  bool converged() const override { return rebuilt_after_heal_; }

  std::string progress() const override {
    return fmt::format("{} tables rebuilt, {} since the heal", tables_, rebuilt_after_heal_ ? "some" : "none");
  }

 private:
  // One reader's life: a fresh client, every partition read to its end, the table recorded.
  void cold_start(Env env) {
    client::Client client(env, ctx_.client);
    const Instant started = env.clock.now();
    const Instant deadline = started + kColdStartDeadline;
    Operation table_op;
    table_op.process = name_;
    table_op.kind = OpKind::kTable;
    table_op.tp = client::TopicPartitionId{spec_.topic, -1};
    const uint64_t id = ctx_.history.invoke(std::move(table_op), started);
    std::map<std::string, uint64_t> table;
    bool complete = true;
    for (int32_t p = 0; p < partition_count(ctx_, spec_.topic) && complete; ++p) {
      complete = read_partition(env, client, {spec_.topic, p}, deadline, table);
    }
    Operation& op = ctx_.history.op(id);
    op.outcome = complete ? Outcome::kOk : Outcome::kFailed;
    if (complete) op.edit_details().table = std::move(table);
    ctx_.history.complete(id, env.clock.now());
    if (complete) {
      ++tables_;
      if (after_heal(started)) rebuilt_after_heal_ = true;
    }
  }

  bool read_partition(Env env, client::Client& client, const client::TopicPartitionId& tp, Instant deadline,
                      std::map<std::string, uint64_t>& table) {
    Result<client::ListedOffset> earliest = client.list_offset(tp, client::kEarliestTimestamp);
    Result<client::ListedOffset> end = client.list_offset(tp, client::kLatestTimestamp);
    if (!earliest.ok() || !end.ok()) return false;
    int64_t position = earliest->offset;
    while (position < end->offset) {
      if (ctx_.stopping || env.clock.now() > deadline) return false;
      Operation op;
      op.process = name_;
      op.kind = OpKind::kFetch;
      op.tp = tp;
      op.offset = position;
      const uint64_t id = ctx_.history.invoke(std::move(op), env.clock.now());
      Result<client::FetchView> fetched = client.fetch_view(tp, position, client::FetchOptions{});
      Operation& o = ctx_.history.op(id);
      settle_fetch(o, fetched);
      const bool ok = fetched.ok() && fetched->error_code == 0;
      ctx_.history.complete(id, env.clock.now());
      if (!ok) {
        if (fetched.ok() && fetched->error_code == wire_code(ErrorCode::kOffsetOutOfRange)) return false;
        env.scheduler.sleep_for(kErrorBackoff);
        continue;
      }
      for (const RecordView& r : o.records) {
        position = r.offset + 1;
        if (!r.key) continue;
        if (r.tombstone) {
          table.erase(*r.key);
        } else {
          table[*r.key] = r.value_digest;
        }
      }
      position = std::max(position, fetched->next_offset);  // past empty and control batches
      if (o.records.empty() && fetched->next_offset < 0 && fetched->high_watermark >= end->offset) {
        break;  // compacted away up to the end
      }
    }
    return true;
  }

  TableSpec spec_;
  uint64_t tables_ = 0;
  bool rebuilt_after_heal_ = false;
};

}  // namespace

std::unique_ptr<Workload> make_table_workload(const WorkloadSpec& spec, WorkloadContext& ctx) {
  return std::make_unique<TableWorkload>(spec, ctx);
}

}  // namespace sluice::sim
