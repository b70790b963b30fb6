// EpollNetwork on 127.0.0.1: echo round trip, end of stream, close() waking blocked fibers, refused and reset
// connections, taken ports.
#include "net/epoll_network.h"

#include <gtest/gtest.h>

#include <array>
#include <chrono>

#include "core/env/sync.h"
#include "net/real_env.h"

namespace sluice {
namespace {

using namespace std::chrono_literals;

const Address kAnyLocalPort{"127.0.0.1", 0};

std::unique_ptr<Listener> listen_or_die(Env& env, const Address& address = kAnyLocalPort) {
  Result<std::unique_ptr<Listener>> listener = env.net.listen(address);
  SLUICE_ASSERT_MSG(listener.ok(), listener.status().to_string().c_str());
  return std::move(listener).value();
}

Bytes pattern(size_t size) {
  Bytes out(size);
  for (size_t i = 0; i < size; ++i) out[i] = static_cast<uint8_t>((i * 131) ^ (i >> 11));
  return out;
}

TEST(EpollNetworkTest, EchoRoundTripOfSeveralMegabytes) {
  RealEnv real("net", LogLevel::kOff);
  ASSERT_EQ(real.run([&](Env& env) {
    std::unique_ptr<Listener> listener = listen_or_die(env);
    const Address bound = listener->address();
    EXPECT_EQ(bound.host, "127.0.0.1");
    EXPECT_NE(bound.port, 0);
    Address server_saw_peer;
    FiberRef echo = env.scheduler.spawn("echo", [&] {
      auto stream = std::move(listener->accept()).value();
      server_saw_peer = stream->peer();
      Bytes buffer(64 * 1024);
      while (true) {
        Result<size_t> n = stream->read_some(buffer);
        ASSERT_TRUE(n.ok()) << n.status().to_string();
        if (*n == 0) break;
        ASSERT_TRUE(stream->write_all(ByteView(buffer.data(), *n)).ok());
      }
      stream->close();
    });
    Result<std::unique_ptr<Stream>> client = env.net.connect(bound);
    ASSERT_TRUE(client.ok()) << client.status().to_string();
    Stream& stream = **client;
    EXPECT_EQ(stream.peer(), bound);
    // More than the socket buffers hold: both sides must wait for writability on the way.
    const Bytes sent = pattern(8 << 20);
    FiberRef writer = env.scheduler.spawn("writer", [&] { ASSERT_TRUE(stream.write_all(sent).ok()); });
    Bytes received(sent.size());
    ASSERT_TRUE(read_exact(stream, received).ok());
    EXPECT_TRUE(received == sent);
    env.scheduler.join(writer);
    stream.close();
    env.scheduler.join(echo);
    EXPECT_EQ(server_saw_peer, stream.local());
  }), 0);
}

// A response is sent as header + body in one gathered write: the peer must read exactly their concatenation, also
// when the kernel takes a part only partly (the body is larger than the socket buffers) and when a part is empty.
TEST(EpollNetworkTest, GatheredWriteDeliversThePartsBackToBack) {
  RealEnv real("net", LogLevel::kOff);
  ASSERT_EQ(real.run([&](Env& env) {
    std::unique_ptr<Listener> listener = listen_or_die(env);
    const Bytes head = pattern(7);
    const Bytes body = pattern(6 << 20);
    const Bytes tail = pattern(3);
    Bytes expected;
    for (const Bytes* part : {&head, &body, &tail}) expected.insert(expected.end(), part->begin(), part->end());
    FiberRef sender = env.scheduler.spawn("sender", [&] {
      auto stream = std::move(listener->accept()).value();
      const std::array<ByteView, 4> parts{ByteView(head), ByteView(), ByteView(body), ByteView(tail)};
      ASSERT_TRUE(stream->write_all_gathered(parts).ok());
      stream->close();
    });
    auto client = std::move(env.net.connect(listener->address())).value();
    Bytes received(expected.size());
    ASSERT_TRUE(read_exact(*client, received).ok());
    EXPECT_TRUE(received == expected);
    std::array<uint8_t, 1> after{};
    EXPECT_EQ(client->read_some(after).value(), 0u);  // nothing beyond the parts
    env.scheduler.join(sender);
  }), 0);
}

TEST(EpollNetworkTest, ReadSeesEndOfStreamWhenThePeerCloses) {
  RealEnv real("net", LogLevel::kOff);
  ASSERT_EQ(real.run([&](Env& env) {
    std::unique_ptr<Listener> listener = listen_or_die(env);
    env.scheduler.spawn("server", [&] {
      auto stream = std::move(listener->accept()).value();
      ASSERT_TRUE(stream->write_all(as_bytes("bye")).ok());
      stream->close();
    });
    auto client = std::move(env.net.connect(listener->address())).value();
    uint8_t buffer[16];
    Bytes got;
    while (true) {
      Result<size_t> n = client->read_some(buffer);
      ASSERT_TRUE(n.ok()) << n.status().to_string();
      if (*n == 0) break;
      got.insert(got.end(), buffer, buffer + *n);
    }
    EXPECT_EQ(as_chars(got), "bye");
    EXPECT_EQ(*client->read_some(buffer), 0u);  // and it stays at end
  }), 0);
}

TEST(EpollNetworkTest, CloseFromAnotherFiberWakesABlockedRead) {
  RealEnv real("net", LogLevel::kOff);
  ASSERT_EQ(real.run([&](Env& env) {
    std::unique_ptr<Listener> listener = listen_or_die(env);
    std::unique_ptr<Stream> server_side;
    env.scheduler.spawn("server", [&] { server_side = std::move(listener->accept()).value(); });
    auto client = std::move(env.net.connect(listener->address())).value();
    // Ready now, it runs once this fiber parks in the read below (fibers run in order, and nothing before the
    // read parks): the close finds the read blocked.
    bool closed_while_reading = false;
    env.scheduler.spawn("closer", [&] {
      closed_while_reading = true;
      client->close();
    });
    uint8_t buffer[16];
    Result<size_t> n = client->read_some(buffer);  // the server never writes
    ASSERT_FALSE(n.ok());
    EXPECT_EQ(n.status().code(), Code::kClosed);
    EXPECT_TRUE(closed_while_reading);
    EXPECT_EQ(client->read_some(buffer).status().code(), Code::kClosed);
    EXPECT_EQ(client->write_all(as_bytes("x")).code(), Code::kClosed);
    client->close();  // idempotent
    // The peer sees an orderly end of stream.
    ASSERT_NE(server_side, nullptr);
    EXPECT_EQ(*server_side->read_some(buffer), 0u);
  }), 0);
}

TEST(EpollNetworkTest, CloseFromAnotherFiberWakesABlockedWrite) {
  RealEnv real("net", LogLevel::kOff);
  ASSERT_EQ(real.run([&](Env& env) {
    std::unique_ptr<Listener> listener = listen_or_die(env);
    std::unique_ptr<Stream> server_side;  // accepts and never reads: the client's writes fill the buffers
    env.scheduler.spawn("server", [&] { server_side = std::move(listener->accept()).value(); });
    auto client = std::move(env.net.connect(listener->address())).value();
    const Bytes huge(64 << 20, 1);
    // Runs once the write parks (the socket buffers cannot take 64 MiB): the close finds the write blocked.
    bool closed_while_writing = false;
    env.scheduler.spawn("closer", [&] {
      closed_while_writing = true;
      client->close();
    });
    EXPECT_EQ(client->write_all(huge).code(), Code::kClosed);
    EXPECT_TRUE(closed_while_writing);
  }), 0);
}

TEST(EpollNetworkTest, CloseWakesABlockedAccept) {
  RealEnv real("net", LogLevel::kOff);
  ASSERT_EQ(real.run([&](Env& env) {
    std::unique_ptr<Listener> listener = listen_or_die(env);
    bool closed_while_accepting = false;
    env.scheduler.spawn("closer", [&] {  // runs once the accept below parks
      closed_while_accepting = true;
      listener->close();
    });
    Result<std::unique_ptr<Stream>> accepted = listener->accept();
    EXPECT_TRUE(closed_while_accepting);
    ASSERT_FALSE(accepted.ok());
    EXPECT_EQ(accepted.status().code(), Code::kClosed);
    EXPECT_EQ(listener->accept().status().code(), Code::kClosed);
  }), 0);
}

TEST(EpollNetworkTest, ConnectToAClosedPortIsRefused) {
  RealEnv real("net", LogLevel::kOff);
  ASSERT_EQ(real.run([&](Env& env) {
    std::unique_ptr<Listener> listener = listen_or_die(env);
    const Address bound = listener->address();
    listener->close();
    Result<std::unique_ptr<Stream>> stream = env.net.connect(bound);
    ASSERT_FALSE(stream.ok());
    EXPECT_EQ(stream.status().code(), Code::kConnectionRefused) << stream.status().to_string();
  }), 0);
}

TEST(EpollNetworkTest, ListenOnATakenPortIsAddressInUse) {
  RealEnv real("net", LogLevel::kOff);
  ASSERT_EQ(real.run([&](Env& env) {
    std::unique_ptr<Listener> first = listen_or_die(env);
    Result<std::unique_ptr<Listener>> second = env.net.listen(first->address());
    ASSERT_FALSE(second.ok());
    EXPECT_EQ(second.status().code(), Code::kAddressInUse) << second.status().to_string();
  }), 0);
}

TEST(EpollNetworkTest, ResetByThePeerIsConnectionReset) {
  RealEnv real("net", LogLevel::kOff);
  ASSERT_EQ(real.run([&](Env& env) {
    std::unique_ptr<Listener> listener = listen_or_die(env);
    Event received(env.scheduler);
    env.scheduler.spawn("server", [&] {
      auto stream = std::move(listener->accept()).value();
      uint8_t one;
      ASSERT_EQ(*stream->read_some(MutableByteView(&one, 1)), 1u);
      received.set();
      stream->close();  // closing with unread bytes sends a reset, not an end of stream
    });
    auto client = std::move(env.net.connect(listener->address())).value();
    ASSERT_TRUE(client->write_all(as_bytes("more than one byte")).ok());
    received.wait();
    uint8_t buffer[16];
    Result<size_t> n = client->read_some(buffer);
    ASSERT_FALSE(n.ok());
    EXPECT_EQ(n.status().code(), Code::kConnectionReset) << n.status().to_string();
    EXPECT_EQ(client->write_all(as_bytes("x")).code(), Code::kConnectionReset);
  }), 0);
}

TEST(EpollNetworkTest, ReadingABusyStreamLetsOtherFibersRun) {
  RealEnv real("net", LogLevel::kOff);
  ASSERT_EQ(real.run([&](Env& env) {
    std::unique_ptr<Listener> listener = listen_or_die(env);
    FiberRef server = env.scheduler.spawn("server", [&] {
      auto stream = std::move(listener->accept()).value();
      ASSERT_TRUE(stream->write_all(pattern(64 * 1024)).ok());
      stream->close();
    });
    auto client = std::move(env.net.connect(listener->address())).value();
    env.scheduler.join(server);
    uint8_t buffer[1024];
    size_t received = 0;
    while (true) {  // these reads may park while the bytes travel
      Result<size_t> n = client->read_some(buffer);
      ASSERT_TRUE(n.ok()) << n.status().to_string();
      if (*n == 0) break;
      received += *n;
    }
    ASSERT_EQ(received, 64u * 1024);
    // At the end of the stream every read answers at once and never parks: a reader that kept asking would
    // starve the loop's other fibers, unless the stream yields.
    bool reading = true;
    int other_steps = 0;
    FiberRef other = env.scheduler.spawn("other", [&] {
      while (reading) {
        ++other_steps;
        env.scheduler.yield();
      }
    });
    for (int i = 0; i < 64; ++i) ASSERT_EQ(*client->read_some(buffer), 0u);
    reading = false;
    env.scheduler.join(other);
    // 64 reads that never park: the reader yielded every 16 of them.
    EXPECT_GE(other_steps, 3);
  }), 0);
}

TEST(EpollNetworkTest, ConnectResolvesLocalhost) {
  RealEnv real("net", LogLevel::kOff);
  ASSERT_EQ(real.run([&](Env& env) {
    std::unique_ptr<Listener> listener = listen_or_die(env, Address{"localhost", 0});
    EXPECT_EQ(listener->address().host, "127.0.0.1");
    env.scheduler.spawn("server", [&] {
      auto stream = std::move(listener->accept()).value();
      ASSERT_TRUE(stream->write_all(as_bytes("hi")).ok());
    });
    auto client = std::move(env.net.connect(Address{"localhost", listener->address().port})).value();
    uint8_t buffer[2];
    ASSERT_TRUE(read_exact(*client, buffer).ok());
    EXPECT_EQ(as_chars(ByteView(buffer, 2)), "hi");
  }), 0);
}

TEST(EpollNetworkTest, Ipv6LoopbackWhenAvailable) {
  RealEnv real("net", LogLevel::kOff);
  bool available = true;
  ASSERT_EQ(real.run([&](Env& env) {
    Result<std::unique_ptr<Listener>> listener = env.net.listen(Address{"::1", 0});
    if (!listener.ok()) {
      available = false;
      return;
    }
    EXPECT_EQ((*listener)->address().to_string().front(), '[');
    FiberRef server = env.scheduler.spawn("server", [&] { (void)(*listener)->accept(); });
    Result<std::unique_ptr<Stream>> client = env.net.connect((*listener)->address());
    env.scheduler.join(server);
    ASSERT_TRUE(client.ok()) << client.status().to_string();
    EXPECT_EQ((*client)->peer().host, "::1");
  }), 0);
  if (!available) GTEST_SKIP() << "no IPv6 loopback here";
}

TEST(EpollNetworkTest, UnknownHostIsNotFound) {
  RealEnv real("net", LogLevel::kOff);
  ASSERT_EQ(real.run([&](Env& env) {
    Result<std::unique_ptr<Stream>> stream = env.net.connect(Address{"no-such-host.invalid", 9});
    ASSERT_FALSE(stream.ok());
    EXPECT_EQ(stream.status().code(), Code::kNotFound) << stream.status().to_string();
  }), 0);
}

}  // namespace
}  // namespace sluice
