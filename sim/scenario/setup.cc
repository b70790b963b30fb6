#include "sim/scenario/setup.h"

#include <fmt/format.h>

#include "core/protocol/error_codes.h"
#include "core/storage/topic_config.h"

namespace sluice::sim {

using namespace std::chrono_literals;

client::ClientConfig client_config(RunWorld& world) {
  client::ClientConfig config;
  config.bootstrap = world.bootstrap();
  config.request_timeout = 5s;
  config.connect_timeout = 2s;
  config.metadata_max_age = 5s;
  return config;
}

Result<kafka::BrokerConfig> broker_config(const Scenario& s, const MutationSet& mutations) {
  Result<kafka::BrokerConfig> config = kafka::BrokerConfig::from_map(s.broker);
  if (!config.ok()) return invalid_argument(s.path + ": [broker]: " + config.status().message());
  config->mutations = mutations;
  config->storage.mutations = mutations;
  config->group.mutations = mutations;
  return config;
}

Result<std::map<std::string, TopicFacts>> topic_facts(const Scenario& s, const kafka::BrokerConfig& broker) {
  std::map<std::string, TopicFacts> facts;
  for (const TopicSpec& t : s.topics) {
    Result<storage::TopicConfig> config = storage::TopicConfig::from_overrides(t.config, broker.storage.topic_defaults);
    if (!config.ok()) return invalid_argument(fmt::format("topic {}: {}", t.name, config.status().message()));
    TopicFacts f;
    f.name = t.name;
    f.partitions = t.partitions;
    f.compacted = config->cleanup_compact;
    f.deletes = config->cleanup_delete;
    f.persisted = config->durability == storage::Durability::kPersisted;
    f.retention_ms = config->retention_ms;
    f.retention_bytes = config->retention_bytes;
    f.delete_retention_ms = config->delete_retention_ms;
    f.offsets_persisted = config->consumer_offset_durability == storage::Durability::kPersisted;
    facts[t.name] = f;
  }
  return facts;
}

bool create_topics(RunWorld& world, const Scenario& s, History& history, Duration limit) {
  SimNode& setup = world.add_client("setup");
  bool done = false;
  const client::ClientConfig config = client_config(world);
  setup.boot([&](Env env) {
    client::Client client(env, config);
    for (const TopicSpec& t : s.topics) {
      for (;;) {
        Operation op;
        op.process = "setup";
        op.kind = OpKind::kCreateTopic;
        op.tp = client::TopicPartitionId{t.name, -1};
        op.edit_details().config = t.config;
        const uint64_t id = history.invoke(std::move(op), env.clock.now());
        const int16_t replicas =
            static_cast<int16_t>(t.replication_factor > 0 ? t.replication_factor : std::min(s.brokers, 3));
        client::NewTopic topic{t.name, t.partitions, replicas, t.config};
        const Status created = client.create_topic(topic);
        Operation& o = history.op(id);
        o.outcome = created.ok() ? Outcome::kOk : Outcome::kFailed;
        o.error_code = created.protocol_error();
        if (!created.ok()) o.set_error(created.to_string());
        history.complete(id, env.clock.now());
        if (created.ok() || created.protocol_error() == wire_code(ErrorCode::kTopicAlreadyExists)) break;
        env.scheduler.sleep_for(200ms);
      }
    }
    done = true;
  });
  return world.world().run_until([&] { return done; }, world.world().now() + limit);
}

}  // namespace sluice::sim
