// SimNetwork: streams, handshakes and closes between simulated nodes, in virtual time. Faults, crashes and
// determinism are in sim_network_fault_test.cc; the harness is in sim_network_harness.h.
#include <gtest/gtest.h>

#include <string>

#include "tests/sim/world/sim_network_harness.h"

namespace sluice::simnet_test {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;
using std::chrono::seconds;

TEST_F(SimNetworkTest, EchoRoundTripWithinLatencyBounds) {
  auto listener = node(1).network->listen({"n1", 9000});
  ASSERT_TRUE(listener.ok()) << listener.status().to_string();
  listener_ = std::move(*listener);
  struct Times {
    Instant connect_start, connected, sent, server_received, echoed;
    Address client_local, client_peer, server_local, server_peer;
    bool done = false;
  };
  auto times = std::make_shared<Times>();
  node(1).spawn("echo", [this, times] {
    auto stream = listener_->accept();
    ASSERT_TRUE(stream.ok());
    times->server_local = (*stream)->local();
    times->server_peer = (*stream)->peer();
    uint8_t buffer[16];
    for (;;) {
      Result<size_t> n = (*stream)->read_some(buffer);
      if (!n.ok() || *n == 0) return;
      times->server_received = world_.now();
      ASSERT_TRUE((*stream)->write_all(ByteView(buffer, *n)).ok());
    }
  });
  node(2).spawn("client", [this, times] {
    times->connect_start = world_.now();
    auto stream = node(2).network->connect({"n1", 9000});
    ASSERT_TRUE(stream.ok()) << stream.status().to_string();
    times->connected = world_.now();
    times->client_local = (*stream)->local();
    times->client_peer = (*stream)->peer();
    times->sent = world_.now();
    ASSERT_TRUE((*stream)->write_all(as_bytes("ping")).ok());
    Result<std::string> echo = read_text(**stream, 4);
    ASSERT_TRUE(echo.ok());
    EXPECT_EQ(*echo, "ping");
    times->echoed = world_.now();
    times->done = true;
  });
  ASSERT_TRUE(world_.run_until([&] { return times->done; }, world_.now() + seconds(1)));
  const SimNetworkConfig config;
  EXPECT_GE(times->connected - times->connect_start, 2 * config.latency_min);
  EXPECT_LE(times->connected - times->connect_start, 2 * config.latency_max);
  EXPECT_GE(times->server_received - times->sent, config.latency_min);
  EXPECT_LE(times->server_received - times->sent, config.latency_max);
  EXPECT_GE(times->echoed - times->sent, 2 * config.latency_min);
  EXPECT_LE(times->echoed - times->sent, 2 * config.latency_max);
  EXPECT_EQ(times->client_peer, (Address{"n1", 9000}));
  EXPECT_EQ(times->server_local, (Address{"n1", 9000}));
  EXPECT_EQ(times->server_peer, times->client_local);
  EXPECT_EQ(times->client_local.host, "n2");
  EXPECT_EQ(net_->stats().connections, 1u);
  EXPECT_EQ(net_->stats().accepts, 1u);
  EXPECT_EQ(net_->stats().bytes_delivered, 8u);
}

TEST_F(SimNetworkTest, ManyChunksArriveCompleteAndInOrder) {
  ASSERT_NO_FATAL_FAILURE(connect_pair(2, 1));
  auto received = std::make_shared<Collected>();
  collect(1, server_stream_.get(), received);
  std::string sent;
  for (int i = 0; i < 400; ++i) {
    std::string chunk(static_cast<size_t>(1 + (i * 37) % 300), '\0');
    for (size_t j = 0; j < chunk.size(); ++j) chunk[j] = static_cast<char>((sent.size() + j) % 251);
    sent += chunk;
  }
  node(2).spawn("writer", [this, sent] {
    // Several writes per virtual instant and some across time, so that arrival times are drawn out of order.
    size_t offset = 0;
    for (int i = 0; offset < sent.size(); ++i) {
      const size_t size = std::min(sent.size() - offset, static_cast<size_t>(1 + (i * 37) % 300));
      ASSERT_TRUE(client_stream_->write_all(as_bytes(std::string_view(sent).substr(offset, size))).ok());
      offset += size;
      if (i % 7 == 0) node(2).scheduler->sleep_for(microseconds(150));
    }
    client_stream_->close();
  });
  ASSERT_TRUE(world_.run_until([&] { return received->end.has_value(); }, world_.now() + seconds(5)));
  EXPECT_TRUE(received->eof);
  ASSERT_EQ(received->bytes.size(), sent.size());
  EXPECT_TRUE(received->bytes == sent);
  EXPECT_EQ(net_->stats().bytes_delivered, sent.size());
  EXPECT_EQ(net_->stats().bytes_dropped, 0u);
}

TEST_F(SimNetworkTest, ConnectWithoutListenerIsRefusedAfterARoundTrip) {
  auto result = std::make_shared<std::optional<Status>>();
  auto elapsed = std::make_shared<Duration>();
  node(1);
  node(2).spawn("client", [this, result, elapsed] {
    const Instant start = world_.now();
    auto stream = node(2).network->connect({"n1", 7777});
    *elapsed = world_.now() - start;
    *result = stream.status();
  });
  ASSERT_TRUE(world_.run_until([&] { return result->has_value(); }, world_.now() + seconds(5)));
  EXPECT_EQ((*result)->code(), Code::kConnectionRefused) << (*result)->to_string();
  EXPECT_GE(*elapsed, 2 * SimNetworkConfig().latency_min);
  EXPECT_LE(*elapsed, 2 * SimNetworkConfig().latency_max);
  EXPECT_EQ(net_->stats().connects_refused, 1u);
}

TEST_F(SimNetworkTest, ConnectToUnknownHostIsNotFound) {
  auto result = std::make_shared<std::optional<Status>>();
  node(1).spawn("client", [this, result] { *result = node(1).network->connect({"n9", 9000}).status(); });
  ASSERT_TRUE(world_.run_until([&] { return result->has_value(); }, world_.now() + seconds(1)));
  EXPECT_EQ((*result)->code(), Code::kNotFound);
}

TEST_F(SimNetworkTest, ListenValidatesAddresses) {
  auto first = node(1).network->listen({"n1", 9000});
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(node(1).network->listen({"n1", 9000}).status().code(), Code::kAddressInUse);
  EXPECT_EQ(node(1).network->listen({"n2", 9001}).status().code(), Code::kInvalidArgument);
  auto any_port = node(1).network->listen({"0.0.0.0", 0});
  ASSERT_TRUE(any_port.ok());
  EXPECT_EQ((*any_port)->address().host, "n1");
  EXPECT_NE((*any_port)->address().port, 0);
  EXPECT_NE((*any_port)->address().port, 9000);
  (*first)->close();
  EXPECT_TRUE(node(1).network->listen({"n1", 9000}).ok());  // the port is free again
}

TEST_F(SimNetworkTest, LoopbackConnectionWithinOneNode) {
  auto listener = node(1).network->listen({"0.0.0.0", 0});
  ASSERT_TRUE(listener.ok());
  listener_ = std::move(*listener);
  const uint16_t port = listener_->address().port;
  auto echoed = std::make_shared<std::string>();
  node(1).spawn("server", [this] {
    auto stream = listener_->accept();
    ASSERT_TRUE(stream.ok());
    Result<std::string> got = read_text(**stream, 4);
    ASSERT_TRUE(got.ok());
    ASSERT_TRUE((*stream)->write_all(as_bytes(*got)).ok());
  });
  node(1).spawn("client", [this, port, echoed] {
    auto stream = node(1).network->connect({"localhost", port});
    ASSERT_TRUE(stream.ok()) << stream.status().to_string();
    EXPECT_EQ((*stream)->peer(), (Address{"n1", port}));
    ASSERT_TRUE((*stream)->write_all(as_bytes("self")).ok());
    Result<std::string> got = read_text(**stream, 4);
    ASSERT_TRUE(got.ok());
    *echoed = *got;
  });
  ASSERT_TRUE(world_.run_until([&] { return *echoed == "self"; }, world_.now() + seconds(1)));
  net_->partition(1, 1);  // a node always reaches itself
  EXPECT_FALSE(net_->blocked(1, 1));
}

TEST_F(SimNetworkTest, ListenerCloseWakesAcceptAndRefusesLaterConnects) {
  auto listener = node(1).network->listen({"n1", 9000});
  ASSERT_TRUE(listener.ok());
  listener_ = std::move(*listener);
  auto accept_status = std::make_shared<std::optional<Status>>();
  auto connect_status = std::make_shared<std::optional<Status>>();
  node(1).spawn("acceptor", [this, accept_status] { *accept_status = listener_->accept().status(); });
  node(1).spawn("closer", [this] {
    node(1).scheduler->sleep_for(milliseconds(10));
    listener_->close();
    listener_->close();  // idempotent
  });
  ASSERT_TRUE(world_.run_until([&] { return accept_status->has_value(); }, world_.now() + seconds(1)));
  EXPECT_EQ((*accept_status)->code(), Code::kClosed);
  EXPECT_EQ(listener_->accept().status().code(), Code::kClosed);  // no wait once closed
  node(2).spawn("client", [this, connect_status] {
    *connect_status = node(2).network->connect({"n1", 9000}).status();
  });
  ASSERT_TRUE(world_.run_until([&] { return connect_status->has_value(); }, world_.now() + seconds(5)));
  EXPECT_EQ((*connect_status)->code(), Code::kConnectionRefused);
}

TEST_F(SimNetworkTest, UnacceptedConnectionIsResetWhenListenerCloses) {
  auto listener = node(1).network->listen({"n1", 9000});
  ASSERT_TRUE(listener.ok());
  listener_ = std::move(*listener);
  node(2).spawn("client", [this] {
    auto stream = node(2).network->connect({"n1", 9000});
    ASSERT_TRUE(stream.ok());
    client_stream_ = std::move(*stream);
  });
  ASSERT_TRUE(world_.run_until([&] { return client_stream_ != nullptr; }, world_.now() + seconds(1)));
  auto received = std::make_shared<Collected>();
  collect(2, client_stream_.get(), received);
  listener_->close();  // from the driver: the connection in the backlog was never accepted
  ASSERT_TRUE(world_.run_until([&] { return received->end.has_value(); }, world_.now() + seconds(1)));
  EXPECT_EQ(received->end->code(), Code::kConnectionReset);
}

TEST_F(SimNetworkTest, CloseGivesPeerEndOfStreamAndLocalClosed) {
  ASSERT_NO_FATAL_FAILURE(connect_pair(2, 1));
  auto received = std::make_shared<Collected>();
  collect(1, server_stream_.get(), received);
  auto after_close = std::make_shared<std::vector<Status>>();
  node(2).spawn("writer", [this, after_close] {
    ASSERT_TRUE(client_stream_->write_all(as_bytes("last words")).ok());
    client_stream_->close();
    client_stream_->close();  // idempotent
    uint8_t buffer[4];
    after_close->push_back(client_stream_->read_some(buffer).status());
    after_close->push_back(client_stream_->write_all(as_bytes("more")));
  });
  ASSERT_TRUE(world_.run_until([&] { return received->end.has_value(); }, world_.now() + seconds(1)));
  EXPECT_TRUE(received->eof);
  EXPECT_EQ(received->bytes, "last words");
  ASSERT_EQ(after_close->size(), 2u);
  EXPECT_EQ((*after_close)[0].code(), Code::kClosed);
  EXPECT_EQ((*after_close)[1].code(), Code::kClosed);
  uint8_t buffer[4];
  Result<size_t> again = server_stream_->read_some(buffer);  // end of stream stays end of stream
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, 0u);
}

