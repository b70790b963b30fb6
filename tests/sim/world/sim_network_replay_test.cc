// SimNetwork at a connection's boundary: reset_connections_replaying delivers a broken connection's unread and
// in-flight chunks on the next connection between the two nodes (reordering) and, with resend_read, what the peer
// had read again (duplication); and connect's timeout runs on the connecting node's own, possibly drifted, clock.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "tests/sim/world/sim_network_harness.h"

namespace sluice::simnet_test {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;
using std::chrono::seconds;

// reset_connections_replaying: the old connection's unread and in-flight chunks reach the peer on the next
// connection between the two, after its sender's first two chunks (reordering); with resend_read, the chunks the
// peer had already read come again first (duplication).
class ReplayTest : public SimNetworkTest {
 protected:
  // A second connection from 2 to 1 on the listener connect_pair made; its streams replace the fixture's.
  void reconnect() {
    client_stream_.reset();
    server_stream_.reset();
    node(1).spawn("accept", [this] {
      auto stream = listener_->accept();
      ASSERT_TRUE(stream.ok()) << stream.status().to_string();
      server_stream_ = std::move(*stream);
    });
    node(2).spawn("connect", [this] {
      auto stream = node(2).network->connect({node(1).host(), 9000});
      ASSERT_TRUE(stream.ok()) << stream.status().to_string();
      client_stream_ = std::move(*stream);
    });
    ASSERT_TRUE(world_.run_until([this] { return client_stream_ != nullptr && server_stream_ != nullptr; },
                                 world_.now() + seconds(1)));
  }
  void write(const char* text) { ASSERT_TRUE(client_stream_->write_all(as_bytes(text)).ok()); }
  std::string reads_on_new_connection() {
    auto at_server = std::make_shared<Collected>();
    collect(1, server_stream_.get(), at_server);
    write("[h]");
    write("[n1]");
    write("[n2]");
    world_.run_for(seconds(1));
    return at_server->bytes;
  }
};

TEST_F(ReplayTest, FramesOfTheOldConnectionArriveAfterTheNewOnesFirstFrames) {
  ASSERT_NO_FATAL_FAILURE(connect_pair(2, 1));
  auto old_reads = std::make_shared<Collected>();
  collect(1, server_stream_.get(), old_reads);
  write("[read]");
  world_.run_for(milliseconds(10));
  write("[f1]");
  write("[f2]");
  world_.run_for(microseconds(10));  // still on the wire
  net_->reset_connections_replaying(1, 2, 9000, /*resend_read=*/false);
  world_.run_for(milliseconds(10));
  EXPECT_EQ(old_reads->bytes, "[read]");
  ASSERT_NO_FATAL_FAILURE(reconnect());
  EXPECT_EQ(reads_on_new_connection(), "[h][n1][f1][f2][n2]");
  EXPECT_EQ(net_->stats().chunks_replayed, 2u);
}

TEST_F(ReplayTest, ResendingRepeatsWhatThePeerHadReadAndOtherPortsAreUntouched) {
  net_->keep_read_chunks(9000);
  ASSERT_NO_FATAL_FAILURE(connect_pair(2, 1));
  auto old_reads = std::make_shared<Collected>();
  collect(1, server_stream_.get(), old_reads);
  write("[r1]");
  world_.run_for(milliseconds(10));
  write("[r2]");
  world_.run_for(milliseconds(10));
  write("[f1]");
  world_.run_for(microseconds(10));
  net_->reset_connections_replaying(1, 2, 9001, /*resend_read=*/true);  // another port: nothing happens
  world_.run_for(milliseconds(10));
  EXPECT_EQ(old_reads->bytes, "[r1][r2][f1]");
  write("[f2]");
  world_.run_for(microseconds(10));
  net_->reset_connections_replaying(1, 2, 9000, /*resend_read=*/true);
  ASSERT_NO_FATAL_FAILURE(reconnect());
  EXPECT_EQ(reads_on_new_connection(), "[h][n1][r2][f1][f2][n2]")
      << "the last two chunks read whole, [r2] and [f1], come again, then what was in flight";
}

// connect's timeout runs on the connecting node's clock: one that drifted ahead of world time (clock-skew) still
// connects (a world-time deadline had always passed on it, and every connect timed out at once).
TEST_F(SimNetworkTest, ANodeWhoseClockRanFastStillConnects) {
  node(1);
  node(2).clock.set_drift(1000);
  world_.run_for(seconds(5));
  ASSERT_GE(node(2).clock.now() - world_.now(), seconds(4));
  ASSERT_NO_FATAL_FAILURE(connect_pair(2, 1));
  EXPECT_EQ(net_->stats().connects_timed_out, 0u);
}

}  // namespace
}  // namespace sluice::simnet_test
