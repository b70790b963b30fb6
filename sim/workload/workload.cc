#include "sim/workload/workload.h"

#include <algorithm>
#include <string>

#include "core/base/assert.h"
#include "sim/workload/workload_internal.h"

namespace sluice::sim {

std::string_view workload_kind_name(WorkloadSpec::Kind kind) {
  switch (kind) {
    case WorkloadSpec::Kind::kProducer: return "producer";
    case WorkloadSpec::Kind::kConsumer: return "consumer";
    case WorkloadSpec::Kind::kGroup: return "group";
    case WorkloadSpec::Kind::kTable: return "table";
    case WorkloadSpec::Kind::kAdmin: return "admin";
  }
  SLUICE_UNREACHABLE();
}

Bytes make_value(const std::string& process, uint64_t n, int bytes, Random& random) {
  // Every produced record makes one: built in place (no format parse, no push_back per byte), byte for byte what
  // the traces of earlier builds hold.
  std::string text = process;
  text += '#';
  text += std::to_string(n);
  text += '|';
  static constexpr char kFiller[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  constexpr uint64_t kBase = sizeof(kFiller) - 1;
  constexpr int kDigitsPerDraw = 12;  // 36^12 < 2^64: twelve filler characters from one draw, not one each
  Bytes value(std::max(text.size(), static_cast<size_t>(std::max(bytes, 0))));
  std::copy(text.begin(), text.end(), value.begin());
  size_t at = text.size();
  while (at < value.size()) {
    uint64_t draw = random.next_u64();
    for (int i = 0; i < kDigitsPerDraw && at < value.size(); ++i) {
      value[at++] = static_cast<uint8_t>(kFiller[draw % kBase]);
      draw /= kBase;
    }
  }
  return value;
}

int32_t partition_count(const WorkloadContext& ctx, const std::string& topic) {
  auto found = ctx.partition_counts.find(topic);
  SLUICE_ASSERT_MSG(found != ctx.partition_counts.end(), "workloads use topics the scenario declares");
  SLUICE_ASSERT(found->second > 0);
  return found->second;
}

Duration jittered(Duration base, Random& random) {
  const int64_t ns = base.count();
  if (ns <= 0) return Duration(0);
  return Duration(ns + random.uniform_range(-ns / 4, ns / 4));
}

std::vector<RecordView> record_views(const std::vector<client::FetchedRecord>& records) {
  std::vector<RecordView> views;
  views.reserve(records.size());
  for (const client::FetchedRecord& r : records) {
    RecordView v;
    v.offset = r.offset;
    if (r.key) v.key = std::string(r.key->begin(), r.key->end());
    v.tombstone = !r.value.has_value();
    v.value_digest = r.value ? digest_of(*r.value) : 0;
    v.timestamp_ms = r.timestamp;
    v.batch_max_timestamp_ms = r.batch_max_timestamp;
    views.push_back(std::move(v));
  }
  return views;
}

void settle_from_status(Operation& op, const Status& status) {
  if (status.ok()) {
    op.outcome = Outcome::kOk;
    return;
  }
  op.error_code = status.protocol_error();
  op.error = status.to_string();
  // The broker answered with an error: nothing was done. No answer at all: it may have been.
  op.outcome = status.protocol_error() != 0 || status.code() == Code::kInvalidArgument ? Outcome::kFailed
                                                                                         : Outcome::kUnknown;
}

void settle_fetch(Operation& op, const Result<client::FetchResult>& fetched) {
  settle_from_status(op, fetched.status());
  if (!fetched.ok()) return;
  op.error_code = fetched->error_code;
  op.outcome = fetched->error_code == 0 ? Outcome::kOk : Outcome::kFailed;
  op.high_watermark = fetched->high_watermark;
  op.log_start_offset = fetched->log_start_offset;
  op.records = record_views(fetched->records);
  op.result_offset = fetched->next_offset;  // fetch: past the last whole batch returned, -1 when none came back
}

}  // namespace sluice::sim
