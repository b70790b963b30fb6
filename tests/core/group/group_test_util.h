// A group coordinator on one simulated node: its own log manager in "data", a topic catalog over it, and helpers
// that build requests and run members as fibers.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/group/coordinator.h"
#include "core/protocol/error_codes.h"
#include "core/protocol/wire.h"
#include "core/storage/log_manager.h"
#include "tests/core/storage/log_test_util.h"

namespace sluice::group::testing {

using namespace std::chrono_literals;

// Topics: the offsets topic is created for real (partitions in the log manager); other topics are only facts.
class FakeTopics final : public TopicCatalog {
 public:
  explicit FakeTopics(storage::LogManager& logs) : logs_(logs) {
    for (const storage::TopicPartition& tp : logs.partitions()) {
      if (tp.topic == kOffsetsTopic) facts_[tp.topic].partitions = std::max(facts_[tp.topic].partitions, tp.partition + 1);
    }
  }
  std::optional<Facts> find(const std::string& topic) const override {
    auto it = facts_.find(topic);
    if (it == facts_.end()) return std::nullopt;
    return it->second;
  }
  Status create(const std::string& topic, int32_t partitions,
                const std::map<std::string, std::string>& overrides) override {
    SLUICE_ASSIGN_OR_RETURN(storage::TopicConfig config, storage::TopicConfig::from_overrides(overrides, {}));
    for (int32_t p = 0; p < partitions; ++p) SLUICE_TRY(logs_.create_partition({topic, p}, config).status());
    facts_[topic] = Facts{partitions, false};
    return Status();
  }
  void add(const std::string& topic, int32_t partitions, bool persisted = false) {
    facts_[topic] = Facts{partitions, persisted};
  }

 private:
  storage::LogManager& logs_;
  std::map<std::string, Facts> facts_;
};

inline CoordinatorConfig fast_config() {
  CoordinatorConfig config;
  config.initial_rebalance_delay_ms = 500;  // members joining together land in one generation
  config.offsets_topic_partitions = 4;
  return config;
}

// A coordinator over a fresh (or reopened) data directory. Construct inside the node's main fiber.
struct Rig {
  Rig(Env env, CoordinatorConfig config = fast_config()) : env(env) {
    auto opened = storage::LogManager::open(env, "data", storage::BrokerStorageConfig{});
    EXPECT_TRUE(opened.ok()) << opened.status().to_string();
    logs = std::move(opened).value();
    topics = std::make_unique<FakeTopics>(*logs);
    topics->add("orders", 4);
    topics->add("audit", 2);
    coordinator = std::make_unique<GroupCoordinator>(env, *logs, *topics, config);
    coordinator->start();
    coordinator->wait_loaded();
  }
  ~Rig() {
    coordinator->stop();
    const Status closed = logs->close();
    if (clean_close_expected) {
      EXPECT_TRUE(closed.ok()) << closed.to_string();
    }
  }
  GroupCoordinator& c() { return *coordinator; }

  Env env;
  bool clean_close_expected = true;  // false after an injected write fault took a log offline
  std::unique_ptr<storage::LogManager> logs;
  std::unique_ptr<FakeTopics> topics;
  std::unique_ptr<GroupCoordinator> coordinator;
};

// ConsumerProtocolSubscription v0: int16 version, topics, null user data.
inline Bytes subscription(const std::vector<std::string>& topics) {
  Bytes out;
  protocol::Writer w(&out);
  w.put_int16(0);
  w.put_array_length("topics", topics.size(), false);
  for (const std::string& t : topics) w.put_string("topic", t, false);
  w.put_null(false, true);
  w.finish();
  return out;
}

inline JoinRequest join_request(const std::string& group, const std::string& member_id,
                                std::vector<Protocol> protocols = {{"range", subscription({"orders"})}},
                                int32_t session_ms = 10000, int32_t rebalance_ms = 30000) {
  JoinRequest r;
  r.group_id = group;
  r.member_id = member_id;
  r.client_id = "client";
  r.client_host = "/10.0.0.1";
  r.session_timeout_ms = session_ms;
  r.rebalance_timeout_ms = rebalance_ms;
  r.protocol_type = "consumer";
  r.protocols = std::move(protocols);
  r.require_known_member_id = true;
  return r;
}

inline SyncRequest sync_request(const std::string& group, const JoinResult& joined,
                                std::vector<std::pair<std::string, Bytes>> assignments = {}) {
  SyncRequest r;
  r.group_id = group;
  r.generation_id = joined.generation_id;
  r.member_id = joined.member_id;
  r.assignments = std::move(assignments);
  return r;
}

inline HeartbeatRequest heartbeat_request(const std::string& group, const JoinResult& joined) {
  return HeartbeatRequest{group, joined.generation_id, joined.member_id, std::nullopt};
}

inline Bytes bytes_of(std::string_view s) { return Bytes(s.begin(), s.end()); }

// JoinGroup in its own fiber; the result appears in `out` once answered.
inline void join_async(Env env, GroupCoordinator& c, JoinRequest request, std::optional<JoinResult>& out) {
  env.scheduler.spawn("join", [&c, request, &out] { out = c.join(request); });
}

inline void sync_async(Env env, GroupCoordinator& c, SyncRequest request, std::optional<SyncResult>& out) {
  env.scheduler.spawn("sync", [&c, request, &out] { out = c.sync(request); });
}

// Sleeps on the simulated clock until `done` holds or `bound` passes; whether it holds. The leader's SyncGroup
// answers only once the group's record is in __consumer_offsets (created on first use: directory syncs), so a
// fixed sleep would race the disk's latency, and an answer landing after the test's scope ends writes into freed
// memory.
template <typename Done>
bool wait_until(Env env, Done done, Duration bound = 10s) {
  const Instant deadline = env.clock.now() + bound;
  while (!done() && env.clock.now() < deadline) env.scheduler.sleep_for(1ms);
  return done();
}

// A member id from MEMBER_ID_REQUIRED, then the second JoinGroup (which parks until the rebalance completes).
inline std::string member_id_for(GroupCoordinator& c, const std::string& group) {
  const JoinResult first = c.join(join_request(group, ""));
  EXPECT_EQ(first.error, ErrorCode::kMemberIdRequired);
  return first.member_id;
}

inline OffsetToCommit offset(const std::string& topic, int32_t partition, int64_t value,
                             std::optional<std::string> metadata = std::string("m")) {
  OffsetToCommit o;
  o.tp = {topic, partition};
  o.offset = value;
  o.metadata = std::move(metadata);
  return o;
}

}  // namespace sluice::group::testing
