// A run's setup, shared by the Simulation's phases: the broker configuration a scenario asks for (mutations added
// here only, never from a file), the topic facts the checkers judge by, the clients' settings, and the topics'
// creation by a setup client.
#pragma once

#include <map>
#include <string>

#include "core/base/mutations.h"
#include "core/client/client.h"
#include "core/kafka/broker_config.h"
#include "sim/checkers/check.h"
#include "sim/history/history.h"
#include "sim/scenario/run_world.h"
#include "sim/scenario/scenario.h"

namespace sluice::sim {

Result<kafka::BrokerConfig> broker_config(const Scenario& scenario, const MutationSet& mutations);
Result<std::map<std::string, TopicFacts>> topic_facts(const Scenario& scenario, const kafka::BrokerConfig& broker);
client::ClientConfig client_config(RunWorld& world);
// Creates the scenario's topics from a client node of its own; true when every one exists within `limit`.
bool create_topics(RunWorld& world, const Scenario& scenario, History& history, Duration limit);

}  // namespace sluice::sim
