// The broker's Kafka-named settings: defaults, every broker key, storage keys passed through, synonyms and their
// precedence, unknown keys (with a suggestion) and bad values, and the serving keys (listeners, log.dirs).
#include "core/kafka/broker_config.h"

#include <gtest/gtest.h>

#include "core/protocol/error_codes.h"

namespace sluice::kafka {
namespace {

using Settings = std::map<std::string, std::string>;

BrokerConfig parse_ok(const Settings& settings) {
  Result<BrokerConfig> config = BrokerConfig::from_map(settings);
  EXPECT_TRUE(config.ok()) << config.status().to_string();
  return config.ok() ? *config : BrokerConfig{};
}

// "ok", or the message of an INVALID_CONFIG error.
template <typename T>
std::string message_of(const Result<T>& result) {
  if (result.ok()) return "ok";
  EXPECT_EQ(to_error_code(result.status()), ErrorCode::kInvalidConfig) << result.status().to_string();
  return result.status().message();
}

std::string error_of(const Settings& settings) { return message_of(BrokerConfig::from_map(settings)); }

TEST(BrokerConfig, DefaultsAreASingleNode) {
  const BrokerConfig c = parse_ok({});
  EXPECT_EQ(c.node_id, 1);
  EXPECT_EQ(c.cluster_id, "sluice-cluster");
  EXPECT_TRUE(c.auto_create_topics_enable);
  EXPECT_EQ(c.num_partitions, 1);
  EXPECT_EQ(c.default_replication_factor, 1);
  EXPECT_EQ(c.socket_request_max_bytes, size_t{100 * 1024 * 1024});
  EXPECT_EQ(c.max_connections, INT32_MAX);
  EXPECT_EQ(c.storage.log_retention_check_interval_ms, 5000);
}

TEST(BrokerConfig, EveryBrokerKey) {
  const BrokerConfig c = parse_ok({{"node.id", "7"},
                                   {"cluster.id", "prod-1"},
                                   {"auto.create.topics.enable", "FALSE"},
                                   {"num.partitions", " 6 "},
                                   {"default.replication.factor", "1"},
                                   {"socket.request.max.bytes", "1048576"},
                                   {"max.connections", "50"}});
  EXPECT_EQ(c.node_id, 7);
  EXPECT_EQ(c.cluster_id, "prod-1");
  EXPECT_FALSE(c.auto_create_topics_enable);
  EXPECT_EQ(c.num_partitions, 6);
  EXPECT_EQ(c.socket_request_max_bytes, size_t{1048576});
  EXPECT_EQ(c.max_connections, 50);
}

// Kafka's socket-server bounds (SocketServerConfigs) and request.timeout.ms, with Kafka's defaults and parsing.
TEST(BrokerConfig, ConnectionBoundsHaveKafkasNamesDefaultsAndRules) {
  const BrokerConfig d = parse_ok({});
  EXPECT_EQ(d.connections_max_idle, std::optional<Duration>(std::chrono::milliseconds(600000)));
  EXPECT_EQ(d.request_timeout, std::chrono::milliseconds(30000));
  EXPECT_EQ(d.max_connections_per_ip, INT32_MAX);
  EXPECT_TRUE(d.max_connections_per_ip_overrides.empty());
  EXPECT_EQ(d.max_connections_for("10.0.0.1"), INT32_MAX);

  const BrokerConfig c = parse_ok({{"connections.max.idle.ms", "1500"},
                                   {"request.timeout.ms", "5000"},
                                   {"max.connections.per.ip", "10"},
                                   {"max.connections.per.ip.overrides", "hostName:100, 127.0.0.1:200,::1:5"}});
  EXPECT_EQ(c.connections_max_idle, std::optional<Duration>(std::chrono::milliseconds(1500)));
  EXPECT_EQ(c.request_timeout, std::chrono::milliseconds(5000));
  EXPECT_EQ(c.max_connections_for("10.0.0.1"), 10);
  EXPECT_EQ(c.max_connections_for("127.0.0.1"), 200);
  EXPECT_EQ(c.max_connections_for("hostName"), 100);
  EXPECT_EQ(c.max_connections_for("::1"), 5);  // split at the last ':', as Kafka's parseCsvMap
  EXPECT_EQ(parse_ok({{"connections.max.idle.ms", "-1"}}).connections_max_idle, std::nullopt);
  EXPECT_TRUE(parse_ok({{"max.connections.per.ip.overrides", ""}}).max_connections_per_ip_overrides.empty());
  // 0 only with overrides (KafkaConfig's validateValues).
  EXPECT_NE(error_of({{"max.connections.per.ip", "0"}}).find("max.connections.per.ip.overrides"), std::string::npos);
  EXPECT_EQ(
      parse_ok({{"max.connections.per.ip", "0"}, {"max.connections.per.ip.overrides", "a:1"}}).max_connections_for("b"),
      0);
  for (const char* bad : {"127.0.0.1", "bad host:3", ":4", "h:-1", "h:many", "a:1,,b:2"}) {
    EXPECT_NE(error_of({{"max.connections.per.ip.overrides", bad}}).find("max.connections.per.ip.overrides"),
              std::string::npos)
        << bad;
  }
  EXPECT_NE(error_of({{"request.timeout.ms", "0"}}), "ok");
  EXPECT_NE(error_of({{"max.connections.per.ip", "-1"}}), "ok");
}

// sluice.mutations: planted bugs for the simulator (core/base/mutations.h), handed to storage and groups too.
TEST(BrokerConfig, MutationsAreNamedAndReachStorageAndGroups) {
  EXPECT_TRUE(parse_ok({}).mutations.empty());
  const BrokerConfig c = parse_ok({{"sluice.mutations", "commit-wrong-partition, skip-persisted-fsync"}});
  EXPECT_EQ(c.mutations.to_string(), "skip-persisted-fsync,commit-wrong-partition");
  EXPECT_EQ(c.storage.mutations, c.mutations);
  EXPECT_EQ(c.group.mutations, c.mutations);
  EXPECT_TRUE(parse_ok({{"sluice.mutations", ""}}).mutations.empty());
  const std::string refused = error_of({{"sluice.mutations", "ack-before-append,lose-everything"}});
  EXPECT_NE(refused.find("sluice.mutations"), std::string::npos) << refused;
  EXPECT_NE(refused.find("unknown mutation 'lose-everything'"), std::string::npos) << refused;
  EXPECT_NE(refused.find("tombstone-before-horizon"), std::string::npos) << "the valid names: " << refused;
  EXPECT_NE(error_of({{"sluice.mutation", "x"}}).find("did you mean sluice.mutations?"), std::string::npos);
}

TEST(BrokerConfig, GroupMaxSizeIsUnboundedByDefaultAndAtLeastOne) {
  EXPECT_EQ(parse_ok({}).group.max_size, INT32_MAX);
  EXPECT_EQ(parse_ok({{"group.max.size", "3"}}).group.max_size, 3);
  EXPECT_NE(error_of({{"group.max.size", "0"}}), "ok");
  EXPECT_NE(error_of({{"group.max.size", "many"}}), "ok");
}

TEST(BrokerConfig, StorageKeysReachTheStorageConfig) {
  const BrokerConfig c = parse_ok({{"log.retention.hours", "2"},
                                   {"log.retention.bytes", "1000000"},
                                   {"log.segment.bytes", "1048576"},
                                   {"log.roll.hours", "3"},
                                   {"log.cleaner.enable", "false"},
                                   {"log.retention.check.interval.ms", "250"}});
  EXPECT_EQ(c.storage.topic_defaults.retention_ms, 2 * 3600 * 1000);
  EXPECT_EQ(c.storage.topic_defaults.retention_bytes, 1000000);
  EXPECT_EQ(c.storage.topic_defaults.segment_bytes, 1048576);
  EXPECT_EQ(c.storage.topic_defaults.segment_ms, 3 * 3600 * 1000);
  EXPECT_FALSE(c.storage.log_cleaner_enable);
  EXPECT_EQ(c.storage.log_retention_check_interval_ms, 250);
}

TEST(BrokerConfig, SynonymsAndTheirPrecedence) {
  EXPECT_EQ(parse_ok({{"broker.id", "4"}}).node_id, 4);
  EXPECT_EQ(parse_ok({{"node.id", "4"}, {"broker.id", "4"}}).node_id, 4);
  EXPECT_EQ(error_of({{"node.id", "4"}, {"broker.id", "5"}}),
            "node.id (4) and broker.id (5) are synonyms but differ: set one of them");
  // The finest unit wins, as in Kafka: log.retention.ms over .minutes over .hours; log.roll.ms over .hours.
  const BrokerConfig c = parse_ok({{"log.retention.ms", "5000"},
                                   {"log.retention.minutes", "3"},
                                   {"log.retention.hours", "1"},
                                   {"log.roll.ms", "60000"},
                                   {"log.roll.hours", "9"}});
  EXPECT_EQ(c.storage.topic_defaults.retention_ms, 5000);
  EXPECT_EQ(c.storage.topic_defaults.segment_ms, 60000);
  EXPECT_EQ(
      parse_ok({{"log.retention.minutes", "3"}, {"log.retention.hours", "1"}}).storage.topic_defaults.retention_ms,
      180000);
}

TEST(BrokerConfig, UnknownKeysAreNamedWithAHint) {
  EXPECT_EQ(error_of({{"num.partition", "3"}}), "unknown broker setting num.partition (did you mean num.partitions?)");
  EXPECT_EQ(error_of({{"log.retention.hour", "3"}}),
            "unknown broker setting log.retention.hour (did you mean log.retention.hours?)");
  EXPECT_EQ(error_of({{"retention.ms", "3"}}),
            "unknown broker setting retention.ms (retention.ms is a topic setting; the broker's default for it is "
            "log.retention.ms)");
  EXPECT_EQ(error_of({{"process.roles", "broker"}}), "unknown broker setting process.roles");
  // The serving keys are take_server_settings'; from_map alone does not know them.
  EXPECT_EQ(error_of({{"listeners", "PLAINTEXT://h:1"}}),
            "unknown broker setting listeners (a setting of the serving process: take_server_settings reads it)");
}

TEST(BrokerConfig, BadValuesNameTheKeyAndWhatItAccepts) {
  EXPECT_EQ(error_of({{"num.partitions", "0"}}),
            "Invalid value 0 for configuration num.partitions: Value must be at least 1");
  EXPECT_EQ(error_of({{"num.partitions", "three"}}),
            "Invalid value three for configuration num.partitions: Not a number of type INT, valid values: "
            "[1,...,2147483647]");
  EXPECT_EQ(error_of({{"auto.create.topics.enable", "yes"}}),
            "Invalid value yes for configuration auto.create.topics.enable: Expected value to be either true or false");
  EXPECT_EQ(error_of({{"default.replication.factor", "3"}}),
            "Invalid value 3 for configuration default.replication.factor: Value must be no more than 1");
  EXPECT_EQ(error_of({{"socket.request.max.bytes", "10"}}),
            "Invalid value 10 for configuration socket.request.max.bytes: Value must be at least 1024");
  EXPECT_EQ(error_of({{"cluster.id", "  "}}), "Invalid value \"\" for configuration cluster.id: must not be empty");
  EXPECT_NE(error_of({{"log.retention.hours", "x"}}).find("log.retention.hours"), std::string::npos);
}

Result<ServerSettings> server_of(Settings& settings) { return take_server_settings(settings); }

TEST(ServerSettings, ListenersAdvertisedListenersAndLogDirs) {
  Settings settings = {{"listeners", " PLAINTEXT://127.0.0.1:9093 "},
                       {"advertised.listeners", "PLAINTEXT://[::1]:19093"},
                       {"log.dirs", "/var/lib/sluice"},
                       {"log.dir", "/tmp/ignored"},
                       {"num.partitions", "2"}};
  Result<ServerSettings> server = server_of(settings);
  ASSERT_TRUE(server.ok()) << server.status().to_string();
  EXPECT_EQ(server->listen, "127.0.0.1:9093");
  EXPECT_EQ(server->advertised, "[::1]:19093");
  EXPECT_EQ(server->data_dir, "/var/lib/sluice");            // log.dirs wins over log.dir
  EXPECT_EQ(settings, (Settings{{"num.partitions", "2"}}));  // the rest is the broker's
  EXPECT_TRUE(BrokerConfig::from_map(settings).ok());

  Settings only_log_dir = {{"log.dir", "/d"}, {"listeners", "PLAINTEXT://:9092"}};
  Result<ServerSettings> second = server_of(only_log_dir);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->data_dir, "/d");
  EXPECT_EQ(second->listen, "0.0.0.0:9092");  // an empty host binds every interface
  EXPECT_EQ(second->advertised, std::nullopt);

