#include "sim/history/history.h"

#include <algorithm>
#include <vector>

#include <fmt/format.h>
// Inlined: a value of ~100 bytes takes a few dozen cycles, where a call into the library would add to it.
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "core/base/assert.h"
#include "sim/history/json.h"

namespace sluice::sim {
namespace {

double seconds(Instant t) { return to_seconds(t.time_since_epoch()); }

void add_records(JsonObject& json, const std::vector<RecordView>& records) {
  std::string list = "[";
  for (size_t i = 0; i < records.size(); ++i) {
    const RecordView& r = records[i];
    JsonObject record;
    record.add("offset", r.offset);
    if (r.key) record.add("key", *r.key);
    if (r.tombstone) {
      record.add_raw("value", "null");
    } else {
      record.add("value", fmt::format("{:016x}", r.value_digest));
    }
    record.add("ts", r.timestamp_ms);
    if (r.batch_max_timestamp_ms >= 0) record.add("batch_max_ts", r.batch_max_timestamp_ms);
    list += (i > 0 ? "," : "") + record.str();
  }
  json.add_raw("records", list + "]");
}

void add_offsets(JsonObject& json, const std::map<TopicPartitionId, int64_t>& offsets) {
  JsonObject map;
  for (const auto& [tp, offset] : offsets) map.add(tp.to_string(), offset);
  json.add_raw("offsets", map.str());
}

}  // namespace

uint64_t digest_of(ByteView bytes) {
  const uint64_t digest = XXH3_64bits(bytes.data(), bytes.size());
  return digest == 0 ? 1 : digest;  // 0 means "tombstone"
}

std::string_view op_kind_name(OpKind kind) {
  switch (kind) {
    case OpKind::kProduce: return "produce";
    case OpKind::kFetch: return "fetch";
    case OpKind::kListOffsets: return "list-offsets";
    case OpKind::kJoin: return "join";
    case OpKind::kCommit: return "commit";
    case OpKind::kCommitted: return "committed";
    case OpKind::kCreateTopic: return "create-topic";
    case OpKind::kDeleteTopic: return "delete-topic";
    case OpKind::kAlterConfig: return "alter-config";
    case OpKind::kDeleteRecords: return "delete-records";
    case OpKind::kFinalRead: return "final-read";
    case OpKind::kTable: return "table";
  }
  SLUICE_UNREACHABLE();
}

std::string_view world_event_name(WorldEvent::Kind kind) {
  switch (kind) {
    case WorldEvent::Kind::kFault: return "fault";
    case WorldEvent::Kind::kFaultEnded: return "fault-ended";
    case WorldEvent::Kind::kBoot: return "boot";
    case WorldEvent::Kind::kServing: return "serving";
    case WorldEvent::Kind::kBootFailed: return "boot-failed";
    case WorldEvent::Kind::kDown: return "down";
    case WorldEvent::Kind::kPowerLoss: return "power-loss";
    case WorldEvent::Kind::kClockJump: return "clock-jump";
    case WorldEvent::Kind::kHealed: return "healed";
    case WorldEvent::Kind::kPartitionOffline: return "partition-offline";
  }
  SLUICE_UNREACHABLE();
}

OperationDetails& Operation::edit_details() {
  if (!details_) details_ = std::make_unique<OperationDetails>();
  return *details_;
}

uint64_t History::invoke(Operation&& op, Instant now) {
  op.id = ops_.size();
  op.invoked_at = now;
  op.completed = false;
  ops_.push_back(std::move(op));
  return ops_.back().id;
}

Operation& History::invoke_in_place(Instant now) {
  const uint64_t id = ops_.size();
  Operation& op = ops_.emplace_back();
  op.id = id;
  op.invoked_at = now;
  return op;
}

void History::complete(uint64_t id, Instant now) {
  Operation& o = ops_.at(id);
  SLUICE_ASSERT_MSG(!o.completed, "an operation completes once");
  SLUICE_ASSERT(now >= o.invoked_at);
  o.completed_at = now;
  o.completed = true;
}

uint64_t History::digest() const {
  // Each operation, event and effect as a few words, streamed through XXH3: folding word by word with a mix each made
  // a chain of dependent multiplies (a hundred thousand operations at the end of a benchmark run).
  XXH3_state_t state{};  // zeroed first: GCC cannot see that the reset below sets every field it reads
  XXH3_64bits_reset_withSeed(&state, 0x4157'0000'0000ULL);
  // Words go to XXH3 a few kilobytes at a time (the stream's hash does not depend on how it is cut): an update per
  // operation cost more than the hashing.
  constexpr size_t kFlushWords = 512;
  std::vector<uint64_t> words;
  words.reserve(2 * kFlushWords);
  auto flush = [&](bool all) {
    if (words.size() < kFlushWords && !all) return;
    XXH3_64bits_update(&state, words.data(), words.size() * sizeof(uint64_t));
    words.clear();
  };
  auto word = [&words](auto v) { words.push_back(static_cast<uint64_t>(v)); };
  for (const Operation& o : ops_) {
    word(o.id);
    word(static_cast<uint64_t>(o.kind) << 8 | static_cast<uint64_t>(o.outcome));
    word(o.invoked_at.time_since_epoch().count());
    word(o.completed_at.time_since_epoch().count());
    word(static_cast<uint64_t>(o.offset) ^ (static_cast<uint64_t>(o.error_code) << 48));
    word(o.result_offset);
    word(o.records.size());
    for (const RecordView& r : o.records) word(r.value_digest ^ static_cast<uint64_t>(r.offset));
    for (const auto& [tp, offset] : o.details().offsets) {
      word(static_cast<uint64_t>(offset) ^ digest_of(as_bytes(tp.topic)));
    }
    flush(false);
  }
  for (const WorldEvent& e : events_) {
    word(e.kind);
    word(e.at.time_since_epoch().count());
    word(digest_of(as_bytes(e.node)));
    word(digest_of(as_bytes(e.text)));
    flush(false);
  }
  for (const TimedEffect& e : effects_) {
    word(e.effect.kind);
    word(static_cast<uint64_t>(e.effect.from) ^ (static_cast<uint64_t>(e.effect.to) << 20));
    flush(false);
  }
  flush(true);
  return XXH3_64bits_digest(&state);
}

std::string to_json(const Operation& op) {
  JsonObject json;
  json.add("type", "op");
  json.add("id", static_cast<int64_t>(op.id));
  json.add("process", op.process);
  json.add("kind", op_kind_name(op.kind));
  json.add("outcome", op.completed ? client::outcome_name(op.outcome) : "pending");
  json.add("invoked", seconds(op.invoked_at));
  if (op.completed) json.add("completed", seconds(op.completed_at));
  if (!op.tp.topic.empty()) json.add("topic", op.tp.topic);
  if (op.tp.partition >= 0) json.add("partition", static_cast<int64_t>(op.tp.partition));
  if (op.error_code != 0) json.add("error_code", static_cast<int64_t>(op.error_code));
  if (!op.error().empty()) json.add("error", op.error());
  if (op.kind == OpKind::kProduce) {
    json.add("acks", static_cast<int64_t>(op.acks));
    json.add_raw("idempotent", op.idempotent ? "true" : "false");
    json.add("attempts", static_cast<int64_t>(op.attempts));
  }
  if (op.offset >= 0 || op.kind == OpKind::kListOffsets) json.add("offset", op.offset);
  if (op.result_offset >= 0) json.add("result_offset", op.result_offset);
  if (op.high_watermark >= 0) json.add("high_watermark", op.high_watermark);
  if (op.log_start_offset >= 0) json.add("log_start", op.log_start_offset);
  const OperationDetails& details = op.details();
  if (!details.group.empty()) json.add("group", details.group);
  if (!details.member.empty()) json.add("member", details.member);
  if (details.generation >= 0) json.add("generation", static_cast<int64_t>(details.generation));
  if (!details.offsets.empty()) add_offsets(json, details.offsets);
  if (!op.records.empty()) add_records(json, op.records);
  if (!details.config.empty()) {
    JsonObject config;
    for (const auto& [key, value] : details.config) config.add(key, value);
    json.add_raw("config", config.str());
  }
  if (!details.table.empty()) {
    JsonObject table;
    for (const auto& [key, digest] : details.table) table.add(key, fmt::format("{:016x}", digest));
    json.add_raw("table", table.str());
  }
  return json.str();
}

std::string to_json(const WorldEvent& event) {
  JsonObject json;
  json.add("type", "world");
  json.add("kind", world_event_name(event.kind));
  json.add("at", seconds(event.at));
  if (!event.node.empty()) json.add("node", event.node);
  if (!event.text.empty()) json.add("text", event.text);
  if (event.amount_ms != 0) json.add("amount_ms", event.amount_ms);
  return json.str();
}

std::string to_json(const TimedEffect& effect) {
  JsonObject json;
  json.add("type", "effect");
  json.add("at", seconds(effect.at));
  json.add("node", effect.node);
  json.add("effect", storage::to_string(effect.effect));
  return json.str();
}

std::string History::to_json_lines() const {
  std::string out;
  for (const WorldEvent& e : events_) out += to_json(e) + "\n";
  for (const TimedEffect& e : effects_) out += to_json(e) + "\n";
  for (const Operation& o : ops_) out += to_json(o) + "\n";
  return out;
}

std::string describe(const Operation& op) {
  std::string text = fmt::format("op {} {} {} ", op.id, op.process, op_kind_name(op.kind));
  if (!op.tp.topic.empty()) text += op.tp.partition >= 0 ? op.tp.to_string() + " " : op.tp.topic + " ";
  if (op.kind == OpKind::kProduce) text += fmt::format("acks={} ", op.acks == -1 ? "all" : std::to_string(op.acks));
  text += op.completed ? std::string(client::outcome_name(op.outcome)) : "pending";
  text += fmt::format(" at {:.3f}-{:.3f}s", seconds(op.invoked_at), op.completed ? seconds(op.completed_at) : -1.0);
  if (op.kind == OpKind::kProduce && op.outcome == Outcome::kOk && !op.records.empty() && op.records[0].offset >= 0) {
    text += fmt::format(" offset {}", op.records[0].offset);
  }
  if (op.offset >= 0 && op.kind != OpKind::kProduce) text += fmt::format(" from {}", op.offset);
  if (op.error_code != 0) text += fmt::format(" error {}", op.error_code);
  if (!op.error().empty()) text += " (" + op.error() + ")";
  if (!op.records.empty()) text += fmt::format(" [{} records]", op.records.size());
  return text;
}

}  // namespace sluice::sim
