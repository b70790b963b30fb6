#include "core/kafka/broker_config.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <vector>

#include "core/base/assert.h"
#include "core/env/network.h"
#include "core/protocol/error_codes.h"
#include "core/storage/config_def.h"

namespace sluice::kafka {
namespace {

using storage::ConfigRule;
using storage::ConfigType;
using storage::ConfigValue;

struct Key {
  std::string_view name;
  ConfigRule rule;
  void (*store)(BrokerConfig& config, const ConfigValue& value);
};

constexpr ConfigRule int_between(int64_t min, int64_t max) {
  return ConfigRule{.type = ConfigType::kInt, .min = min, .max = max};
}
constexpr ConfigRule kBoolean{.type = ConfigType::kBoolean};
constexpr ConfigRule kString{.type = ConfigType::kString};

int32_t as_int(const ConfigValue& v) { return static_cast<int32_t>(v.integer); }
constexpr ConfigRule long_between(int64_t min, int64_t max) {
  return ConfigRule{.type = ConfigType::kLong, .min = min, .max = max};
}

// Kafka's names. node.id and broker.id are synonyms; listeners and log.dirs are take_server_settings'.
const std::array kKeys = {
    Key{"node.id", int_between(0, INT32_MAX), [](BrokerConfig& c, const ConfigValue& v) { c.node_id = as_int(v); }},
    Key{"broker.id", int_between(0, INT32_MAX), [](BrokerConfig& c, const ConfigValue& v) { c.node_id = as_int(v); }},
    Key{"cluster.id", kString, [](BrokerConfig& c, const ConfigValue& v) { c.cluster_id = v.text; }},
    Key{"auto.create.topics.enable", kBoolean,
        [](BrokerConfig& c, const ConfigValue& v) { c.auto_create_topics_enable = v.boolean; }},
    Key{"num.partitions", int_between(1, INT32_MAX),
        [](BrokerConfig& c, const ConfigValue& v) { c.num_partitions = as_int(v); }},
    Key{"default.replication.factor", int_between(1, INT16_MAX),
        [](BrokerConfig& c, const ConfigValue& v) { c.default_replication_factor = static_cast<int16_t>(v.integer); }},
    Key{"socket.request.max.bytes", int_between(1024, INT32_MAX),
        [](BrokerConfig& c, const ConfigValue& v) { c.socket_request_max_bytes = static_cast<size_t>(v.integer); }},
    Key{"max.connections", int_between(1, INT32_MAX),
        [](BrokerConfig& c, const ConfigValue& v) { c.max_connections = as_int(v); }},
    Key{"fetch.max.bytes", int_between(1024, INT32_MAX),
        [](BrokerConfig& c, const ConfigValue& v) { c.fetch_max_bytes = as_int(v); }},
    Key{"sluice.max.broker.partitions", int_between(1, INT32_MAX),
        [](BrokerConfig& c, const ConfigValue& v) { c.max_broker_partitions = as_int(v); }},
    Key{"auto.leader.rebalance.enable", kBoolean,
        [](BrokerConfig& c, const ConfigValue& v) { c.auto_leader_rebalance_enable = v.boolean; }},
    Key{"leader.imbalance.check.interval.seconds", long_between(1, INT32_MAX),
        [](BrokerConfig& c, const ConfigValue& v) {
          c.leader_imbalance_check_interval = std::chrono::seconds(v.integer);
        }},
    // The group coordinator's (core/group).
    Key{"group.initial.rebalance.delay.ms", int_between(0, INT32_MAX),
        [](BrokerConfig& c, const ConfigValue& v) { c.group.initial_rebalance_delay_ms = as_int(v); }},
    Key{"group.min.session.timeout.ms", int_between(0, INT32_MAX),
        [](BrokerConfig& c, const ConfigValue& v) { c.group.min_session_timeout_ms = as_int(v); }},
    Key{"group.max.session.timeout.ms", int_between(0, INT32_MAX),
        [](BrokerConfig& c, const ConfigValue& v) { c.group.max_session_timeout_ms = as_int(v); }},
    Key{"group.max.size", int_between(1, INT32_MAX),
        [](BrokerConfig& c, const ConfigValue& v) { c.group.max_size = as_int(v); }},
    Key{"offsets.topic.num.partitions", int_between(1, 1000),
        [](BrokerConfig& c, const ConfigValue& v) { c.group.offsets_topic_partitions = as_int(v); }},
    Key{"offsets.topic.replication.factor", int_between(1, INT16_MAX),
        [](BrokerConfig& c, const ConfigValue& v) {
          c.group.offsets_topic_replication_factor = static_cast<int16_t>(v.integer);
        }},
    Key{"offsets.retention.minutes", int_between(1, INT32_MAX),
        [](BrokerConfig& c, const ConfigValue& v) { c.group.offsets_retention_ms = v.integer * 60 * 1000; }},
    Key{"offsets.retention.check.interval.ms", long_between(1, INT64_MAX),
        [](BrokerConfig& c, const ConfigValue& v) { c.group.offsets_retention_check_interval_ms = v.integer; }},
    Key{"offset.metadata.max.bytes", int_between(0, INT32_MAX),
        [](BrokerConfig& c, const ConfigValue& v) { c.group.offset_metadata_max_bytes = as_int(v); }},
    Key{"offsets.topic.segment.bytes", int_between(1, INT32_MAX),
        [](BrokerConfig& c, const ConfigValue& v) { c.group.offsets_topic_segment_bytes = as_int(v); }},
    // Stalled and greedy clients. A negative idle bound never closes (Kafka's -1); the cap keeps deadlines in range.
    Key{"connections.max.idle.ms", long_between(INT64_MIN, int64_t{1'000'000'000'000}),
        [](BrokerConfig& c, const ConfigValue& v) {
          c.connections_max_idle =
              v.integer < 0 ? std::nullopt : std::optional<Duration>(std::chrono::milliseconds(v.integer));
        }},
    Key{"request.timeout.ms", int_between(1, INT32_MAX),
        [](BrokerConfig& c, const ConfigValue& v) { c.request_timeout = std::chrono::milliseconds(v.integer); }},
    Key{"max.connections.per.ip", int_between(0, INT32_MAX),
        [](BrokerConfig& c, const ConfigValue& v) { c.max_connections_per_ip = as_int(v); }},
};

constexpr std::array<std::string_view, 4> kServerKeys = {"listeners", "advertised.listeners", "log.dirs", "log.dir"};
// Storage keys the topic table does not list as broker synonyms, offered as suggestions only when they are (still)
// storage keys.
constexpr std::array<std::string_view, 12> kMoreStorageKeys = {
    "log.retention.minutes",
    "log.retention.hours",
    "log.roll.hours",
    "log.roll.jitter.hours",
    "log.retention.check.interval.ms",
    "log.cleaner.enable",
    "log.cleaner.backoff.ms",
    "log.cleaner.dedupe.buffer.size",
    "log.cleaner.io.buffer.size",
    "log.disk.usage.max.percent",
    "log.disk.pressure.policy",
    "log.flush.scheduler.interval.ms",
};

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// The known key closest to a misspelt one, when it is close enough to be the likely intent.
std::string closest_key(std::string_view name) {
  std::vector<std::string_view> candidates(kServerKeys.begin(), kServerKeys.end());
  for (const Key& key : kKeys) candidates.push_back(key.name);
  candidates.push_back(BrokerConfig::kMutationsKey);
  for (const storage::TopicConfigKey& key : storage::topic_config_keys()) {
    if (!key.broker_synonym.empty()) candidates.push_back(key.broker_synonym);
  }
  for (std::string_view key : kMoreStorageKeys) {
    if (storage::BrokerStorageConfig::is_storage_key(key)) candidates.push_back(key);
  }
  std::string_view best;
  size_t best_distance = 3;  // at most two edits
  for (std::string_view candidate : candidates) {
    const size_t distance = edit_distance(name, candidate);
    if (distance < best_distance) {
      best = candidate;
      best_distance = distance;
    }
  }
  return std::string(best);
}

Status unknown_key(const std::string& name) {
  std::string message = "unknown broker setting " + name;
  if (std::find(kServerKeys.begin(), kServerKeys.end(), name) != kServerKeys.end()) {
    message += " (a setting of the serving process: take_server_settings reads it)";
  } else if (const storage::TopicConfigKey* topic = storage::find_topic_config_key(name); topic != nullptr) {
    message +=
        topic->broker_synonym.empty()
            ? " (a topic setting with no broker default: set it per topic)"
            : fmt::format(" ({} is a topic setting; the broker's default for it is {})", name, topic->broker_synonym);
  } else if (std::string close = closest_key(name); !close.empty()) {
    message += " (did you mean " + close + "?)";
  }
  return kafka_error(ErrorCode::kInvalidConfig, message);
}

const std::string* find(const std::map<std::string, std::string>& settings, std::string_view name) {
  auto it = settings.find(std::string(name));
  return it == settings.end() ? nullptr : &it->second;
}

std::string_view trim(std::string_view s) {
  const size_t begin = s.find_first_not_of(" \t");
  if (begin == std::string_view::npos) return {};
  return s.substr(begin, s.find_last_not_of(" \t") - begin + 1);
}

// "PLAINTEXT://host:port" → "host:port"; `empty_host` stands in for a missing host, or refuses it when empty.
Result<std::string> parse_listener(std::string_view key, std::string_view raw, std::string_view empty_host) {
  constexpr std::string_view kScheme = "PLAINTEXT://";
  const std::string_view value = trim(raw);
  auto invalid = [&](std::string_view why) { return storage::invalid_config(key, value, why); };
  if (value.find(',') != std::string_view::npos) return invalid("Sluice serves exactly one listener");
  if (value.substr(0, kScheme.size()) != kScheme) {
    return invalid("expected PLAINTEXT://host:port (Sluice serves PLAINTEXT only)");
  }
  std::string address(value.substr(kScheme.size()));
  if (!address.empty() && address.front() == ':') {
    if (empty_host.empty()) return invalid("the host is missing; expected PLAINTEXT://host:port");
    address = std::string(empty_host) + address;
  }
  Result<Address> parsed = parse_address(address);
  if (!parsed.ok()) return invalid("expected PLAINTEXT://host:port: " + parsed.status().message());
  return parsed->to_string();
}

Result<std::string> parse_log_dirs(std::string_view key, std::string_view raw) {
  const std::vector<std::string> dirs = storage::split_config_list(raw);
  if (dirs.size() != 1 || dirs.front().empty()) {
    return storage::invalid_config(key, raw, "Sluice stores in exactly one directory");
  }
  return dirs.front();
}

// A string rule without allowed values is free text here (the storage parser reads it as "none allowed"); it
// must not be blank.
Result<ConfigValue> parse_value(const Key& key, const std::string& raw) {
  if (key.rule.type != ConfigType::kString || !key.rule.allowed.empty()) {
    return storage::parse_config_value(key.name, raw, key.rule);
  }
  ConfigValue value;
  value.text = std::string(trim(raw));
  if (value.text.empty()) return storage::invalid_config(key.name, "\"\"", "must not be empty");
  return value;
}

Status check_node_id_synonyms(const std::map<std::string, std::string>& settings, const BrokerConfig& config) {
  const std::string* node_id = find(settings, "node.id");
  const std::string* broker_id = find(settings, "broker.id");
  if (node_id == nullptr || broker_id == nullptr) return Status();
  SLUICE_ASSIGN_OR_RETURN(ConfigValue a, storage::parse_config_value("node.id", *node_id, kKeys[0].rule));
  if (a.integer == config.node_id) return Status();
  return kafka_error(ErrorCode::kInvalidConfig, fmt::format("node.id ({}) and broker.id ({}) are synonyms but differ: "
                                                            "set one of them",
                                                            a.integer, config.node_id));
}

constexpr std::string_view kVotersKey = "controller.quorum.voters";
// A single node holds one copy of everything: default.replication.factor above 1 is refused at start-up, as before
// cluster mode existed.
constexpr ConfigRule kSingleNodeReplicationFactor = int_between(1, 1);

// controller.quorum.voters with node.id: both or neither, and this node among the voters.
Status parse_cluster(const std::map<std::string, std::string>& settings, BrokerConfig& config) {
  const std::string* voters = find(settings, kVotersKey);
  if (voters == nullptr) {
    if (const std::string* rf = find(settings, "default.replication.factor")) {
      SLUICE_TRY(storage::parse_config_value("default.replication.factor", *rf, kSingleNodeReplicationFactor).status());
    }
    return Status();
  }
  SLUICE_ASSIGN_OR_RETURN(config.controller_quorum_voters, parse_quorum_voters(*voters));
  if (find(settings, "node.id") == nullptr && find(settings, "broker.id") == nullptr) {
    return storage::invalid_config(kVotersKey, *voters, "cluster mode needs node.id (this node's id among the voters)");
  }
  if (!config.controller_quorum_voters.contains(config.node_id)) {
    return storage::invalid_config(kVotersKey, *voters,
                                   fmt::format("node.id {} is not one of the voters: every voter is listed, this node "
                                               "included",
                                               config.node_id));
  }
  SLUICE_ASSERT(config.node_id >= 1);
  return Status();
}

// sluice.mutations: comma-separated mutation names.
Result<MutationSet> parse_mutations(const std::map<std::string, std::string>& settings) {
  const std::string* raw = find(settings, BrokerConfig::kMutationsKey);
  if (raw == nullptr) return MutationSet();
  Result<MutationSet> parsed = MutationSet::parse(*raw);
  if (!parsed.ok()) return storage::invalid_config(BrokerConfig::kMutationsKey, *raw, parsed.status().message());
  return parsed;
}

constexpr std::string_view kPerIpOverridesKey = "max.connections.per.ip.overrides";

// max.connections.per.ip.overrides, Kafka's "host:count,..." (split at each entry's last ':', so "::1:5" is host
// ::1), hosts of Kafka's valid host characters; max.connections.per.ip=0 only beside overrides, as Kafka requires.
Status parse_connection_limits(const std::map<std::string, std::string>& settings, BrokerConfig& config) {
  const std::string* raw = find(settings, kPerIpOverridesKey);
  if (raw != nullptr && !trim(*raw).empty()) {
    for (const std::string& item : storage::split_config_list(*raw)) {
      const std::string_view entry = trim(item);
      const size_t colon = entry.rfind(':');
      const std::string host(trim(entry.substr(0, colon == std::string_view::npos ? 0 : colon)));
      const bool valid_host = !host.empty() && std::all_of(host.begin(), host.end(), [](char ch) {
        return std::isalnum(static_cast<unsigned char>(ch)) != 0 ||
               std::string_view("-%._:").find(ch) != std::string_view::npos;
      });
      if (colon == std::string_view::npos || !valid_host) {
        return storage::invalid_config(kPerIpOverridesKey, *raw, fmt::format("entry '{}' is not host:count", entry));
      }
      Result<ConfigValue> count = storage::parse_config_value(
          kPerIpOverridesKey, std::string(trim(entry.substr(colon + 1))), int_between(0, INT32_MAX));
      if (!count.ok()) return count.status();
      config.max_connections_per_ip_overrides[host] = as_int(*count);
    }
  }
  if (config.max_connections_per_ip == 0 && config.max_connections_per_ip_overrides.empty()) {
    return storage::invalid_config("max.connections.per.ip", "0",
                                   fmt::format("0 is allowed only together with {}", kPerIpOverridesKey));
  }
  return Status();
}

}  // namespace

bool BrokerConfig::is_broker_key(std::string_view name) {
  if (name == kMutationsKey || name == kVotersKey || name == kPerIpOverridesKey) return true;
  for (const Key& key : kKeys) {
    if (key.name == name) return true;
  }
  return false;
}

Result<BrokerConfig> BrokerConfig::from_map(const std::map<std::string, std::string>& settings) {
  BrokerConfig config;
  for (const auto& [name, raw] : settings) {
    if (!is_broker_key(name) && !storage::BrokerStorageConfig::is_storage_key(name)) return unknown_key(name);
  }
  for (const Key& key : kKeys) {
    const std::string* raw = find(settings, key.name);
    if (raw == nullptr) continue;
    SLUICE_ASSIGN_OR_RETURN(ConfigValue value, parse_value(key, *raw));
    key.store(config, value);
  }
  SLUICE_TRY(check_node_id_synonyms(settings, config));
  SLUICE_TRY(parse_cluster(settings, config));
  SLUICE_TRY(parse_connection_limits(settings, config));
  SLUICE_ASSIGN_OR_RETURN(config.storage, storage::BrokerStorageConfig::from_map(settings));
  SLUICE_ASSIGN_OR_RETURN(config.mutations, parse_mutations(settings));
  config.storage.mutations = config.mutations;
  config.group.mutations = config.mutations;
  return config;
}

Result<std::map<int32_t, Address>> parse_quorum_voters(std::string_view text) {
  std::map<int32_t, Address> voters;
  auto invalid = [&](std::string_view why) { return storage::invalid_config(kVotersKey, text, why); };
  for (const std::string& raw : storage::split_config_list(text)) {
    const std::string_view entry = trim(raw);
    const size_t at = entry.find('@');
    if (at == std::string_view::npos || at == 0) {
      return invalid(fmt::format("entry '{}' is not id@host:port", entry));
    }
    const std::string_view digits = entry.substr(0, at);
    int64_t id = 0;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), id);
    if (ec != std::errc() || end != digits.data() + digits.size()) {
      return invalid(fmt::format("entry '{}': '{}' is not a node id", entry, digits));
    }
    if (id < 1 || id > INT32_MAX) return invalid(fmt::format("entry '{}': node ids are 1 to {}", entry, INT32_MAX));
    Result<Address> address = parse_address(entry.substr(at + 1));
    if (!address.ok()) return invalid(fmt::format("entry '{}': {}", entry, address.status().message()));
    if (address->port == 0) return invalid(fmt::format("entry '{}': the raft port must not be 0", entry));
    if (!voters.emplace(static_cast<int32_t>(id), *address).second) {
      return invalid(fmt::format("node id {} is given twice", id));
    }
  }
  if (voters.empty()) return invalid("no voters: expected id@host:port,...");
  return voters;
}

Result<ServerSettings> take_server_settings(std::map<std::string, std::string>& settings) {
  ServerSettings server;
  if (const std::string* raw = find(settings, "listeners")) {
    SLUICE_ASSIGN_OR_RETURN(server.listen, parse_listener("listeners", *raw, "0.0.0.0"));
  }
  if (const std::string* raw = find(settings, "advertised.listeners")) {
    SLUICE_ASSIGN_OR_RETURN(server.advertised, parse_listener("advertised.listeners", *raw, ""));
  }
  // log.dirs wins over log.dir, as in Kafka.
  for (std::string_view key : {"log.dir", "log.dirs"}) {
    if (const std::string* raw = find(settings, key)) {
      SLUICE_ASSIGN_OR_RETURN(server.data_dir, parse_log_dirs(key, *raw));
    }
  }
  for (std::string_view key : kServerKeys) settings.erase(std::string(key));
  return server;
}

}  // namespace sluice::kafka
