// The client (core/client) on the real Env against a real `sluice serve` on 127.0.0.1, port 0: the same code the
// simulator's workloads run, over epoll sockets and the real clock. Serve and the client share the process's event
// loop: the client runs on a fiber of it, as serve_test.cc's clients do.
#include <gtest/gtest.h>

#include <csignal>

#include "core/client/client.h"
#include "net/real_env.h"
#include "net/serve.h"
#include "tests/net/temp_dir.h"

namespace sluice {
namespace {

using namespace std::chrono_literals;
using namespace sluice::client;

ProducerRecord make_record(const std::string& key, const std::string& value) {
  ProducerRecord out;
  out.key = to_bytes(key);
  out.value = to_bytes(value);
  return out;
}

struct Transcript {
  bool created = false;
  std::vector<ProduceResult> produced;
  std::vector<std::string> fetched;
  int64_t latest = -1;
  std::vector<TopicPartitionId> assignment;
  int64_t committed = -1;
};

void exercise(Env& env, const Address& address, Transcript& t) {
  ClientConfig config;
  config.bootstrap = {address};
  config.request_timeout = 5s;
  Client client(env, config);
  t.created = client.create_topic({"real", 2, 1, {}}).ok();
  ProducerConfig producer_config;
  producer_config.idempotent = true;
  producer_config.compression = storage::Compression::kLz4;
  Producer producer(client, producer_config);
  for (int i = 0; i < 5; ++i) {
    producer.send({"real", 1}, {make_record("k", "v" + std::to_string(i))},
                  [&t](const ProduceResult& result) { t.produced.push_back(result); });
  }
  producer.flush();
  Result<FetchResult> fetched = client.fetch({"real", 1}, 2);
  if (fetched.ok()) {
    for (const FetchedRecord& r : fetched->records) t.fetched.emplace_back(as_chars(*r.value));
  }
  Result<ListedOffset> latest = client.list_offset({"real", 1}, kLatestTimestamp);
  if (latest.ok()) t.latest = latest->offset;
  GroupConfig group;
  group.group_id = "real-readers";
  group.topics = {"real"};
  GroupMember member(client, group);
  if (member.join(env.clock.now() + 20s).ok()) {
    t.assignment = member.assignment();
    if (member.commit({{{"real", 1}, 5}}).ok()) {
      Result<std::map<TopicPartitionId, int64_t>> committed = member.committed({{"real", 1}});
      if (committed.ok()) t.committed = committed->at({"real", 1});
    }
    member.leave().ignore();
  }
}

TEST(ClientServeTest, ProducesFetchesAndJoinsAGroupOnARealServe) {
  net_test::TempDir dir;
  ServeFlags flags;
  flags.listen = "127.0.0.1:0";
  flags.data_dir = dir / "data";
  flags.settings = {"group.initial.rebalance.delay.ms=0"};
  flags.log_level = LogLevel::kOff;
  Transcript t;
  const int rc = run_serve_command(flags, [&t](Env& env, const Address& address) {
    env.scheduler.spawn("client", [&env, address, &t] {
      exercise(env, address, t);
      ::raise(SIGTERM);
      env.scheduler.sleep_for(10s);  // unwound when serve returns
    });
  });
  EXPECT_EQ(rc, 0);
  EXPECT_TRUE(t.created);
  ASSERT_EQ(t.produced.size(), 5u);
  for (size_t i = 0; i < t.produced.size(); ++i) {
    EXPECT_EQ(t.produced[i].outcome, Outcome::kOk) << t.produced[i].error;
    EXPECT_EQ(t.produced[i].base_offset, static_cast<int64_t>(i));
    EXPECT_EQ(t.produced[i].base_sequence, static_cast<int32_t>(i));
  }
  EXPECT_EQ(t.fetched, (std::vector<std::string>{"v2", "v3", "v4"}));
  EXPECT_EQ(t.latest, 5);
  EXPECT_EQ(t.assignment, (std::vector<TopicPartitionId>{{"real", 0}, {"real", 1}}));
  EXPECT_EQ(t.committed, 5);
}

}  // namespace
}  // namespace sluice
