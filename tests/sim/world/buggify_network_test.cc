// BUGGIFY's stream sites through a SimNode's Env: short reads and split writes that keep every byte and its order,
// and none of it on a node that does not enable BUGGIFY.
#include "core/env/buggify_network.h"

#include <gtest/gtest.h>

#include <string>

#include "sim/world/sim_cluster.h"
#include "tests/probe_hits.h"

namespace sluice {
namespace {

using namespace std::chrono_literals;

struct Exchange {
  std::string received;
  int reads = 0;
  bool done = false;
};

// n2 writes `messages` messages of 1000 bytes to n1 (half of them gathered), which reads until end of stream.
Exchange exchange(bool buggify, int messages) {
  SimCluster cluster(3, LogLevel::kOff);
  SimNode& server = cluster.add_node();
  SimNode& client = cluster.add_node();
  if (buggify) {
    for (SimNode* node : {&server, &client}) node->buggify().enable(11, node->random().fork(1), 1.0, 1.0);
  }
  Exchange out;
  server.boot([&out](Env env) {
    auto listener = env.net.listen({"n1", 9000});
    ASSERT_TRUE(listener.ok());
    auto stream = (*listener)->accept();
    ASSERT_TRUE(stream.ok());
    uint8_t buffer[4096];
    while (true) {
      Result<size_t> n = (*stream)->read_some(buffer);
      ASSERT_TRUE(n.ok()) << n.status().to_string();
      if (*n == 0) break;
      ++out.reads;
      out.received.append(reinterpret_cast<const char*>(buffer), *n);
    }
    out.done = true;
  });
  client.boot([messages](Env env) {
    env.scheduler.sleep_for(1ms);
    auto stream = env.net.connect({"n1", 9000});
    ASSERT_TRUE(stream.ok());
    for (int i = 0; i < messages; ++i) {
      const std::string text(1000, static_cast<char>('a' + i % 26));
      if (i % 2 == 0) {
        ASSERT_TRUE((*stream)->write_all(as_bytes(text)).ok());
      } else {
        const ByteView all = as_bytes(text);
        const std::array<ByteView, 3> parts{all.first(10), all.subspan(10, 500), all.subspan(510)};
        ASSERT_TRUE((*stream)->write_all_gathered(parts).ok());
      }
    }
    (*stream)->close();
  });
  cluster.world().run_until([&] { return out.done; }, cluster.world().now() + 10s);
  return out;
}

std::string expected(int messages) {
  std::string all;
  for (int i = 0; i < messages; ++i) all += std::string(1000, static_cast<char>('a' + i % 26));
  return all;
}

TEST(BuggifyNetwork, ShortReadsAndSplitWritesKeepEveryByteInOrder) {
  const uint64_t short_reads = probe_hits("buggify.stream.short-read");
  const uint64_t split_writes = probe_hits("buggify.stream.split-write");
  const Exchange on = exchange(true, 40);
  ASSERT_TRUE(on.done);
  EXPECT_EQ(on.received, expected(40));
  EXPECT_GT(on.reads, 80);  // every read cut short, every write in two pieces
  EXPECT_GT(probe_hits("buggify.stream.short-read"), short_reads);
  EXPECT_EQ(probe_hits("buggify.stream.split-write"), split_writes + 40);
}

TEST(BuggifyNetwork, ANodeWithoutBuggifyNeverCuts) {
  const uint64_t short_reads = probe_hits("buggify.stream.short-read");
  const uint64_t split_writes = probe_hits("buggify.stream.split-write");
  const Exchange off = exchange(false, 40);
  ASSERT_TRUE(off.done);
  EXPECT_EQ(off.received, expected(40));
  EXPECT_LE(off.reads, 40);
  EXPECT_EQ(probe_hits("buggify.stream.short-read"), short_reads);
  EXPECT_EQ(probe_hits("buggify.stream.split-write"), split_writes);
}

TEST(BuggifyNetwork, SimNodeEnablesItForTheRunsSites) {
  SimCluster cluster(3, LogLevel::kOff);
  SimNode& a = cluster.add_node();
  SimNode& b = cluster.add_node();
  EXPECT_FALSE(a.buggify().enabled());
  a.enable_buggify(42);
  b.enable_buggify(42);
  bool checked = false;
  a.boot([&](Env env) {
    EXPECT_TRUE(env.buggify.enabled());
    EXPECT_EQ(&env.buggify, &a.buggify());
    for (int i = 0; i < 50; ++i) {
      const std::string site = "site." + std::to_string(i);
      EXPECT_EQ(env.buggify.site_on(site), b.buggify().site_on(site));  // the same sites on every node
    }
    checked = true;
  });
  cluster.world().run_until([&] { return checked; }, cluster.world().now() + 1s);
  EXPECT_TRUE(checked);
}

}  // namespace
}  // namespace sluice