TEST_F(SimNetworkTest, CloseFromAnotherFiberWakesBlockedRead) {
  ASSERT_NO_FATAL_FAILURE(connect_pair(2, 1));
  auto received = std::make_shared<Collected>();
  collect(1, server_stream_.get(), received);
  const Instant start = world_.now();
  node(1).spawn("deadline", [this] {
    node(1).scheduler->sleep_for(milliseconds(25));
    server_stream_->close();
  });
  ASSERT_TRUE(world_.run_until([&] { return received->end.has_value(); }, world_.now() + seconds(1)));
  EXPECT_EQ(received->end->code(), Code::kClosed);
  EXPECT_EQ(world_.now() - start, milliseconds(25));
  // The peer reads end of stream.
  auto client_side = std::make_shared<Collected>();
  collect(2, client_stream_.get(), client_side);
  ASSERT_TRUE(world_.run_until([&] { return client_side->end.has_value(); }, world_.now() + seconds(1)));
  EXPECT_TRUE(client_side->eof);
}

TEST_F(SimNetworkTest, WritingToAClosedPeerEndsInReset) {
  ASSERT_NO_FATAL_FAILURE(connect_pair(2, 1));
  server_stream_->close();
  auto write_status = std::make_shared<std::optional<Status>>();
  node(2).spawn("writer", [this, write_status] {
    for (int i = 0; i < 1000; ++i) {
      Status status = client_stream_->write_all(as_bytes("into the void"));
      if (!status.ok()) {
        *write_status = status;
        return;
      }
      node(2).scheduler->sleep_for(milliseconds(1));
    }
  });
  ASSERT_TRUE(world_.run_until([&] { return write_status->has_value(); }, world_.now() + seconds(5)));
  EXPECT_EQ((*write_status)->code(), Code::kConnectionReset);
  EXPECT_GT(net_->stats().bytes_dropped, 0u);
}

