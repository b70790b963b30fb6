#include "sim/scenario/final_read.h"

#include <fmt/format.h>

#include "core/protocol/error_codes.h"
#include "sim/faults/fault.h"
#include "sim/workload/workload_internal.h"

namespace sluice::sim {
namespace {

using namespace std::chrono_literals;

constexpr Duration kFinalReadLimit = 120s;
constexpr int kAttempts = 5;

enum class ReadEnd { kWhole, kGone, kFailed };

// Reads one partition from its log start to its high watermark into `op`.
ReadEnd read_whole(client::Client& client, const client::TopicPartitionId& tp, Operation& op) {
  Result<client::ListedOffset> earliest = client.list_offset(tp, client::kEarliestTimestamp);
  if (!earliest.ok()) {
    op.set_error(earliest.status().to_string());
    return earliest.status().protocol_error() == wire_code(ErrorCode::kUnknownTopicOrPartition) ? ReadEnd::kGone
                                                                                                   : ReadEnd::kFailed;
  }
  Result<client::ListedOffset> latest = client.list_offset(tp, client::kLatestTimestamp);
  if (!latest.ok()) {
    op.set_error(latest.status().to_string());
    return ReadEnd::kFailed;
  }
  op.offset = earliest->offset;
  op.log_start_offset = earliest->offset;
  op.high_watermark = latest->offset;
  op.records.clear();
  int64_t position = earliest->offset;
  while (position < latest->offset) {
    Result<client::FetchView> fetched = client.fetch_view(tp, position, client::FetchOptions{});
    if (!fetched.ok() || fetched->error_code != 0) {
      op.set_error(fetched.ok() ? fmt::format("fetch at {}: error {}", position, fetched->error_code)
                                : fetched.status().to_string());
      return ReadEnd::kFailed;
    }
    // Past the last whole batch returned, control batches included (an answer of only a LeaderChange marker, say at
    // a segment's end, goes on after it, as consumers do); none: the rest up to the high watermark was compacted away.
    if (fetched->next_offset <= position) break;
    position = fetched->next_offset;
    std::vector<RecordView> views = record_views(fetched->records);
    for (RecordView& v : views) {
      if (v.offset < latest->offset) op.records.push_back(std::move(v));
    }
  }
  return ReadEnd::kWhole;
}

}  // namespace

void final_read(RunWorld& world, const Scenario& scenario, const client::ClientConfig& config, History& history,
                CheckReport& report) {
  SimNode& reader = world.add_client("final-reader");
  bool done = false;
  reader.boot([&](Env env) {
    client::Client client(env, config);
    for (const TopicSpec& topic : scenario.topics) {
      for (int32_t p = 0; p < topic.partitions; ++p) {
        const client::TopicPartitionId tp{topic.name, p};
        Operation op;
        op.process = "final-reader";
        op.kind = OpKind::kFinalRead;
        op.tp = tp;
        const uint64_t id = history.invoke(std::move(op), env.clock.now());
        ReadEnd end = ReadEnd::kFailed;
        for (int attempt = 0; attempt < kAttempts && end == ReadEnd::kFailed; ++attempt) {
          if (attempt > 0) env.scheduler.sleep_for(500ms);
          end = read_whole(client, tp, history.op(id));
        }
        Operation& o = history.op(id);
        o.outcome = end == ReadEnd::kWhole ? Outcome::kOk : Outcome::kFailed;
        history.complete(id, env.clock.now());
        if (end == ReadEnd::kFailed) {
          report.fail("final-read", fmt::format("{} could not be read whole: {}", tp.to_string(), o.error()));
        }
      }
    }
    done = true;
  });
  SimWorld& sim = world.world();
  if (!sim.run_until([&] { return done; }, sim.now() + kFinalReadLimit)) {
    report.fail("final-read", "the final read did not finish within " + format_duration(kFinalReadLimit));
  }
}

}  // namespace sluice::sim
