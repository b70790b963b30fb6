// The (API, version) table: for every pair the broker advertises, a small valid request built from the message's
// field list at that version, framed with that version's request header, gets an answer with its correlation id
// whose body decodes at that version, and the connection stays open. The pairs come from api_table.h, so a raised
// range is covered as soon as it is advertised; an API in SLUICE_KAFKA_APIS without a `Messages` entry here does not
// compile, and one advertised beyond its messages' kVersions fails. ApiVersions must advertise exactly the table.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <array>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "core/protocol/api_table.h"
#include "core/protocol/header.h"
#include "core/protocol/messages/alter_configs.h"
#include "core/protocol/messages/api_versions.h"
#include "core/protocol/messages/create_partitions.h"
#include "core/protocol/messages/create_topics.h"
#include "core/protocol/messages/delete_groups.h"
#include "core/protocol/messages/delete_records.h"
#include "core/protocol/messages/delete_topics.h"
#include "core/protocol/messages/describe_cluster.h"
#include "core/protocol/messages/describe_quorum.h"
#include "core/protocol/messages/describe_configs.h"
#include "core/protocol/messages/describe_groups.h"
#include "core/protocol/messages/fetch.h"
#include "core/protocol/messages/find_coordinator.h"
#include "core/protocol/messages/heartbeat.h"
#include "core/protocol/messages/incremental_alter_configs.h"
#include "core/protocol/messages/init_producer_id.h"
#include "core/protocol/messages/join_group.h"
#include "core/protocol/messages/leave_group.h"
#include "core/protocol/messages/list_groups.h"
#include "core/protocol/messages/list_offsets.h"
#include "core/protocol/messages/metadata.h"
#include "core/protocol/messages/offset_commit.h"
#include "core/protocol/messages/offset_delete.h"
#include "core/protocol/messages/offset_fetch.h"
#include "core/protocol/messages/offset_for_leader_epoch.h"
#include "core/protocol/messages/produce.h"
#include "core/protocol/messages/sync_group.h"
#include "tests/core/kafka/fetch_test_util.h"
#include "tests/core/kafka/kafka_test_util.h"

