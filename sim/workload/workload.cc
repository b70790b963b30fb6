#include "sim/workload/workload.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstring>
#include <limits>
#include <string>

#include "core/base/assert.h"
#include "core/base/fnv1a.h"
#include "core/env/random.h"
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

namespace {

constexpr char kFiller[] = "abcdefghijklmnopqrstuvwxyz0123456789";
constexpr uint64_t kFillerBase = sizeof(kFiller) - 1;
constexpr uint64_t kPairBase = kFillerBase * kFillerBase;
constexpr size_t kDigitsPerDraw = 12;  // 36^12 < 2^64: twelve filler characters from one draw, not one each
constexpr uint64_t kHalfBase = kPairBase * kPairBase * kPairBase;  // 36^6 < 2^32: half a draw in 32-bit arithmetic
static_assert(kHalfBase <= std::numeric_limits<uint32_t>::max());

// The two filler characters of each base-36 digit pair, low digit first: two characters per division.
constexpr std::array<std::array<char, 2>, kPairBase> make_filler_pairs() {
  std::array<std::array<char, 2>, kPairBase> pairs{};
  for (uint64_t i = 0; i < kPairBase; ++i) pairs[i] = {kFiller[i % kFillerBase], kFiller[i / kFillerBase]};
  return pairs;
}
constexpr std::array<std::array<char, 2>, kPairBase> kFillerPairs = make_filler_pairs();

// The low `digits` base-36 digits of `draw` as filler characters, low digit first.
void put_filler(uint64_t draw, size_t digits, uint8_t* out) {
  for (; digits >= 2; digits -= 2, out += 2) {
    std::memcpy(out, kFillerPairs[draw % kPairBase].data(), 2);
    draw /= kPairBase;
  }
  if (digits == 1) *out = static_cast<uint8_t>(kFiller[draw % kFillerBase]);
}

// put_filler's six digits of a value below 36^6: 32-bit divisions are a multiply each, 64-bit ones several.
void put_six(uint32_t six, uint8_t* out) {
  constexpr auto kPair = static_cast<uint32_t>(kPairBase);
  const uint32_t upper = six / kPair;
  std::memcpy(out, kFillerPairs[six - upper * kPair].data(), 2);
  std::memcpy(out + 2, kFillerPairs[upper % kPair].data(), 2);
  std::memcpy(out + 4, kFillerPairs[upper / kPair].data(), 2);
}

}  // namespace

Bytes make_value(const std::string& process, uint64_t n, int bytes, Random& random) {
  // Every produced record makes one: built in place through a pointer (a store through value[i] made the compiler
  // reload the vector's fields after each byte), byte for byte what the traces of earlier builds hold.
  std::array<char, 20> number{};  // 2^64 has 20 decimal digits
  const char* number_end = std::to_chars(number.data(), number.data() + number.size(), n).ptr;
  const auto number_size = static_cast<size_t>(number_end - number.data());
  const size_t prefix = process.size() + 1 + number_size + 1;
  Bytes value(std::max(prefix, static_cast<size_t>(std::max(bytes, 0))));
  uint8_t* out = value.data();
  std::memcpy(out, process.data(), process.size());
  out += process.size();
  *out++ = '#';
  std::memcpy(out, number.data(), number_size);
  out += number_size;
  *out++ = '|';
  uint8_t* const end = value.data() + value.size();
  for (; static_cast<size_t>(end - out) >= kDigitsPerDraw; out += kDigitsPerDraw) {
    const uint64_t draw = random.next_u64();
    const uint64_t high = draw / kHalfBase;
    put_six(static_cast<uint32_t>(draw - high * kHalfBase), out);
    put_six(static_cast<uint32_t>(high % kHalfBase), out + kDigitsPerDraw / 2);
  }
  if (out != end) put_filler(random.next_u64(), static_cast<size_t>(end - out), out);
  return value;
}

int32_t partition_of_key(std::string_view key, int32_t partitions) {
  SLUICE_ASSERT(partitions > 0);
  const uint64_t h = mix64(fnv1a64(key));
  return static_cast<int32_t>((h == 0 ? 1 : h) % static_cast<uint64_t>(partitions));
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

std::vector<RecordView> record_views(const std::vector<client::FetchedRecordView>& records) {
  // Filled where they lie: a view built aside and moved in copied its key twice (every fetched record makes one).
  std::vector<RecordView> views(records.size());
  for (size_t i = 0; i < records.size(); ++i) {
    const client::FetchedRecordView& r = records[i];
    RecordView& v = views[i];
    v.offset = r.offset;
    if (r.key) v.key.emplace(as_chars(*r.key));
    v.tombstone = !r.value.has_value();
    v.value_digest = r.value ? digest_of(*r.value) : 0;
    v.timestamp_ms = r.timestamp;
    v.batch_max_timestamp_ms = r.batch_max_timestamp;
  }
  return views;
}

void settle_from_status(Operation& op, const Status& status) {
  if (status.ok()) {
    op.outcome = Outcome::kOk;
    return;
  }
  op.error_code = status.protocol_error();
  op.set_error(status.to_string());
  // The broker answered with an error: nothing was done. No answer at all: it may have been.
  op.outcome = status.protocol_error() != 0 || status.code() == Code::kInvalidArgument ? Outcome::kFailed
                                                                                         : Outcome::kUnknown;
}

void settle_fetch(Operation& op, const Result<client::FetchView>& fetched) {
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
