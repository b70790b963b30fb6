// Shared by the workload implementations: their factories and small helpers.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/client/client.h"
#include "core/env/random.h"
#include "sim/history/history.h"
#include "sim/workload/workload.h"

namespace sluice::sim {

std::unique_ptr<Workload> make_producer_workload(const WorkloadSpec& spec, WorkloadContext& ctx);
std::unique_ptr<Workload> make_consumer_workload(const WorkloadSpec& spec, WorkloadContext& ctx);
std::unique_ptr<Workload> make_group_workload(const WorkloadSpec& spec, WorkloadContext& ctx);
std::unique_ptr<Workload> make_table_workload(const WorkloadSpec& spec, WorkloadContext& ctx);
std::unique_ptr<Workload> make_admin_workload(const WorkloadSpec& spec, WorkloadContext& ctx);

// The topic's partition count as the scenario declares it. REQUIRES: the scenario declares the topic.
int32_t partition_count(const WorkloadContext& ctx, const std::string& topic);
// The partition a keyed batch goes to, in [0, partitions): from the key's FNV-1a, as every build has chosen it, so
// that a seed's keys stay in their partitions when the value digests change (they moved to XXH3).
int32_t partition_of_key(std::string_view key, int32_t partitions);
// `base` +-25 %, drawn from the node's own stream: workloads do not march in lock step.
Duration jittered(Duration base, Random& random);
// What a fetch returned, as the history keeps it.
std::vector<RecordView> record_views(const std::vector<client::FetchedRecordView>& records);
// Fills the outcome and error fields of `op` from a Status (ok, a broker error: fail, transport: unknown).
void settle_from_status(Operation& op, const Status& status);
// Fills a fetch operation from the client's answer: outcome (a partition error is a failure), high watermark, log
// start and the records.
void settle_fetch(Operation& op, const Result<client::FetchView>& fetched);

}  // namespace sluice::sim
