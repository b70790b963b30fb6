#include "sim/checkers/analysis.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "core/base/assert.h"
#include "core/protocol/error_codes.h"

namespace sluice::sim {
namespace {

int64_t ms_of(Instant t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

bool observes_records(const Operation& op) {
  return op.completed && op.outcome == Outcome::kOk && (op.kind == OpKind::kFetch || op.kind == OpKind::kFinalRead);
}

}  // namespace

std::string PartitionKey::to_string() const {
  return incarnation == 0 ? fmt::format("{}-{}", topic, partition)
                          : fmt::format("{}-{} (incarnation {})", topic, partition, incarnation);
}

void report_violation(CheckReport& report, const std::string& invariant, std::string evidence) {
  size_t same = 0;
  for (const Violation& v : report.violations) same += v.invariant == invariant ? 1 : 0;
  if (same < kViolationsPerInvariantMax) {
    report.fail(invariant, std::move(evidence));
  } else {
    report.count("violations not shown: " + invariant);
  }
}

Analysis::Analysis(const CheckContext& ctx) : ctx_(ctx) {
  index_world();
  index_ops();
  for (auto& [key, observations] : observations_) observations.seal();
  keys_in_order_.reserve(keys_.size());
  for (const PartitionKey& key : keys_) {
    ordinal_by_key_.emplace(&key, keys_in_order_.size());
    keys_in_order_.push_back(&key);
  }
}

size_t Analysis::ordinal_of(const PartitionKey* key) const {
  const auto found = ordinal_by_key_.find(key);
  SLUICE_ASSERT_MSG(found != ordinal_by_key_.end(), "an interned key");
  return found->second;
}

const TopicFacts* Analysis::topic(const std::string& name) const {
  auto found = ctx_.topics.find(name);
  return found == ctx_.topics.end() ? nullptr : &found->second;
}

void Analysis::index_world() {
  std::optional<Instant> serving_since;
  for (const WorldEvent& e : ctx_.history.events()) {
    switch (e.kind) {
      case WorldEvent::Kind::kPowerLoss:
        power_losses_.emplace_back(e.at, e.node);
        faults_.push_back(e.at);
        break;
      case WorldEvent::Kind::kFault: faults_.push_back(e.at); break;
      case WorldEvent::Kind::kClockJump:
        if (e.node == "n1") clock_jumps_.emplace_back(e.at, e.amount_ms);
        break;
      case WorldEvent::Kind::kServing:
        if (e.node == "n1") serving_since = e.at;
        break;
      case WorldEvent::Kind::kDown:
        faults_.push_back(e.at);
        [[fallthrough]];
      case WorldEvent::Kind::kBootFailed:
        if (e.node == "n1" && serving_since) {
          serving_.emplace_back(*serving_since, e.at);
          serving_since.reset();
        }
        break;
      default: break;
    }
  }
  if (serving_since) serving_.emplace_back(*serving_since, Instant::max());
  for (const TimedEffect& e : ctx_.history.effects()) {
    if (e.effect.kind == storage::LogEffect::Kind::kPartitionDeleted) {
      deletions_[{e.effect.tp.topic, e.effect.tp.partition}].push_back(e.at);
    }
  }
}

void ObservationsByOffset::seal() {
  SLUICE_ASSERT(groups_.empty());
  // One offset's observations keep the history's order (the order add() was called in).
  sort_by_offset(observations_, [](const Observation& o) { return o.offset; });
  for (size_t from = 0; from < observations_.size();) {
    const int64_t offset = observations_[from].offset;
    size_t to = from + 1;
    while (to < observations_.size() && observations_[to].offset == offset) ++to;
    groups_.emplace_back(offset, std::span<const Observation>(observations_.data() + from, to - from));
    from = to;
  }
}

void Analysis::observe(const PartitionKey& key, const Operation& op, bool acknowledged_only) {
  if (op.records.empty()) return;
  ObservationsByOffset& observations = observations_of(key);  // once per operation, not per record
  for (const RecordView& r : op.records) {
    if (acknowledged_only && r.offset < 0) continue;
    observations.add(Observation{r.offset, r.tombstone ? 0 : r.value_digest, &r, &op});
  }
}

ObservationsByOffset& Analysis::observations_of(const PartitionKey& key) {
  // Keys are interned (keys_), and a run observes a handful of partitions: a scan of the first kFirstKeys addresses
  // beats a walk down the map comparing topic names, once per operation.
  for (const auto& [interned, observations] : observations_by_address_) {
    if (interned == &key) return *observations;
  }
  ObservationsByOffset& observations = observations_[key];  // map nodes stay put
  if (observations_by_address_.size() < kFirstKeys) observations_by_address_.emplace_back(&key, &observations);
  return observations;
}

void Analysis::index_ops() {
  key_by_op_.reserve(ctx_.history.ops().size());
  writes_.reserve(ctx_.history.ops().size());
  write_by_digest_ = DigestMap<uint32_t>(ctx_.history.ops().size() / 4);  // grows past that
  for (const Operation& op : ctx_.history.ops()) {
    SLUICE_ASSERT(op.id == key_by_op_.size());
    key_by_op_.push_back(find_key_of(op));
    if (op.outcome != Outcome::kFailed && op.kind == OpKind::kAlterConfig) alter_configs_.push_back(&op);
    // A replicated DeleteRecords moves the leader's log start before it waits for the followers: REQUEST_TIMED_OUT
    // or NOT_LEADER_OR_FOLLOWER then leave the cut in place (as Kafka's DelayedDeleteRecords does), so they may
    // have cut too.
    const bool may_have_cut = op.outcome != Outcome::kFailed ||
                              op.error_code == static_cast<int16_t>(ErrorCode::kRequestTimedOut) ||
                              op.error_code == static_cast<int16_t>(ErrorCode::kNotLeaderOrFollower);
    if (may_have_cut && op.kind == OpKind::kDeleteRecords) delete_records_.push_back(&op);
    if (op.kind == OpKind::kProduce) {
      const PartitionKey* key = key_of(op);
      const bool acknowledged = key && op.completed && op.outcome == Outcome::kOk;
      for (size_t i = 0; i < op.records.size(); ++i) {
        writes_.push_back(Write{&op, i});
        SLUICE_ASSERT(writes_.size() <= UINT32_MAX);
        const auto index = static_cast<uint32_t>(writes_.size() - 1);
        if (!op.records[i].tombstone) write_by_digest_.insert_or_assign(op.records[i].value_digest, index);
      }
      if (acknowledged) observe(*key, op, /*acknowledged_only=*/true);
      continue;
    }
    if (!observes_records(op)) continue;
    const PartitionKey* found_key = key_of(op);
    if (!found_key) continue;
    const PartitionKey& key = *found_key;
    observe(key, op, /*acknowledged_only=*/false);
    if (op.kind == OpKind::kFinalRead) {
      FinalRead& final_read = final_reads_[key];
      final_read.op = &op;
      final_read.log_start = op.log_start_offset;
      final_read.high_watermark = op.high_watermark;
      for (const RecordView& r : op.records) final_read.records[r.offset] = &r;
    }
  }
}

int Analysis::incarnation(const std::string& topic, int32_t partition, Instant t) const {
  if (deletions_.empty()) return 0;  // the common case, without building a key per call
  auto found = deletions_.find({topic, partition});
  if (found == deletions_.end()) return 0;
  return static_cast<int>(std::count_if(found->second.begin(), found->second.end(), [t](Instant d) { return d <= t; }));
}

const PartitionKey* Analysis::find_key_of(const Operation& op) {
  const int before = incarnation(op.tp.topic, op.tp.partition, op.invoked_at);
  if (op.completed && incarnation(op.tp.topic, op.tp.partition, op.completed_at) != before) return nullptr;
  // A run addresses a handful of partitions: a scan of them beats building a key to look one up.
  for (const PartitionKey* key : first_keys_) {
    if (key->partition == op.tp.partition && key->incarnation == before && key->topic == op.tp.topic) return key;
  }
  const PartitionKey* key = &*keys_.insert(PartitionKey{op.tp.topic, op.tp.partition, before}).first;
  if (first_keys_.size() < kFirstKeys) first_keys_.push_back(key);
  return key;
}

bool Analysis::deleted_after(const std::string& topic, int32_t partition, Instant t) const {
  if (deletions_.empty()) return false;
  auto found = deletions_.find({topic, partition});
  if (found == deletions_.end()) return false;
  return std::any_of(found->second.begin(), found->second.end(), [t](Instant d) { return d > t; });
}

const Write* Analysis::write_of(uint64_t digest) const {
  const uint32_t* found = write_by_digest_.find(digest);
  return found == nullptr ? nullptr : &writes_[*found];
}

bool Analysis::power_loss_after(Instant t) const {
  return std::any_of(power_losses_.begin(), power_losses_.end(), [t](const auto& p) { return p.first >= t; });
}

bool Analysis::quorum_power_loss_between(Instant a, Instant b) const {
  std::set<std::string> struck;
  for (const auto& [at, node] : power_losses_) {
    if (at >= a && at <= b) struck.insert(node);
  }
  // A write on a quorum Q (in page caches) is gone once a majority that lacks it elects a leader: the nodes outside Q
  // (at most n - majority, lagging) plus members of Q that lost it, which takes a power loss each; so
  // 2 * majority - n power losses (1 for an odd n) after the write can take it, whoever else crashed or lagged.
  const int n = std::max(ctx_.brokers, 1);
  const int majority = n / 2 + 1;
  return static_cast<int>(struck.size()) >= 2 * majority - n;
}

bool Analysis::quorum_power_loss_after(Instant t) const { return quorum_power_loss_between(t, Instant::max()); }

int64_t Analysis::wall_ms(Instant t) const {
  int64_t wall = ctx_.wall_epoch_ms + ms_of(t);
  for (const auto& [at, jump] : clock_jumps_) {
    if (at <= t) wall += jump;
  }
  return wall;
}

int64_t Analysis::min_wall_ms(Instant a, Instant b) const {
  // The clock moves forwards between jumps, so its extremes are at a, b and just before or after each jump.
  int64_t least = std::min(wall_ms(a), wall_ms(b));
  for (const auto& [at, jump] : clock_jumps_) {
    if (at > a && at <= b) least = std::min(least, wall_ms(at));
  }
  return least;
}

int64_t Analysis::max_wall_ms(Instant a, Instant b) const {
  int64_t greatest = std::max(wall_ms(a), wall_ms(b));
  for (const auto& [at, jump] : clock_jumps_) {
    if (at > a && at <= b) greatest = std::max(greatest, wall_ms(at) - jump);  // just before the jump
  }
  return greatest;
}

bool Analysis::serving_throughout(Instant a, Instant b) const {
  return std::any_of(serving_.begin(), serving_.end(),
                     [a, b](const std::pair<Instant, Instant>& s) { return s.first <= a && s.second >= b; });
}

bool Analysis::truncated_between(const std::string& topic, int32_t partition, int64_t offset, Instant a,
                                 Instant b) const {
  for (const TimedEffect& e : ctx_.history.effects()) {
    const storage::LogEffect& effect = e.effect;
    if (effect.kind != storage::LogEffect::Kind::kTruncatedOnRecovery) continue;
    if (effect.tp.topic != topic || effect.tp.partition != partition) continue;
    if (e.at >= a && e.at <= b && effect.from <= offset) return true;
  }
  return false;
}

int64_t Analysis::delete_records_cut_before(const PartitionKey& key, Instant t) const {
  int64_t cut = -1;
  for (const Operation* found : delete_records_) {
    const Operation& op = *found;
    if (op.invoked_at > t) break;
    if (op.tp.topic != key.topic || op.tp.partition != key.partition) continue;
    if (incarnation(op.tp.topic, op.tp.partition, op.invoked_at) != key.incarnation) continue;
    cut = std::max({cut, op.offset, op.result_offset});
  }
  return cut;
}

std::pair<int64_t, int64_t> Analysis::config_range(const std::string& topic, const std::string& key, int64_t initial,
                                                   Instant t) const {
  if (initial < 0) initial = INT64_MAX;
  int64_t least = initial;
  int64_t greatest = initial;
  for (const Operation* alter : alter_configs_) {
    const Operation& op = *alter;
    if (op.invoked_at > t) break;
    if (op.tp.topic != topic) continue;
    auto found = op.details().config.find(key);
    if (found == op.details().config.end() || found->second.empty()) continue;
    int64_t value = std::stoll(found->second);
    if (value < 0) value = INT64_MAX;  // retention.ms / retention.bytes -1: unlimited
    least = std::min(least, value);
    greatest = std::max(greatest, value);
  }
  return {least, greatest};
}

}  // namespace sluice::sim