namespace sluice::kafka {
namespace {

using namespace testing;
using protocol::ApiInfo;
using protocol::ApiKey;
using protocol::MessageVersions;

const std::string kTopic = "t";
const std::string kGroup = "g";
constexpr int8_t kTopicResource = static_cast<int8_t>(protocol::ConfigResourceType::kTopic);

// Per API: its request and response types and a small valid request at a version (fields absent from a version are
// not encoded, so most ignore it). Undefined for an API without an entry, which then fails to compile below.
template <ApiKey kKey>
struct Messages;

template <>
struct Messages<ApiKey::kProduce> {
  using Request = protocol::ProduceRequest;
  using Response = protocol::ProduceResponse;
  static Request make(int16_t) {
    Request request;
    request.acks = -1;  // acks=0 has no answer
    request.timeout_ms = 5000;
    request.topic_data.push_back({kTopic, {{0, protocol::Records::own(make_records(2))}}});
    return request;
  }
};

template <>
struct Messages<ApiKey::kFetch> {
  using Request = protocol::FetchRequest;
  using Response = protocol::FetchResponse;
  static Request make(int16_t) {
    Request request;
    request.max_wait_ms = 0;
    request.topics.push_back(  // by name; from v13 the zero id names no topic, answered UNKNOWN_TOPIC_ID
        {.topic = kTopic, .partitions = {{.partition = 0, .fetch_offset = 0, .partition_max_bytes = 1 << 20}}});
    return request;
  }
};

template <>
struct Messages<ApiKey::kListOffsets> {
  using Request = protocol::ListOffsetsRequest;
  using Response = protocol::ListOffsetsResponse;
  static Request make(int16_t) {
    Request request;
    request.topics.push_back({kTopic, {{.partition_index = 0, .timestamp = protocol::kLatestTimestamp}}});
    return request;
  }
};

template <>
struct Messages<ApiKey::kMetadata> {
  using Request = protocol::MetadataRequest;
  using Response = protocol::MetadataResponse;
  static Request make(int16_t) {
    Request request;
    request.topics = std::vector<Request::Topic>{{.name = kTopic}};
    return request;
  }
};

template <>
struct Messages<ApiKey::kOffsetCommit> {
  using Request = protocol::OffsetCommitRequest;
  using Response = protocol::OffsetCommitResponse;
  static Request make(int16_t) {
    Request request;  // generation -1, no member: a standalone commit
    request.group_id = kGroup;
    request.topics.push_back({kTopic, {{.partition_index = 0, .committed_offset = 1}}});
    return request;
  }
};

template <>
struct Messages<ApiKey::kOffsetFetch> {
  using Request = protocol::OffsetFetchRequest;
  using Response = protocol::OffsetFetchResponse;
  static Request make(int16_t) {
    Request request;
    request.group_id = kGroup;                                                       // v0-7
    request.topics = std::vector<Request::Topic>{{kTopic, {0}}};                     // v0-7
    request.groups.push_back({.group_id = kGroup, .topics = std::vector<Request::Topic>{{kTopic, {0}}}});  // v8+
    return request;
  }
};

template <>
struct Messages<ApiKey::kFindCoordinator> {
  using Request = protocol::FindCoordinatorRequest;
  using Response = protocol::FindCoordinatorResponse;
  static Request make(int16_t) {
    Request request;
    request.key = kGroup;                 // v0-3
    request.coordinator_keys = {kGroup};  // v4+
    return request;
  }
};

template <>
struct Messages<ApiKey::kJoinGroup> {
  using Request = protocol::JoinGroupRequest;
  using Response = protocol::JoinGroupResponse;
  static Request make(int16_t version) {
    Request request;  // a first member: v4+ answer MEMBER_ID_REQUIRED, older versions complete the rebalance
    request.group_id = fmt::format("join-v{}", version);
    request.session_timeout_ms = 10000;
    request.rebalance_timeout_ms = 10000;
    request.protocol_type = "consumer";
    request.protocols.push_back({"range", Bytes{0, 1}});
    return request;
  }
};

template <>
struct Messages<ApiKey::kHeartbeat> {
  using Request = protocol::HeartbeatRequest;
  using Response = protocol::HeartbeatResponse;
  static Request make(int16_t) { return {kGroup, 1, "m", std::nullopt}; }
};

template <>
struct Messages<ApiKey::kLeaveGroup> {
  using Request = protocol::LeaveGroupRequest;
  using Response = protocol::LeaveGroupResponse;
  static Request make(int16_t) {
    Request request;
    request.group_id = kGroup;
    request.member_id = "m";                         // v0-2
    request.members.push_back({"m", std::nullopt});  // v3+
    return request;
  }
};

template <>
struct Messages<ApiKey::kSyncGroup> {
  using Request = protocol::SyncGroupRequest;
  using Response = protocol::SyncGroupResponse;
  static Request make(int16_t) {
    Request request;
    request.group_id = kGroup;
    request.generation_id = 1;
    request.member_id = "m";
    return request;
  }
};

template <>
struct Messages<ApiKey::kDescribeGroups> {
  using Request = protocol::DescribeGroupsRequest;
  using Response = protocol::DescribeGroupsResponse;
  static Request make(int16_t) { return {.groups = {kGroup}}; }
};

template <>
struct Messages<ApiKey::kListGroups> {
  using Request = protocol::ListGroupsRequest;
  using Response = protocol::ListGroupsResponse;
  static Request make(int16_t) { return {}; }
};

template <>
struct Messages<ApiKey::kApiVersions> {
  using Request = protocol::ApiVersionsRequest;
  using Response = protocol::ApiVersionsResponse;
  static Request make(int16_t) { return {"sluice-table-test", "1.0"}; }
};

template <>
struct Messages<ApiKey::kCreateTopics> {
  using Request = protocol::CreateTopicsRequest;
  using Response = protocol::CreateTopicsResponse;
  static Request make(int16_t version) {
    Request request;
    Request::Topic topic;
    topic.name = fmt::format("created-v{}", version);
    topic.num_partitions = 1;
    topic.replication_factor = 1;
    topic.configs.push_back({"retention.ms", "3600000"});
    request.topics.push_back(topic);
    return request;
  }
};

template <>
struct Messages<ApiKey::kDeleteTopics> {
  using Request = protocol::DeleteTopicsRequest;
  using Response = protocol::DeleteTopicsResponse;
  static Request make(int16_t) {
    Request request;
    request.topic_names = {"absent"};                              // v0-5
    request.topics.push_back({"absent", protocol::Uuid::zero()});  // v6+
    request.timeout_ms = 1000;
    return request;
  }
};

template <>
struct Messages<ApiKey::kDeleteRecords> {
  using Request = protocol::DeleteRecordsRequest;
  using Response = protocol::DeleteRecordsResponse;
  static Request make(int16_t) {
    Request request;
    request.topics.push_back({kTopic, {{0, 0}}});  // to offset 0: removes nothing
    request.timeout_ms = 1000;
    return request;
  }
};

template <>
struct Messages<ApiKey::kInitProducerId> {
  using Request = protocol::InitProducerIdRequest;
  using Response = protocol::InitProducerIdResponse;
  static Request make(int16_t) { return {std::nullopt, 60000, -1, -1}; }  // an idempotent producer
};

template <>
struct Messages<ApiKey::kOffsetForLeaderEpoch> {
  using Request = protocol::OffsetForLeaderEpochRequest;
  using Response = protocol::OffsetForLeaderEpochResponse;
  static Request make(int16_t) {
    Request request;
    request.replica_id = -1;
    request.topics.push_back({kTopic, {{.partition = 0, .leader_epoch = 0}}});
    return request;
  }
};

template <>
struct Messages<ApiKey::kDescribeConfigs> {
  using Request = protocol::DescribeConfigsRequest;
  using Response = protocol::DescribeConfigsResponse;
  static Request make(int16_t) {
    Request request;
    request.resources.push_back({kTopicResource, kTopic, std::nullopt});
    request.include_synonyms = true;
    request.include_documentation = true;
    return request;
  }
};

template <>
struct Messages<ApiKey::kAlterConfigs> {
  using Request = protocol::AlterConfigsRequest;
  using Response = protocol::AlterConfigsResponse;
  static Request make(int16_t) {
    Request request;
    request.resources.push_back({kTopicResource, kTopic, {{"retention.ms", "7200000"}}});
    request.validate_only = true;
    return request;
  }
};

template <>
struct Messages<ApiKey::kCreatePartitions> {
  using Request = protocol::CreatePartitionsRequest;
  using Response = protocol::CreatePartitionsResponse;
  static Request make(int16_t) {
    Request request;
    request.topics.push_back({kTopic, 4, std::nullopt});
    request.timeout_ms = 1000;
    request.validate_only = true;  // every version runs against the same topic
    return request;
  }
};

template <>
struct Messages<ApiKey::kDeleteGroups> {
  using Request = protocol::DeleteGroupsRequest;
  using Response = protocol::DeleteGroupsResponse;
  static Request make(int16_t) { return {.groups_names = {"absent-group"}}; }
};

template <>
struct Messages<ApiKey::kIncrementalAlterConfigs> {
  using Request = protocol::IncrementalAlterConfigsRequest;
  using Response = protocol::IncrementalAlterConfigsResponse;
  static Request make(int16_t) {
    Request request;
    request.resources.push_back({kTopicResource, kTopic, {{"retention.ms", 0, "7200000"}}});
    request.validate_only = true;
    return request;
  }
};

template <>
struct Messages<ApiKey::kOffsetDelete> {
  using Request = protocol::OffsetDeleteRequest;
  using Response = protocol::OffsetDeleteResponse;
  static Request make(int16_t) { return {.group_id = kGroup, .topics = {{kTopic, {{0}}}}}; }
};

template <>
struct Messages<ApiKey::kDescribeQuorum> {
  using Request = protocol::DescribeQuorumRequest;
  using Response = protocol::DescribeQuorumResponse;
  static Request make(int16_t) { return {.topics = {{protocol::kClusterMetadataTopic, {{0}}}}}; }
};

template <>
struct Messages<ApiKey::kDescribeCluster> {
  using Request = protocol::DescribeClusterRequest;
  using Response = protocol::DescribeClusterResponse;
  static Request make(int16_t) { return {}; }
};

// Sends `request` at `version` framed with that version's header, reads one answer and checks its correlation id
// and that its body decodes as Resp at `version` (with no bytes left over).
template <protocol::ApiMessage Req, protocol::ApiMessage Resp>
Status exchange(KafkaClient& client, const Req& request, int16_t version, int32_t correlation_id) {
  const protocol::RequestHeader header{Req::kApiKey, version, correlation_id, std::string("table-test")};
  SLUICE_ASSIGN_OR_RETURN(Bytes frame, protocol::encode_request_frame(header, request));
  SLUICE_TRY(client.send_raw(frame));
  SLUICE_ASSIGN_OR_RETURN(std::optional<Bytes> answer, client.receive_frame());
  if (!answer.has_value()) return closed("the broker closed the connection instead of answering");
  ByteView body;
  SLUICE_ASSIGN_OR_RETURN(int32_t answered, protocol::decode_response_header(*answer, Req::kApiKey, version, &body));
  if (answered != correlation_id) {
    return corruption(fmt::format("answered correlation id {}, sent {}", answered, correlation_id));
  }
  return protocol::decode_message<Resp>(body, version).status();
}

struct Exchange {
  MessageVersions request_versions;
  MessageVersions response_versions;
  std::function<Status(KafkaClient&, int16_t version, int32_t correlation_id)> run;
};

template <ApiKey kKey>
Exchange exchange_for() {
  using Request = typename Messages<kKey>::Request;
  using Response = typename Messages<kKey>::Response;
  static_assert(Request::kApiKey == kKey && Response::kApiKey == kKey, "Messages<key> names another API's types");
  return {Request::kVersions, Response::kVersions, [](KafkaClient& client, int16_t version, int32_t correlation_id) {
            return exchange<Request, Response>(client, Messages<kKey>::make(version), version, correlation_id);
          }};
}

// One entry per row of the table, generated from it.
std::map<ApiKey, Exchange> all_exchanges() {
  return {
#define SLUICE_TABLE_EXCHANGE(name, key, min, max, flexible_from) {ApiKey::k##name, exchange_for<ApiKey::k##name>()},
      SLUICE_KAFKA_APIS(SLUICE_TABLE_EXCHANGE)
#undef SLUICE_TABLE_EXCHANGE
  };
}

// Advertised but refused on purpose, by closing the connection (api_table.h says why): Produce v0-2, message
// formats 0 and 1, advertised because librdkafka stops compressing when Produce does not start at 0.
struct Refused {
  ApiKey key;
  int16_t min;
  int16_t max;
};
constexpr std::array kRefused = {Refused{ApiKey::kProduce, 0, 2}};

bool refused(ApiKey key, int16_t version) {
  for (const Refused& r : kRefused) {
    if (r.key == key && version >= r.min && version <= r.max) return true;
  }
  return false;
}

// What happened to one (API, version) pair; empty when the broker did what it should.
std::string check_pair(const std::map<ApiKey, Exchange>& exchanges, const ApiInfo& api, int16_t version,
                       KafkaClient& client, int32_t* correlation_id) {
  const Status answered = exchanges.at(api.key).run(client, version, ++*correlation_id);
  if (refused(api.key, version)) {
    if (answered.code() == Code::kClosed) return "";
    return "was to be refused (kRefused) but got: " + (answered.ok() ? std::string("an answer") : answered.to_string());
  }
  if (!answered.ok()) return answered.to_string();
  const Status alive = exchanges.at(ApiKey::kApiVersions).run(client, 0, ++*correlation_id);
  if (!alive.ok()) return "answered, then the connection failed: " + alive.to_string();
  return "";
}

TEST(ApiVersionTable, EveryAdvertisedVersionIsAnswered) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env env, KafkaClient& first, Broker& broker) {
    create_topic(env, broker, kTopic, 1);
    append(env, broker, {kTopic, 0}, make_records(3));
    const std::map<ApiKey, Exchange> exchanges = all_exchanges();
    KafkaClient* client = &first;
    std::optional<KafkaClient> reconnected;
    int32_t correlation_id = 1000;
    int pairs = 0;
    for (const ApiInfo& api : protocol::all_apis()) {
      ASSERT_TRUE(exchanges.contains(api.key)) << api.name;
      const Exchange& entry = exchanges.at(api.key);
      for (const MessageVersions described : {entry.request_versions, entry.response_versions}) {
        EXPECT_TRUE(described.contains(api.min_version) && described.contains(api.max_version))
            << api.name << " advertises v" << api.min_version << "-" << api.max_version
            << " but its messages describe v" << described.min << "-" << described.max;
      }
      for (int16_t version = api.min_version; version <= api.max_version; ++version, ++pairs) {
        const std::string problem = check_pair(exchanges, api, version, *client, &correlation_id);
        if (!problem.empty()) ADD_FAILURE() << api.name << " v" << version << ": " << problem;
        if (problem.empty() && !refused(api.key, version)) continue;
        reconnected.emplace(BrokerHarness::connect(env));  // the connection is gone: go on with the other pairs
        client = &*reconnected;
      }
    }
    EXPECT_EQ(exchanges.size(), protocol::all_apis().size());
    EXPECT_GE(pairs, 100) << "the whole table was walked";
  }));
}

