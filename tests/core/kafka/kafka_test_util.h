// A broker in the simulator and a raw Kafka client for handler tests: node n1 runs kafka::Broker on its simulated
// disk and network (port 9092), and the test body runs as node n2's main fiber with a connected KafkaClient that
// sends typed requests and decodes typed responses (or raw frames, for bad-input tests).
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/broker/node.h"
#include "core/kafka/broker.h"
#include "core/protocol/header.h"
#include "core/protocol/message.h"
#include "core/protocol/messages/metadata.h"
#include "sim/world/sim_cluster.h"
#include "sim/world/sim_disk.h"

namespace sluice::kafka::testing {

using namespace std::chrono_literals;

inline const Address kBrokerAddress{"n1", 9092};

class KafkaClient {
 public:
  explicit KafkaClient(std::unique_ptr<Stream> stream) : stream_(std::move(stream)) {}

  // Sends `request` at `version` and decodes the response. Errors: the connection closed, or a decode failure.
  template <protocol::ApiMessage Resp, protocol::ApiMessage Req>
  Result<Resp> call(const Req& request, int16_t version) {
    SLUICE_TRY(send(request, version));
    return receive<Resp>(Req::kApiKey, version);
  }

  template <protocol::ApiMessage Req>
  Status send(const Req& request, int16_t version) {
    protocol::RequestHeader header{Req::kApiKey, version, next_correlation_id_++, client_id_};
    SLUICE_ASSIGN_OR_RETURN(Bytes frame, protocol::encode_request_frame(header, request));
    return stream_->write_all(frame);
  }

  template <protocol::ApiMessage Resp>
  Result<Resp> receive(protocol::ApiKey api, int16_t version) {
    SLUICE_ASSIGN_OR_RETURN(std::optional<Bytes> frame, protocol::read_frame(*stream_));
    if (!frame.has_value()) return Status(Code::kClosed, "the broker closed the connection");
    ByteView body;
    SLUICE_ASSIGN_OR_RETURN(int32_t correlation_id, protocol::decode_response_header(*frame, api, version, &body));
    last_correlation_id_ = correlation_id;
    return protocol::decode_message<Resp>(body, version);
  }

  // Raw bytes out; the next whole frame back (nullopt when the broker closed the connection).
  Status send_raw(ByteView bytes) { return stream_->write_all(bytes); }
  Result<std::optional<Bytes>> receive_frame() { return protocol::read_frame(*stream_); }

  Stream& stream() { return *stream_; }
  int32_t last_correlation_id() const { return last_correlation_id_; }
  void set_client_id(std::string client_id) { client_id_ = std::move(client_id); }

 private:
  std::unique_ptr<Stream> stream_;
  std::string client_id_ = "test-client";
  int32_t next_correlation_id_ = 1;
  int32_t last_correlation_id_ = -1;
};

// Creates topics as clients do before they produce (Produce never creates one, as in Kafka): a Metadata request
// that allows auto-creation, so the topics get the broker's num.partitions and topic defaults.
inline void auto_create(KafkaClient& client, const std::vector<std::string>& topics) {
  protocol::MetadataRequest request;
  for (const std::string& name : topics) request.topics->push_back({.name = name});
  request.allow_auto_topic_creation = true;
  auto response = client.call<protocol::MetadataResponse>(request, 9);
  ASSERT_TRUE(response.ok()) << response.status().to_string();
  for (const protocol::MetadataResponse::Topic& topic : response->topics) {
    EXPECT_EQ(topic.error_code, 0) << topic.name.value_or("<null>");
  }
}

// One broker node and one client node in a seeded simulation.
class BrokerHarness {
 public:
  explicit BrokerHarness(uint64_t seed = 1, BrokerConfig config = {})
      : cluster_(seed, LogLevel::kOff), server_(cluster_.add_node()), client_(cluster_.add_node()),
        config_(std::move(config)) {
    config_.advertised_host = kBrokerAddress.host;
    config_.advertised_port = kBrokerAddress.port;
  }

  // Boots the broker, then runs `body` on the client node with a fresh connection. True when `body` finished
  // within `limit` of simulated time. The broker stops gracefully afterwards (its logs closed).
  bool run(const std::function<void(Env, KafkaClient&, Broker&)>& body, Duration limit = std::chrono::hours(1)) {
    boot_broker();
    bool done = false;
    client_.boot([&](Env env) {
      while (broker_ == nullptr) env.scheduler.sleep_for(1ms);
      auto stream = env.net.connect(kBrokerAddress);
      ASSERT_TRUE(stream.ok()) << stream.status().to_string();
      KafkaClient client(std::move(*stream));
      body(env, client, *broker_);
      done = true;
    });
    cluster_.world().run_until([&] { return done; }, cluster_.world().now() + limit);
    stop_broker();
    if (client_.up()) client_.crash();  // down, so that a second run() can boot it again
    return done;
  }

  // A second connection from the client node (call inside `run`'s body).
  static KafkaClient connect(Env env) {
    auto stream = env.net.connect(kBrokerAddress);
    EXPECT_TRUE(stream.ok()) << stream.status().to_string();
    return KafkaClient(std::move(*stream));
  }

  SimNode& server() { return server_; }
  SimWorld& world() { return cluster_.world(); }
  BrokerConfig& config() { return config_; }
  // For tests that take a log offline: the broker's close then reports it.
  void allow_failed_close() { expect_clean_close_ = false; }
  // Where the next boot's broker reports its declared effects (NodeOptions::effects).
  void set_effects(storage::EffectSink* effects) { effects_ = effects; }

 private:
  // The one boot path (core/broker/node.h), as `sluice serve` and the simulator use it.
  void boot_broker() {
    broker_ = nullptr;
    stopped_ = false;
    server_.boot([this](Env env) {
      broker::NodeOptions options;
      options.listen = kBrokerAddress;
      options.data_dir = "data";
      options.broker = config_;
      options.effects = effects_;
      broker::Node node(env, std::move(options));
      bool served = false;
      const Status run = node.run([&](Broker& broker, const Address&) {
        broker_ = &broker;
        served = true;
      });
      // A boot that fails is always a failure; a failed close only where the test took a log offline.
      EXPECT_TRUE(run.ok() || (served && !expect_clean_close_)) << run.to_string();
      broker_ = nullptr;
      stopped_ = true;
    });
  }

  void stop_broker() {
    if (broker_ != nullptr) broker_->stop();
    cluster_.world().run_until([&] { return stopped_ || !server_.up(); }, cluster_.world().now() + 10s);
    if (server_.up()) server_.crash();
  }

  SimCluster cluster_;
  SimNode& server_;
  SimNode& client_;
  BrokerConfig config_;
  Broker* broker_ = nullptr;
  bool stopped_ = false;
  bool expect_clean_close_ = true;
  storage::EffectSink* effects_ = nullptr;
};

// auto_create on a connection of its own, for tests that count their connection's correlation ids.
inline void auto_create(Env env, const std::vector<std::string>& topics) {
  KafkaClient setup = BrokerHarness::connect(env);
  auto_create(setup, topics);
}

}  // namespace sluice::kafka::testing