// Deliveries still in flight when the fabric goes run as world events that do nothing (they hold the connection,
// which outlives the fabric; AddressSanitizer sees any use of the fabric itself).
TEST_F(SimNetworkTest, DeliveriesPendingWhenTheFabricIsGoneDoNothing) {
  ASSERT_NO_FATAL_FAILURE(connect_pair(2, 1));
  ASSERT_TRUE(client_stream_->write_all(as_bytes("in flight")).ok());  // unbounded window: never parks
  ASSERT_TRUE(server_stream_->write_all(as_bytes("the other way")).ok());
  client_stream_.reset();  // closes: a FIN in flight too
  server_stream_.reset();
  listener_.reset();
  const size_t in_flight = world_.pending_events();
  EXPECT_GE(in_flight, 4u);
  net_.reset();
  world_.run_for(seconds(1));
  EXPECT_EQ(world_.pending_events(), 0u);
}

TEST_F(SimNetworkTest, BoundedWindowParksWriterUntilReaderDrains) {
  SimNetworkConfig config;
  config.send_window_bytes = 1000;
  configure(config);
  ASSERT_NO_FATAL_FAILURE(connect_pair(2, 1));
  const std::string payload(5000, 'w');
  auto wrote = std::make_shared<bool>(false);
  node(2).spawn("writer", [this, payload, wrote] {
    ASSERT_TRUE(client_stream_->write_all(as_bytes(payload)).ok());
    *wrote = true;
  });
  world_.run_for(milliseconds(100));
  EXPECT_FALSE(*wrote);
  EXPECT_EQ(net_->stats().bytes_sent, 1000u);  // one window, sitting unread at the server
  auto received = std::make_shared<Collected>();
  collect(1, server_stream_.get(), received);
  ASSERT_TRUE(world_.run_until([&] { return *wrote && received->bytes.size() == payload.size(); },
                               world_.now() + seconds(1)));
  EXPECT_EQ(received->bytes, payload);
  // A writer parked on a full window wakes with kClosed when another fiber closes the stream.
  auto status = std::make_shared<std::optional<Status>>();
  server_stream_.reset();
  node(2).spawn("writer",
                [this, status] { *status = client_stream_->write_all(as_bytes(std::string(3000, 'x'))); });
  node(2).spawn("closer", [this] {
    node(2).scheduler->sleep_for(microseconds(10));
    client_stream_->close();
  });
  ASSERT_TRUE(world_.run_until([&] { return status->has_value(); }, world_.now() + seconds(1)));
  EXPECT_EQ((*status)->code(), Code::kClosed) << (*status)->to_string();
}

