// Partition's identity, offsets and produce path; reads, offset lookups and DeleteRecords are in
// partition_read.cc.
#include "core/cluster/partition.h"

#include <fmt/format.h>

#include "core/base/assert.h"
#include "core/cluster/deferred_appends.h"
#include "core/protocol/error_codes.h"
#include "core/storage/log_config.h"

namespace sluice::cluster {
namespace {

int64_t wall_ms(const Env& env) { return to_unix_ms(env.clock.wall_now()); }

// The batch in the topic's compression.type: `*storage` receives it when it had to be re-encoded, and the answer
// views it; otherwise the answer is `records` itself. Re-encoding can make a batch larger, so its size is checked
// again (UnifiedLog.append does the same after LogValidator).
Result<ByteView> in_topic_codec(ByteView records, const storage::TopicConfig& config, Bytes* storage) {
  SLUICE_ASSIGN_OR_RETURN(std::optional<Bytes> recompressed,
                          storage::apply_topic_compression(records, config.compression_type));
  if (!recompressed) return records;
  if (recompressed->size() > static_cast<size_t>(config.max_message_bytes)) {
    return kafka_error(ErrorCode::kMessageTooLarge,
                       fmt::format("the batch re-encoded in compression.type {} is {} bytes, over max.message.bytes {}",
                                   *config.value_of("compression.type"), recompressed->size(),
                                   config.max_message_bytes));
  }
  *storage = std::move(*recompressed);
  return ByteView(*storage);
}

// Checking a batch costs about a pass over its records, decompressed: a compressed byte counts as several.
constexpr size_t kCompressedByteCheckCost = 8;
// From this cost on, a produce batch is checked off the loop (Scheduler::run_off_loop): a 100 MiB batch checked
// inline would stall every other connection of the node, heartbeats included, for as long as it takes. Below it,
// the check costs less than the handoff to a worker (tens of microseconds).
constexpr size_t kOffloadCheckCost = 256 * 1024;

size_t check_cost(ByteView records) {
  Result<storage::BatchHeader> header = storage::parse_batch_header(records);
  const bool compressed = header.ok() && header->compression() != storage::Compression::kNone;
  return compressed ? records.size() * kCompressedByteCheckCost : records.size();
}

// LogValidator's part of the append: every record checked, the CreateTime header's max timestamp set, the batch
// in the topic's codec (`*corrected` and `*recompressed` receive rewritten copies). Touches only its arguments, so
// it may run on a worker.
Result<ByteView> check_and_encode(ByteView records, const storage::TopicConfig& config,
                                  const storage::ValidationRules& rules,
                                  std::vector<storage::RecordError>* record_errors, Bytes* corrected,
                                  Bytes* recompressed) {
  SLUICE_ASSIGN_OR_RETURN(const storage::ValidBatch valid,
                          storage::validate_produce_batch(records, rules, record_errors));
  // CreateTime: the time index, ListOffsets and retention judge by the records' own times
  if (config.message_timestamp_type == storage::MessageTimestampType::kCreateTime) {
    records = storage::with_create_time_max_timestamp(records, valid.records_max_timestamp, corrected);
  }
  return in_topic_codec(records, config, recompressed);
}

}  // namespace

std::optional<Acks> acks_from_wire(int16_t acks) {
  switch (acks) {
    case -1: return Acks::kAll;
    case 0: return Acks::kNone;
    case 1: return Acks::kLeader;
    default: return std::nullopt;
  }
}

Partition::Partition(PartitionContext& context, storage::TopicPartition tp, storage::TopicConfig config,
                     std::string topic_id, std::shared_ptr<storage::PartitionLog> log,
                     std::optional<ReplicaGroup> replica_group)
    : context_(context),
      tp_(std::move(tp)),
      config_(std::move(config)),
      topic_id_(std::move(topic_id)),
      log_(std::move(log)),
      replica_group_(std::move(replica_group)),
      producer_state_(context.env) {
  SLUICE_ASSERT(log_ != nullptr);
  if (replica_group_) {
    SLUICE_ASSERT(replica_group_->host != nullptr);
    SLUICE_ASSERT(!replica_group_->replicas.empty());
    SLUICE_ASSERT(!log_->settings().high_watermark_follows_log_end);
    leader_epoch_ = kUndefinedEpoch;  // until the group reports its term
  }
  seen_log_start_ = log_->log_start_offset();
  seen_log_end_ = log_->log_end_offset();
  check_offsets();
}

void Partition::check_offsets() const {
  const int64_t start = log_->log_start_offset();
  const int64_t high_watermark = log_->high_watermark();
  const int64_t end = log_->log_end_offset();
  SLUICE_ASSERT(start <= high_watermark);
  SLUICE_ASSERT(high_watermark <= end);
  // The log start never goes back. One node never takes offsets back either; a replica cuts a deposed leader's
  // uncommitted suffix, never below what it reported committed (the high watermark only rises), except where raft
  // lost committed entries of a `replicated` group (on_committed_cut lowers what was seen first).
  SLUICE_ASSERT(start >= seen_log_start_);
  SLUICE_ASSERT(end >= seen_log_end_ || replicated());
  SLUICE_ASSERT(high_watermark >= seen_high_watermark_ || !replicated() ||
                context_.mutations.has(Mutation::kHwAheadOfQuorum));  // the planted bug breaks this on purpose
  seen_high_watermark_ = high_watermark;
  seen_log_start_ = start;
  seen_log_end_ = end;
}

int64_t Partition::log_start_offset() const {
  check_offsets();
  return log_->log_start_offset();
}

// What consumers see as the end of a replicated partition: the commit index, less the LeaderChange batches at its
// tail. Each partition leader's first entry is that control batch (raft's no-op, partition_raft_log.h), which Fetch
// leaves out because clients such as kafka-python 2.0.2 and @platformatic/kafka return control records as data; a
// consumer that has read the last data record must then be at the end (lag 0, end-of-partition reached), as on
// Kafka, where a leader change writes nothing into the partition. The epoch cache names each epoch's first offset.
int64_t Partition::high_watermark() const {
  check_offsets();
  int64_t visible = log_->high_watermark();
  if (!replicated()) return visible;
  const std::vector<storage::EpochEntry>& epochs = log_->leader_epochs();
  for (auto epoch = epochs.rbegin(); epoch != epochs.rend(); ++epoch) {
    if (epoch->start_offset >= visible) continue;  // an epoch not committed yet
    if (epoch->start_offset != visible - 1 || epoch->start_offset < log_->log_start_offset()) break;
    // An entry at a log start that moved may be one the move clamped there (retention, DeleteRecords and a restart
    // at the leader's log start keep the entry covering the start, Kafka's truncateFromStart): its batch need not be
    // a LeaderChange, so it stays visible (at worst a LeaderChange batch counts as one record of lag).
    if (epoch->start_offset == log_->log_start_offset() && epoch->start_offset > 0) break;
    --visible;  // the last offset below is an epoch's first entry: its LeaderChange batch
  }
  SLUICE_ASSERT(visible >= log_->log_start_offset());
  return visible;
}

int64_t Partition::log_end_offset() const {
  check_offsets();
  return log_->log_end_offset();
}

// A removed partition keeps its (closed) log for the fibers still holding it; the log manager's entry for the same
// name may by now be a new partition's, which this one must not write to.
Status Partition::check_not_removed() const {
  if (context_.logs.find(tp_) == log_.get()) return Status();
  return kafka_error(ErrorCode::kUnknownTopicOrPartition, tp_.to_string() + " was deleted");
}

// acks=-1 against min.insync.replicas, checked before the batch is (Partition.appendRecordsToLeader). Kafka 3.7+
// caps the setting at the replica count (KAFKA-15583), which would accept acks=all on a one-replica partition
// whose topic asks for more; Sluice keeps the topic's number on purpose (issue 19): acks=all never acknowledges
// fewer copies than the topic asks for.
Status Partition::check_in_sync_replicas(Acks acks) const {
  if (acks != Acks::kAll) return Status();  // min.insync.replicas binds acks=all only
  const size_t in_sync = in_sync_replicas().size();
  if (config_.min_insync_replicas <= static_cast<int64_t>(in_sync)) return Status();
  return kafka_error(ErrorCode::kNotEnoughReplicas,
                     fmt::format("partition {} has {} in-sync replica(s); min.insync.replicas is {}", tp_.to_string(),
                                 in_sync, config_.min_insync_replicas));
}

Result<Appended> Partition::append_records(ByteView records, Acks acks,
                                           std::vector<storage::RecordError>* record_errors) {
  if (!is_leader()) return not_leader();
  SLUICE_TRY(check_in_sync_replicas(acks));
  const storage::ValidationRules rules = storage::validation_rules_for(config_, wall_ms(context_.env));
  Bytes corrected;
  Bytes recompressed;
  if (check_cost(records) < kOffloadCheckCost) {
    SLUICE_ASSIGN_OR_RETURN(records,
                            check_and_encode(records, config_, rules, record_errors, &corrected, &recompressed));
  } else {
    // The worker gets its own copy of the config: an AlterConfigs may replace config_ while it checks.
    auto check_off_loop = [&, config = config_] {
      return check_and_encode(records, config, rules, record_errors, &corrected, &recompressed);
    };
    SLUICE_ASSIGN_OR_RETURN(records, context_.env.scheduler.run_off_loop(check_off_loop));
    // Other fibers ran meanwhile: this replica may have lost the leadership, or replicas the ISR.
    if (!is_leader()) return not_leader();
    SLUICE_TRY(check_in_sync_replicas(acks));
  }
  SLUICE_ASSIGN_OR_RETURN(storage::BatchHeader header, storage::parse_batch_header(records));
  if (context_.deferred != nullptr) [[unlikely]] {
    SLUICE_PROBE("mutation.ack-before-append");
    Appended promised;  // answered now, appended later, never waited for
    promised.result = context_.deferred->promise(shared_from_this(), records, header);
    return promised;
  }
  SLUICE_ASSIGN_OR_RETURN(Appended appended, append_validated(records, header, /*defer_sync=*/true));
  // A replicated acks=all produce waits for the quorum; acks=0/1 are answered at the leader's append.
  if (replicated()) appended.awaits_acknowledgement = acks == Acks::kAll;
  return appended;
}

Result<Appended> Partition::append_validated(ByteView batch, const storage::BatchHeader& header, bool defer_sync) {
  Appended out;
  if (header.producer_id < 0) {  // kafkajs sends base sequence 0 with producer id -1: sequences mean nothing here
    if (replicated()) {
      SLUICE_ASSIGN_OR_RETURN(out.result, append_replicated(batch, &out.leader_epoch));
    } else {
      SLUICE_ASSIGN_OR_RETURN(out.result, append_to_log(batch, defer_sync));
    }
  } else {
    SLUICE_ASSIGN_OR_RETURN(out, append_idempotent(batch, header, defer_sync));
  }
  out.awaits_acknowledgement = out.result.sync_deferred;
  SLUICE_ASSERT(out.result.base_offset <= out.result.last_offset);
  SLUICE_ASSERT(out.result.last_offset < log_end_offset());
  if (!out.duplicate) notify_appended();
  return out;
}

Result<storage::AppendResult> Partition::append_to_log(ByteView batch, bool defer_sync) {
  SLUICE_TRY(check_not_removed());
  SLUICE_ASSIGN_OR_RETURN(storage::AppendResult result, context_.logs.append(tp_, batch, defer_sync));
  SLUICE_ASSERT(result.base_offset >= result.log_start_offset);
  return result;
}

// Kafka's ProducerStateManager step of UnifiedLog.append: the check, the append and the state update are one turn
// of the producer; a retry of one of its last batches is answered from the state, and is not acknowledged before
// its original could be.
Result<Appended> Partition::append_idempotent(ByteView batch, const storage::BatchHeader& header, bool defer_sync) {
  SLUICE_ASSERT(header.producer_id >= 0);
  SLUICE_TRY(check_not_removed());
  const ProducerState::Turn turn(producer_state_, header.producer_id);
  // Loaded once the turn is ours: a replica that became leader while the turn waited has invalidated the state, and
  // a check against it unloaded would take a retry for a new producer's first batch.
  SLUICE_TRY(producer_state_.load_once(*log_));
  SLUICE_TRY(check_not_removed());  // the partition may have gone while the turn or the load waited
  producer_state_.expire_when_due(log_->log_start_offset());
  SLUICE_ASSIGN_OR_RETURN(std::optional<ProducerBatch> original, producer_state_.producers().check(header));
  Appended out;
  if (original.has_value()) {
    const bool log_append_time = config_.message_timestamp_type == storage::MessageTimestampType::kLogAppendTime;
    out.duplicate = true;
    out.result.base_offset = original->first_offset;
    out.result.last_offset = original->last_offset;
    out.result.log_append_time_ms = log_append_time ? original->timestamp : -1;
    out.result.log_start_offset = log_->log_start_offset();
    if (replicated()) {
      // The original may be gone: a leader deposed while this turn waited has cut its uncommitted suffix, which the
      // producer state (rebuilt only when a replica becomes leader) still remembers. Answer as a leader that stepped
      // down; the retry reaches the new leader, whose state comes from its own log. (A process pause found it.)
      if (!is_leader() || original->last_offset >= log_->log_end_offset()) return not_leader();
      // An acks=all retry waits for the original to commit; a new leader answers it once its high watermark
      // passes the original (wait_replicated), as Kafka's DelayedProduce does.
      out.leader_epoch = leader_epoch_;
      return out;
    }
    if (!log_->durable_through(original->last_offset + 1)) {
      if (!defer_sync) SLUICE_TRY(log_->wait_for_durability(original->last_offset + 1));
      out.result.sync_deferred = defer_sync;
    }
    return out;
  }
  if (replicated()) {
    SLUICE_ASSIGN_OR_RETURN(out.result, append_replicated(batch, &out.leader_epoch));
  } else {
    SLUICE_ASSIGN_OR_RETURN(out.result, append_to_log(batch, defer_sync));
  }
  storage::BatchHeader stored = header;
  stored.base_offset = out.result.base_offset;
  const int64_t timestamp = out.result.log_append_time_ms >= 0 ? out.result.log_append_time_ms : header.max_timestamp;
  producer_state_.producers().record(stored, timestamp, wall_ms(context_.env));
  return out;
}

// One node: the leader's copy is every copy there is, so each acks level waits only for the durability the topic
// promises. Replication makes acks=all wait for the quorum's commit (and a `persisted` topic for a quorum's sync).
Status Partition::wait_acknowledged(int64_t end_offset, Acks acks, Instant deadline, int32_t leader_epoch) {
  if (replicated()) {
    if (acks != Acks::kAll) return Status();
    return wait_replicated(end_offset, leader_epoch, deadline);
  }
  SLUICE_ASSERT(end_offset <= log_->log_end_offset());
  SLUICE_TRY(log_->wait_for_durability(end_offset));
  // A `persisted` topic's high watermark moved with the sync round: long polls on it may answer now (Kafka
  // completes delayed fetches when the high watermark moves).
  if (config_.durability == storage::Durability::kPersisted) notify_appended();
  return Status();
}

Result<const PartitionProducers*> Partition::producers() {
  SLUICE_TRY(check_not_removed());
  SLUICE_TRY(producer_state_.load_once(*log_));
  return &producer_state_.producers();
}

}  // namespace sluice::cluster
