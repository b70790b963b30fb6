// What identifies a topic in the cluster metadata: its id, drawn by the proposer as Kafka's Uuid.randomUuid, and its
// name, under Kafka's rules (org.apache.kafka.common.internals.Topic: validate, hasCollision).
#pragma once

#include <string_view>

#include "core/base/status.h"
#include "core/cluster/metadata/records.h"
#include "core/env/random.h"

namespace sluice::cluster::metadata {

inline constexpr size_t kMaxTopicNameLength = 249;

// A random version-4 id that is not reserved and whose text form does not start with '-' (Kafka avoids those: a
// command line would take the id for an option).
TopicId new_topic_id(Random& random);
// Zero (no id) and one (Kafka's METADATA_TOPIC_ID) never name a topic.
bool is_reserved_topic_id(const TopicId& id);

// OK, or INVALID_TOPIC_EXCEPTION saying which rule the name breaks: empty, "." or "..", longer than 249, or a
// character outside [a-zA-Z0-9._-]. core/kafka/topic_names.h delegates here; its handlers check before
// proposing; the image checks again because a record is applied whoever proposed it.
Status check_topic_name(std::string_view name);

// Two different names that are equal once '.' and '_' are taken for the same character: their metrics names would
// be equal, so Kafka refuses to create the second (KAFKA-13743).
bool topic_names_collide(std::string_view a, std::string_view b);

}  // namespace sluice::cluster::metadata
