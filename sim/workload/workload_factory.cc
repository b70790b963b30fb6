// The one place that knows every workload kind's factory (so that reading a scenario file does not pull in the
// client the workloads drive).
#include "core/base/assert.h"
#include "sim/workload/workload.h"
#include "sim/workload/workload_internal.h"

namespace sluice::sim {

std::unique_ptr<Workload> make_workload(const WorkloadSpec& spec, WorkloadContext& ctx) {
  switch (spec.kind) {
    case WorkloadSpec::Kind::kProducer: return make_producer_workload(spec, ctx);
    case WorkloadSpec::Kind::kConsumer: return make_consumer_workload(spec, ctx);
    case WorkloadSpec::Kind::kGroup: return make_group_workload(spec, ctx);
    case WorkloadSpec::Kind::kTable: return make_table_workload(spec, ctx);
    case WorkloadSpec::Kind::kAdmin: return make_admin_workload(spec, ctx);
  }
  SLUICE_UNREACHABLE();
}

}  // namespace sluice::sim