TEST(ApiVersionTable, ApiVersionsAdvertisesExactlyTheTable) {
  BrokerHarness harness;
  ASSERT_TRUE(harness.run([](Env, KafkaClient& client, Broker&) {
    const ApiInfo& api_versions = protocol::api_info(ApiKey::kApiVersions);
    for (int16_t version = api_versions.min_version; version <= api_versions.max_version; ++version) {
      SCOPED_TRACE("ApiVersions v" + std::to_string(version));
      auto response =
          client.call<protocol::ApiVersionsResponse>(Messages<ApiKey::kApiVersions>::make(version), version);
      ASSERT_TRUE(response.ok()) << response.status().to_string();
      EXPECT_EQ(response->error_code, 0);
      ASSERT_EQ(response->api_keys.size(), protocol::all_apis().size());
      for (size_t i = 0; i < response->api_keys.size(); ++i) {
        const ApiInfo& api = protocol::all_apis()[i];
        EXPECT_EQ(response->api_keys[i].api_key, static_cast<int16_t>(api.key)) << api.name;
        EXPECT_EQ(response->api_keys[i].min_version, api.min_version) << api.name;
        EXPECT_EQ(response->api_keys[i].max_version, api.max_version) << api.name;
      }
    }
  }));
}

}  // namespace
}  // namespace sluice::kafka