TEST_F(SimNetworkTest, LinkLatencyOverrideAndSpike) {
  ASSERT_NO_FATAL_FAILURE(connect_pair(2, 1));
  net_->set_link_latency(2, 1, milliseconds(50), milliseconds(50));
  auto received = std::make_shared<Collected>();
  collect(1, server_stream_.get(), received);
  const Instant sent = world_.now();
  node(2).spawn("writer", [this] { ASSERT_TRUE(client_stream_->write_all(as_bytes("slow")).ok()); });
  ASSERT_TRUE(world_.run_until([&] { return !received->arrivals.empty(); }, world_.now() + seconds(1)));
  EXPECT_EQ(received->arrivals[0] - sent, milliseconds(50));

  net_->clear_link_latency(2, 1);
  net_->latency_spike(milliseconds(200), seconds(1));
  const Instant spiked = world_.now();
  node(2).spawn("writer", [this] { ASSERT_TRUE(client_stream_->write_all(as_bytes("jam")).ok()); });
  ASSERT_TRUE(world_.run_until([&] { return received->arrivals.size() == 2; }, world_.now() + seconds(1)));
  EXPECT_GE(received->arrivals[1] - spiked, SimNetworkConfig().latency_min);
  EXPECT_LE(received->arrivals[1] - spiked, SimNetworkConfig().latency_max + milliseconds(200));
  EXPECT_EQ(received->bytes, "slowjam");
}

}  // namespace
}  // namespace sluice::simnet_test
