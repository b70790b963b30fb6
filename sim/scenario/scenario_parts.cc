#include "sim/scenario/scenario_parts.h"

#include <fmt/format.h>

#include "core/base/assert.h"
#include "sim/world/sim_clock.h"

namespace sluice::sim {
namespace {

using namespace std::chrono_literals;

Result<int16_t> parse_acks(TomlReader& t) {
  if (!t.has("acks")) return int16_t{-1};
  Result<std::string> text = t.string("acks", "");
  if (text.ok()) {
    if (*text == "all" || *text == "-1") return int16_t{-1};
    if (*text == "1") return int16_t{1};
    if (*text == "0") return int16_t{0};
    return invalid_argument(t.where() + ": acks must be \"all\", 1 or 0");
  }
  SLUICE_ASSIGN_OR_RETURN(int64_t n, t.integer("acks"));
  if (n != -1 && n != 0 && n != 1) return invalid_argument(t.where() + ": acks must be \"all\", 1 or 0");
  return static_cast<int16_t>(n);
}

Result<storage::Compression> parse_compression(const std::string& name, const std::string& where) {
  if (name == "none") return storage::Compression::kNone;
  if (name == "gzip") return storage::Compression::kGzip;
  if (name == "snappy") return storage::Compression::kSnappy;
  if (name == "lz4") return storage::Compression::kLz4;
  if (name == "zstd") return storage::Compression::kZstd;
  return invalid_argument(where + ": compression must be none, gzip, snappy, lz4 or zstd");
}

std::string_view compression_name(storage::Compression c) {
  switch (c) {
    case storage::Compression::kNone: return "none";
    case storage::Compression::kGzip: return "gzip";
    case storage::Compression::kSnappy: return "snappy";
    case storage::Compression::kLz4: return "lz4";
    case storage::Compression::kZstd: return "zstd";
  }
  SLUICE_UNREACHABLE();
}

Status parse_producer(TomlReader& t, ProducerSpec& p) {
  SLUICE_ASSIGN_OR_RETURN(p.topic, t.string("topic"));
  SLUICE_ASSIGN_OR_RETURN(p.acks, parse_acks(t));
  SLUICE_ASSIGN_OR_RETURN(p.idempotent, t.boolean("idempotent", false));
  SLUICE_ASSIGN_OR_RETURN(p.keyed, t.boolean("keyed", true));
  SLUICE_ASSIGN_OR_RETURN(int64_t key_space, t.integer("key_space", 50));
  p.key_space = static_cast<int>(key_space);
  SLUICE_ASSIGN_OR_RETURN(p.tombstone_ratio, t.number("tombstone_ratio", 0.0));
  SLUICE_ASSIGN_OR_RETURN(std::string compression, t.string("compression", "none"));
  SLUICE_ASSIGN_OR_RETURN(p.compression, parse_compression(compression, t.where()));
  SLUICE_ASSIGN_OR_RETURN(p.rate, t.number("rate", 50.0));
  SLUICE_ASSIGN_OR_RETURN(int64_t batch, t.integer("batch_records", 1));
  p.batch_records = static_cast<int>(batch);
  SLUICE_ASSIGN_OR_RETURN(int64_t value_bytes, t.integer("value_bytes", 64));
  p.value_bytes = static_cast<int>(value_bytes);
  SLUICE_ASSIGN_OR_RETURN(int64_t in_flight, t.integer("max_in_flight", 5));
  p.max_in_flight = static_cast<int>(in_flight);
  SLUICE_ASSIGN_OR_RETURN(int64_t outstanding, t.integer("max_outstanding", 50));
  p.max_outstanding = static_cast<int>(outstanding);
  SLUICE_ASSIGN_OR_RETURN(p.delivery_timeout, t.duration("delivery_timeout", 20s));
  SLUICE_ASSIGN_OR_RETURN(std::string via, t.string("via", ""));
  if (!via.empty()) {
    const bool named = via.size() == 2 && via[0] == 'n' && via[1] >= '1' && via[1] <= '9';
    if (!named) return invalid_argument(t.where() + ": via must name a broker node, \"n1\" .. \"n9\"");
    p.via_node = via[1] - '0';
  }
  if (p.idempotent && p.acks != -1) return invalid_argument(t.where() + ": an idempotent producer needs acks=all");
  if (p.rate <= 0 || p.batch_records < 1 || p.key_space < 1 || p.value_bytes < 16 || p.max_in_flight < 1) {
    return invalid_argument(t.where() + ": rate, batch_records, key_space, max_in_flight must be positive and "
                                        "value_bytes at least 16");
  }
  return Status::ok_status();
}

Status parse_group(TomlReader& t, GroupSpec& g) {
  SLUICE_ASSIGN_OR_RETURN(g.group, t.string("group"));
  SLUICE_ASSIGN_OR_RETURN(g.topics, t.strings("topics"));
  SLUICE_ASSIGN_OR_RETURN(int64_t members, t.integer("members", 2));
  g.members = static_cast<int>(members);
  SLUICE_ASSIGN_OR_RETURN(g.commit_interval, t.duration("commit_interval", 1s));
  SLUICE_ASSIGN_OR_RETURN(g.session_timeout, t.duration("session_timeout", 10s));
  SLUICE_ASSIGN_OR_RETURN(g.heartbeat_interval, t.duration("heartbeat_interval", 1s));
  SLUICE_ASSIGN_OR_RETURN(g.rebalance_timeout, t.duration("rebalance_timeout", 10s));
  if (g.members < 1 || g.topics.empty()) return invalid_argument(t.where() + ": a group needs members and topics");
  return Status::ok_status();
}

Result<OpKind> parse_action_kind(const std::string& kind, const std::string& where) {
  if (kind == "alter-config") return OpKind::kAlterConfig;
  if (kind == "delete-records") return OpKind::kDeleteRecords;
  if (kind == "create-topic") return OpKind::kCreateTopic;
  if (kind == "delete-topic") return OpKind::kDeleteTopic;
  return invalid_argument(where + ": kind must be alter-config, delete-records, create-topic or delete-topic");
}

Status parse_admin(TomlReader& t, std::vector<AdminAction>& actions) {
  SLUICE_ASSIGN_OR_RETURN(std::vector<const toml::table*> tables, t.tables("actions"));
  for (size_t i = 0; i < tables.size(); ++i) {
    TomlReader a(*tables[i], fmt::format("{}.actions[{}]", t.where(), i));
    AdminAction action;
    SLUICE_ASSIGN_OR_RETURN(action.at, a.duration("at"));
    SLUICE_ASSIGN_OR_RETURN(std::string kind, a.string("kind"));
    SLUICE_ASSIGN_OR_RETURN(action.kind, parse_action_kind(kind, a.where()));
    SLUICE_ASSIGN_OR_RETURN(action.topic, a.string("topic"));
    SLUICE_ASSIGN_OR_RETURN(int64_t partition, a.integer("partition", 0));
    action.partition = static_cast<int32_t>(partition);
    SLUICE_ASSIGN_OR_RETURN(action.fraction, a.number("fraction", 0.5));
    SLUICE_ASSIGN_OR_RETURN(int64_t partitions, a.integer("partitions", 1));
    action.partitions = static_cast<int32_t>(partitions);
    SLUICE_ASSIGN_OR_RETURN(action.config, a.string_map("config"));
    SLUICE_TRY(a.finish());
    actions.push_back(std::move(action));
  }
  std::stable_sort(actions.begin(), actions.end(), [](const AdminAction& x, const AdminAction& y) {
    return x.at < y.at;
  });
  return Status::ok_status();
}

Result<WorkloadSpec::Kind> parse_workload_kind(std::string_view kind, const std::string& where) {
  if (kind == "producer") return WorkloadSpec::Kind::kProducer;
  if (kind == "consumer") return WorkloadSpec::Kind::kConsumer;
  if (kind == "group") return WorkloadSpec::Kind::kGroup;
  if (kind == "table") return WorkloadSpec::Kind::kTable;
  if (kind == "admin") return WorkloadSpec::Kind::kAdmin;
  return invalid_argument(where + ": kind must be producer, consumer, group, table or admin");
}

}  // namespace

Result<WorkloadSpec> parse_workload(TomlReader& t, size_t index) {
  WorkloadSpec spec;
  SLUICE_ASSIGN_OR_RETURN(std::string kind, t.string("kind"));
  SLUICE_ASSIGN_OR_RETURN(spec.kind, parse_workload_kind(kind, t.where()));
  SLUICE_ASSIGN_OR_RETURN(spec.name, t.string("name", fmt::format("{}-{}", kind, index + 1)));
  switch (spec.kind) {
    case WorkloadSpec::Kind::kProducer: SLUICE_TRY(parse_producer(t, spec.producer)); break;
    case WorkloadSpec::Kind::kConsumer: {
      SLUICE_ASSIGN_OR_RETURN(spec.consumer.topic, t.string("topic"));
      SLUICE_ASSIGN_OR_RETURN(spec.consumer.max_wait, t.duration("max_wait", 200ms));
      break;
    }
    case WorkloadSpec::Kind::kGroup: SLUICE_TRY(parse_group(t, spec.group)); break;
    case WorkloadSpec::Kind::kTable: {
      SLUICE_ASSIGN_OR_RETURN(spec.table.topic, t.string("topic"));
      SLUICE_ASSIGN_OR_RETURN(spec.table.cold_start_every, t.duration("cold_start_every", 10s));
      break;
    }
    case WorkloadSpec::Kind::kAdmin: SLUICE_TRY(parse_admin(t, spec.actions)); break;
  }
  SLUICE_TRY(t.finish());
  return spec;
}

Status validate_workload(const WorkloadSpec& spec, const std::set<std::string>& topics) {
  std::vector<std::string> used;
  if (spec.kind == WorkloadSpec::Kind::kProducer) used.push_back(spec.producer.topic);
  if (spec.kind == WorkloadSpec::Kind::kConsumer) used.push_back(spec.consumer.topic);
  if (spec.kind == WorkloadSpec::Kind::kTable) used.push_back(spec.table.topic);
  if (spec.kind == WorkloadSpec::Kind::kGroup) used = spec.group.topics;
  for (const std::string& topic : used) {
    if (topics.count(topic) == 0) {
      return invalid_argument(fmt::format("workload '{}' uses topic '{}', which [[topics]] does not declare",
                                          spec.name, topic));
    }
  }
  return Status::ok_status();
}

namespace {

// The amounts of the disk and swizzle kinds: milliseconds of at least 1 (at most an hour), a count of nodes.
Status check_new_fault_amount(FaultKind kind, int64_t min, int64_t max, const std::string& where) {
  constexpr int64_t kHourMs = 3'600'000;
  if ((kind == FaultKind::kSlowDisk || kind == FaultKind::kStalledFsync) && (min < 1 || max > kHourMs)) {
    return invalid_argument(fmt::format("{}: a {}'s amount (milliseconds) must be between 1 and {}", where,
                                        fault_kind_name(kind), kHourMs));
  }
  if (kind == FaultKind::kReadCorruption && min < 1) {
    return invalid_argument(where + ": a read-corruption's amount (how many reads come back damaged) must be at "
                                    "least 1");
  }
  if (kind == FaultKind::kTimerJitter && (min < 1 || max > 60'000)) {
    return invalid_argument(where + ": a timer-jitter's amount (milliseconds a timer may fire late) must be between 1 "
                                    "and 60000");
  }
  if (kind == FaultKind::kSwizzleClog && min < 0) {
    return invalid_argument(where + ": a swizzle-clog's amount (how many brokers; 0: half) must not be negative");
  }
  return Status::ok_status();
}

}  // namespace

Result<Fault> parse_fault(TomlReader& t) {
  Fault fault;
  SLUICE_ASSIGN_OR_RETURN(std::string kind, t.string("kind"));
  const std::optional<FaultKind> parsed = parse_fault_kind(kind);
  if (!parsed) {
    std::string names;
    for (size_t i = 0; i < kFaultKinds; ++i) {
      const std::string_view name = fault_kind_name(static_cast<FaultKind>(i));
      if (!name.empty()) names += (names.empty() ? "" : ", ") + std::string(name);
    }
    return invalid_argument(fmt::format("{}: kind '{}' is not one of {}", t.where(), kind, names));
  }
  fault.kind = *parsed;
  SLUICE_ASSIGN_OR_RETURN(fault.at, t.duration("at"));
  SLUICE_ASSIGN_OR_RETURN(fault.node, t.string("node", "n1"));
  SLUICE_ASSIGN_OR_RETURN(fault.peer, t.string("peer", ""));
  SLUICE_ASSIGN_OR_RETURN(fault.length, t.duration("length", default_fault_length(fault.kind)));
  SLUICE_ASSIGN_OR_RETURN(fault.amount, t.integer("amount", default_fault_amount(fault.kind)));
  SLUICE_ASSIGN_OR_RETURN(fault.op, t.string("op", default_fault_op(fault.kind)));
  SLUICE_ASSIGN_OR_RETURN(fault.path, t.string("path", ""));
  SLUICE_TRY(t.finish());
  if (fault.kind == FaultKind::kCrashAtDiskOp && fault.amount < 1) {
    return invalid_argument(t.where() + ": amount (which matching operation the process dies at) must be at least 1");
  }
  if (fault.kind == FaultKind::kClockSkew && fault.amount < SimClock::kMinDriftPerThousand) {
    return invalid_argument(t.where() + ": a clock-skew's amount (parts per thousand) must be at least -900");
  }
  if (fault.length < 0s || fault.at < 0s) return invalid_argument(t.where() + ": at and length must not be negative");
  SLUICE_TRY(check_new_fault_amount(fault.kind, fault.amount, fault.amount, t.where()));

  if (!default_fault_op(fault.kind).empty() && fault.op != "read" && fault.op != "write" && fault.op != "sync" &&
      fault.op != "metadata") {
    return invalid_argument(t.where() + ": op must be read, write, sync or metadata");
  }
  return fault;
}

Result<FaultRate> parse_fault_rate(TomlReader& t) {
  FaultRate rate;
  SLUICE_ASSIGN_OR_RETURN(std::string kind, t.string("kind"));
  const std::optional<FaultKind> parsed = parse_fault_kind(kind);
  if (!parsed || *parsed == FaultKind::kCorruptSegment) {
    return invalid_argument(t.where() + ": kind '" + kind + "' cannot be drawn at a rate (corrupt-segment is "
                                                            "scheduled only, in scenarios expecting a refusal)");
  }
  rate.kind = *parsed;
  SLUICE_ASSIGN_OR_RETURN(rate.per_minute, t.number("per_minute"));
  SLUICE_ASSIGN_OR_RETURN(rate.length_min, t.duration("length_min", 200ms));
  SLUICE_ASSIGN_OR_RETURN(rate.length_max, t.duration("length_max", 3s));
  SLUICE_ASSIGN_OR_RETURN(rate.amount_min, t.integer("amount_min", 0));
  SLUICE_ASSIGN_OR_RETURN(rate.amount_max, t.integer("amount_max", 0));
  SLUICE_TRY(t.finish());
  if (rate.per_minute < 0 || rate.length_min > rate.length_max || rate.amount_min > rate.amount_max) {
    return invalid_argument(t.where() + ": per_minute must not be negative, and each min at most its max");
  }
  if (rate.kind == FaultKind::kClockSkew && rate.amount_min < SimClock::kMinDriftPerThousand) {
    return invalid_argument(t.where() + ": a clock-skew's amount_min (parts per thousand) must be at least -900");
  }
  // Drawn amounts of 0 mean the kind's default (draw_schedule); only a range that reaches below 1 ms is wrong.
  if (rate.amount_max != 0 || rate.amount_min != 0) {
    SLUICE_TRY(check_new_fault_amount(rate.kind, rate.amount_min, rate.amount_max, t.where()));
  }
  return rate;
}

std::string workload_to_toml(const WorkloadSpec& w) {
  std::string text = fmt::format("[[workloads]]\nkind = \"{}\"\nname = \"{}\"\n", workload_kind_name(w.kind), w.name);
  switch (w.kind) {
    case WorkloadSpec::Kind::kProducer: {
      const ProducerSpec& p = w.producer;
      text += fmt::format(
          "topic = \"{}\"\nacks = \"{}\"\nidempotent = {}\nkeyed = {}\nkey_space = {}\ntombstone_ratio = {}\n"
          "compression = \"{}\"\nrate = {}\nbatch_records = {}\nvalue_bytes = {}\nmax_in_flight = {}\n"
          "max_outstanding = {}\ndelivery_timeout = \"{}\"\n",
          p.topic, p.acks == -1 ? "all" : std::to_string(p.acks), p.idempotent, p.keyed, p.key_space,
          p.tombstone_ratio, compression_name(p.compression), p.rate, p.batch_records, p.value_bytes,
          p.max_in_flight, p.max_outstanding, format_duration(p.delivery_timeout));
      if (p.via_node >= 0) text += fmt::format("via = \"n{}\"\n", p.via_node);
      break;
    }
    case WorkloadSpec::Kind::kConsumer:
      text += fmt::format("topic = \"{}\"\nmax_wait = \"{}\"\n", w.consumer.topic,
                          format_duration(w.consumer.max_wait));
      break;
    case WorkloadSpec::Kind::kGroup: {
      const GroupSpec& g = w.group;
      std::string topics;
      for (const std::string& t : g.topics) topics += (topics.empty() ? "\"" : ", \"") + t + "\"";
      text += fmt::format(
          "group = \"{}\"\ntopics = [{}]\nmembers = {}\ncommit_interval = \"{}\"\nsession_timeout = \"{}\"\n"
          "heartbeat_interval = \"{}\"\nrebalance_timeout = \"{}\"\n",
          g.group, topics, g.members, format_duration(g.commit_interval), format_duration(g.session_timeout),
          format_duration(g.heartbeat_interval), format_duration(g.rebalance_timeout));
      break;
    }
    case WorkloadSpec::Kind::kTable:
      text += fmt::format("topic = \"{}\"\ncold_start_every = \"{}\"\n", w.table.topic,
                          format_duration(w.table.cold_start_every));
      break;
    case WorkloadSpec::Kind::kAdmin: text += admin_actions_to_toml(w.actions); break;
  }
  return text;
}

std::string admin_actions_to_toml(const std::vector<AdminAction>& actions) {
  std::string text = "actions = [\n";
  for (const AdminAction& a : actions) {
    text += fmt::format("  {{ at = \"{}\", kind = \"{}\", topic = \"{}\"", format_duration(a.at), op_kind_name(a.kind),
                        a.topic);
    if (a.kind == OpKind::kDeleteRecords) {
      text += fmt::format(", partition = {}, fraction = {}", a.partition, a.fraction);
    }
    if (a.kind == OpKind::kCreateTopic) text += fmt::format(", partitions = {}", a.partitions);
    if (!a.config.empty()) {
      std::string config;
      for (const auto& [k, v] : a.config) config += fmt::format("{}\"{}\" = \"{}\"", config.empty() ? "" : ", ", k, v);
      text += ", config = { " + config + " }";
    }
    text += " },\n";
  }
  return text + "]\n";
}

std::string fault_rate_to_toml(const FaultRate& r) {
  return fmt::format("{{ kind = \"{}\", per_minute = {}, length_min = \"{}\", length_max = \"{}\", amount_min = {}, "
                     "amount_max = {} }}",
                     fault_kind_name(r.kind), r.per_minute, format_duration(r.length_min),
                     format_duration(r.length_max), r.amount_min, r.amount_max);
}

}  // namespace sluice::sim
