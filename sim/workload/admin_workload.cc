// Admin actions at given times of the run: config changes, DeleteRecords, topic deletion and creation, each an
// operation in the history (the checkers use them: records below a DeleteRecords cut are legitimately gone, and so
// is a deleted topic's data).
#include <fmt/format.h>

#include "core/base/assert.h"
#include "sim/workload/workload.h"
#include "sim/workload/workload_internal.h"

namespace sluice::sim {
namespace {

using namespace std::chrono_literals;

// An action the broker could not take (it was down, say) is tried again this often, for this long.
constexpr Duration kRetryEvery = 500ms;
constexpr int kAttempts = 20;

class AdminWorkload final : public Workload {
 public:
  AdminWorkload(const WorkloadSpec& spec, WorkloadContext& ctx) : Workload(spec.name, ctx), actions_(spec.actions) {}

  void run(Env env) override {
    const Instant start = env.clock.now();
    client::Client client(env, ctx_.client);
    for (const AdminAction& action : actions_) {
      while (!ctx_.stopping && env.clock.now() < start + action.at) env.scheduler.sleep_for(50ms);
      if (ctx_.stopping) return;
      for (int attempt = 0; attempt < kAttempts && !ctx_.stopping; ++attempt) {
        if (perform(env, client, action)) break;
        env.scheduler.sleep_for(kRetryEvery);
      }
      ++done_;
    }
  }

  bool converged() const override { return done_ == actions_.size() || ctx_.stopping; }

  std::string progress() const override { return fmt::format("{} of {} admin actions done", done_, actions_.size()); }

 private:
  // True when the action got a definite answer (done or refused).
  bool perform(Env env, client::Client& client, const AdminAction& action) {
    Operation op;
    op.process = name_;
    op.kind = action.kind;
    op.tp = client::TopicPartitionId{action.topic, action.kind == OpKind::kDeleteRecords ? action.partition : -1};
    op.edit_details().config = action.config;
    const uint64_t id = ctx_.history.invoke(std::move(op), env.clock.now());
    Status status;
    int64_t result = -1;
    int64_t requested = -1;
    switch (action.kind) {
      case OpKind::kAlterConfig: status = alter(client, action); break;
      case OpKind::kCreateTopic: status = create(client, action); break;
      case OpKind::kDeleteTopic: status = client.delete_topic(action.topic); break;
      case OpKind::kDeleteRecords: status = delete_records(client, action, requested, result); break;
      default: SLUICE_UNREACHABLE();
    }
    Operation& o = ctx_.history.op(id);
    settle_from_status(o, status);
    o.offset = requested;
    o.result_offset = result;
    ctx_.history.complete(id, env.clock.now());
    return o.outcome != Outcome::kUnknown;
  }

  static Status alter(client::Client& client, const AdminAction& action) {
    std::vector<client::ConfigChange> changes;
    for (const auto& [key, value] : action.config) {
      changes.push_back({key, value.empty() ? std::nullopt : std::optional<std::string>(value)});
    }
    return client.alter_topic_config(action.topic, changes);
  }

  static Status create(client::Client& client, const AdminAction& action) {
    client::NewTopic topic;
    topic.name = action.topic;
    topic.partitions = action.partitions;
    topic.configs = action.config;
    return client.create_topic(topic);
  }

  // Cuts `fraction` of the partition's readable range.
  static Status delete_records(client::Client& client, const AdminAction& action, int64_t& requested,
                               int64_t& low_watermark) {
    const client::TopicPartitionId tp{action.topic, action.partition};
    Result<client::ListedOffset> earliest = client.list_offset(tp, client::kEarliestTimestamp);
    if (!earliest.ok()) return earliest.status();
    Result<client::ListedOffset> latest = client.list_offset(tp, client::kLatestTimestamp);
    if (!latest.ok()) return latest.status();
    requested = earliest->offset +
                static_cast<int64_t>(static_cast<double>(latest->offset - earliest->offset) * action.fraction);
    Result<int64_t> cut = client.delete_records(tp, requested);
    if (!cut.ok()) return cut.status();
    low_watermark = *cut;
    return Status::ok_status();
  }

  std::vector<AdminAction> actions_;
  size_t done_ = 0;
};

}  // namespace

std::unique_ptr<Workload> make_admin_workload(const WorkloadSpec& spec, WorkloadContext& ctx) {
  return std::make_unique<AdminWorkload>(spec, ctx);
}

}  // namespace sluice::sim
