// Cluster mode on the real world: three brokers (broker::Node, the boot path of `sluice serve`) in one process, each
// with its Kafka listener and raft transport on loopback ports and its data in files, and the Kafka client
// (core/client) creating a topic with three replicas, producing with acks=all and reading the records back from
// whichever node leads the partition; one more produce sent to a node that does not lead it is forwarded to the
// leader (core/kafka/produce_forwarder.h) over real sockets.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "core/broker/node.h"
#include "core/client/client.h"
#include "core/client/connection.h"
#include "core/client/requests.h"
#include "net/real_env.h"
#include "tests/net/free_ports.h"
#include "tests/net/temp_dir.h"

namespace sluice {
namespace {

using namespace std::chrono_literals;

constexpr int32_t kNodes = 3;

using net_test::free_ports;

client::ProducerRecord record(const std::string& value) {
  client::ProducerRecord out;
  out.key = to_bytes("k");
  out.value = to_bytes(value);
  return out;
}

// An acks=all Produce of one record sent straight to `at` (not routed to the leader as client::Producer would):
// partition 0's answer.
Result<protocol::ProduceResponse::PartitionResponse> produce_at(Env env, const Address& at, const std::string& topic,
                                                                const std::string& value) {
  client::detail::ConnectionOptions options;
  options.client_id = "loopback-test";
  options.connect_timeout = 5s;
  options.request_timeout = 5s;
  SLUICE_ASSIGN_OR_RETURN(std::shared_ptr<client::detail::Connection> connection,
                          client::detail::Connection::open(env, at, options));
  SLUICE_ASSIGN_OR_RETURN(const int16_t version, connection->version_for(protocol::ApiKey::kProduce));
  SLUICE_ASSIGN_OR_RETURN(const Bytes batch, client::build_record_batch({record(value)}, 0, {}));
  const client::TopicPartitionId tp{topic, 0};
  Bytes body;
  SLUICE_TRY(protocol::encode_message(client::produce_request(-1, 5000, {{tp, batch}}), version, &body));
  client::detail::CallPtr call = connection->start(protocol::ApiKey::kProduce, version, body, 10s, true);
  Result<Bytes> answer = client::detail::wait_for(*call);
  connection->close();
  SLUICE_TRY(answer.status());
  SLUICE_ASSIGN_OR_RETURN(const protocol::ProduceResponse response,
                          protocol::decode_message<protocol::ProduceResponse>(*answer, version));
  return client::produce_answer(response, tp);
}

TEST(ClusterServeLoopback, ThreeNodesCreateATopicProduceAndConsume) {
  net_test::TempDir dir;
  RealEnv real("cluster-serve-loopback", LogLevel::kWarn);
  std::vector<std::string> fetched;
  std::vector<client::ProduceResult> produced;
  Result<protocol::ProduceResponse::PartitionResponse> forwarded = Status(Code::kInvalidArgument, "not run");
  Status created = Status(Code::kInvalidArgument, "not run");
  bool finished = false;
  real.run([&](Env& env) {
    const std::vector<uint16_t> ports = free_ports(env, 2 * kNodes);
    ASSERT_EQ(ports.size(), static_cast<size_t>(2 * kNodes));
    std::vector<std::unique_ptr<broker::Node>> nodes;
    std::vector<kafka::Broker*> serving(kNodes, nullptr);
    std::vector<FiberRef> mains;
    for (int32_t id = 1; id <= kNodes; ++id) {
      broker::NodeOptions options;
      options.listen = Address{"127.0.0.1", ports[static_cast<size_t>(id - 1)]};
      options.data_dir = dir / fmt::format("n{}", id);
      options.broker.node_id = id;
      for (int32_t other = 1; other <= kNodes; ++other) {
        options.broker.controller_quorum_voters[other] =
            Address{"127.0.0.1", ports[static_cast<size_t>(kNodes + other - 1)]};
      }
      options.broker.raft_tick = 20ms;
      nodes.push_back(std::make_unique<broker::Node>(env, std::move(options)));
      broker::Node& node = *nodes.back();
      mains.push_back(env.scheduler.spawn(fmt::format("node-{}", id), [&node, &serving, id] {
        const Status run = node.run([&serving, id](kafka::Broker& b, const Address&) { serving[id - 1] = &b; });
        EXPECT_TRUE(run.ok()) << run.to_string();
        serving[id - 1] = nullptr;
      }));
    }
    const Instant deadline = env.clock.now() + 30s;
    const auto registered = [&] {
      for (kafka::Broker* b : serving) {
        if (b == nullptr || !b->cluster()->node().registered()) return false;
        if (b->cluster()->image().brokers().size() != static_cast<size_t>(kNodes)) return false;
      }
      return true;
    };
    while (!registered() && env.clock.now() < deadline) env.scheduler.sleep_for(10ms);
    ASSERT_TRUE(registered());

    client::ClientConfig config;
    config.bootstrap = {Address{"127.0.0.1", ports[1]}};
    config.request_timeout = 5s;
    {
      client::Client client(env, config);
      created = client.create_topic({"replicated", 1, 3, {}});
      client::ProducerConfig producer_config;
      producer_config.idempotent = true;
      client::Producer producer(client, producer_config);
      for (int i = 0; i < 5; ++i) {
        producer.send({"replicated", 0}, {record("v" + std::to_string(i))},
                      [&produced](const client::ProduceResult& result) { produced.push_back(result); });
      }
      producer.flush();
      // A node that does not lead the partition forwards the produce to the one that does.
      for (int32_t id = 1; id <= kNodes; ++id) {
        const std::shared_ptr<cluster::Partition> replica =
            serving[static_cast<size_t>(id - 1)]->partitions().find({"replicated", 0});
        if (replica == nullptr || replica->is_leader()) continue;
        forwarded = produce_at(env, Address{"127.0.0.1", ports[static_cast<size_t>(id - 1)]}, "replicated", "v5");
        break;
      }
      Result<client::FetchResult> read = client.fetch({"replicated", 0}, 0);
      if (read.ok()) {
        for (const client::FetchedRecord& r : read->records) fetched.emplace_back(as_chars(*r.value));
      }
    }
    for (auto& node : nodes) node->stop();
    for (const FiberRef& main : mains) env.scheduler.join(main);
    finished = true;
  });
  EXPECT_TRUE(finished);
  EXPECT_TRUE(created.ok()) << created.to_string();
  ASSERT_EQ(produced.size(), 5u);
  for (size_t i = 0; i < produced.size(); ++i) {
    EXPECT_EQ(produced[i].outcome, client::Outcome::kOk) << produced[i].error;
    // The leader's LeaderChange batch comes first, then the records in order.
    EXPECT_EQ(produced[i].base_offset, produced[0].base_offset + static_cast<int64_t>(i));
  }
  ASSERT_TRUE(forwarded.ok()) << forwarded.status().to_string();
  EXPECT_EQ(forwarded->error_code, 0) << forwarded->error_message.value_or("");
  EXPECT_EQ(forwarded->base_offset, produced[0].base_offset + 5) << "the leader's offset, right after the others";
  EXPECT_EQ(fetched, (std::vector<std::string>{"v0", "v1", "v2", "v3", "v4", "v5"}));
}

}  // namespace
}  // namespace sluice