  Settings none;
  Result<ServerSettings> third = server_of(none);
  ASSERT_TRUE(third.ok());
  EXPECT_FALSE(third->listen || third->advertised || third->data_dir);
}

std::string server_error(Settings settings) { return message_of(take_server_settings(settings)); }

TEST(ServerSettings, RefusesWhatSluiceDoesNotServe) {
  EXPECT_EQ(server_error({{"listeners", "SSL://h:9093"}}),
            "Invalid value SSL://h:9093 for configuration listeners: expected PLAINTEXT://host:port (Sluice serves "
            "PLAINTEXT only)");
  EXPECT_EQ(server_error({{"listeners", "PLAINTEXT://:9092,CONTROLLER://:9093"}}),
            "Invalid value PLAINTEXT://:9092,CONTROLLER://:9093 for configuration listeners: Sluice serves exactly "
            "one listener");
  EXPECT_EQ(server_error({{"advertised.listeners", "PLAINTEXT://:9092"}}),
            "Invalid value PLAINTEXT://:9092 for configuration advertised.listeners: the host is missing; expected "
            "PLAINTEXT://host:port");
  EXPECT_EQ(server_error({{"listeners", "PLAINTEXT://h:99999"}}),
            "Invalid value PLAINTEXT://h:99999 for configuration listeners: expected PLAINTEXT://host:port: address "
            "'h:99999': port must be 0-65535");
  EXPECT_EQ(server_error({{"log.dirs", "/a,/b"}}),
            "Invalid value /a,/b for configuration log.dirs: Sluice stores in exactly one directory");
  EXPECT_EQ(server_error({{"log.dir", " "}}),
            "Invalid value   for configuration log.dir: Sluice stores in exactly one directory");
}

// Cluster mode (issue 22): node.id with controller.quorum.voters, Kafka's id@host:port list of every voter.
TEST(BrokerConfig, ClusterModeNeedsNodeIdAmongTheQuorumVoters) {
  const std::string voters = "1@127.0.0.1:9192, 2@127.0.0.1:9193,3@[::1]:9194";
  const BrokerConfig c = parse_ok({{"node.id", "2"}, {"controller.quorum.voters", voters}});
  EXPECT_TRUE(c.cluster_mode());
  EXPECT_EQ(c.node_id, 2);
  ASSERT_EQ(c.controller_quorum_voters.size(), 3u);
  EXPECT_EQ(c.controller_quorum_voters.at(1), (Address{"127.0.0.1", 9192}));
  EXPECT_EQ(c.controller_quorum_voters.at(2), (Address{"127.0.0.1", 9193}));
  EXPECT_EQ(c.controller_quorum_voters.at(3), (Address{"::1", 9194}));
  EXPECT_EQ(parse_ok({{"broker.id", "3"}, {"controller.quorum.voters", voters}}).node_id, 3);
  EXPECT_FALSE(parse_ok({{"node.id", "2"}}).cluster_mode()) << "node.id alone is a single node";
  EXPECT_FALSE(parse_ok({}).cluster_mode());
  // A cluster may ask for more than one replica by default; a single node may not.
  EXPECT_EQ(parse_ok({{"node.id", "1"}, {"controller.quorum.voters", voters}, {"default.replication.factor", "3"}})
                .default_replication_factor,
            3);
}

TEST(BrokerConfig, RefusesMalformedQuorumVoters) {
  const auto error = [](const std::string& node_id, const std::string& voters) {
    Settings settings{{"controller.quorum.voters", voters}};
    if (!node_id.empty()) settings["node.id"] = node_id;
    return error_of(settings);
  };
  EXPECT_EQ(error("4", "1@h:1,2@h:2,3@h:3"),
            "Invalid value 1@h:1,2@h:2,3@h:3 for configuration controller.quorum.voters: node.id 4 is not one of the "
            "voters: every voter is listed, this node included");
  EXPECT_EQ(error("", "1@h:1"),
            "Invalid value 1@h:1 for configuration controller.quorum.voters: cluster mode needs node.id (this node's "
            "id among the voters)");
  EXPECT_EQ(error("1", "1@h:1,h:2"),
            "Invalid value 1@h:1,h:2 for configuration controller.quorum.voters: entry 'h:2' is not id@host:port");
  EXPECT_EQ(error("1", "1@h:1,x@h:2"),
            "Invalid value 1@h:1,x@h:2 for configuration controller.quorum.voters: entry 'x@h:2': 'x' is not a node "
            "id");
  EXPECT_EQ(error("1", "1@h:1,1@h:2"),
            "Invalid value 1@h:1,1@h:2 for configuration controller.quorum.voters: node id 1 is given twice");
  EXPECT_EQ(error("1", "1@h:1,0@h:2"),
            "Invalid value 1@h:1,0@h:2 for configuration controller.quorum.voters: entry '0@h:2': node ids are 1 to "
            "2147483647");
  EXPECT_EQ(error("1", "1@h:1,-2@h:2"),
            "Invalid value 1@h:1,-2@h:2 for configuration controller.quorum.voters: entry '-2@h:2': node ids are 1 "
            "to 2147483647");
  EXPECT_EQ(error("1", "1@h:0"),
            "Invalid value 1@h:0 for configuration controller.quorum.voters: entry '1@h:0': the raft port must not be "
            "0");
  EXPECT_NE(error("1", "1@nohost").find("entry '1@nohost': "), std::string::npos) << error("1", "1@nohost");
  EXPECT_EQ(error("1", ""),
            "Invalid value  for configuration controller.quorum.voters: no voters: expected "
            "id@host:port,...");
  EXPECT_EQ(error("0", "1@h:1"),
            "Invalid value 1@h:1 for configuration controller.quorum.voters: node.id 0 is not one of the voters: every "
            "voter is listed, this node included");
}

}  // namespace
}  // namespace sluice::kafka
