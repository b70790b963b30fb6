// `sluice serve` end to end in this process: it opens the data directory, accepts and logs connections, stops
// gracefully on SIGTERM; bad addresses and taken ports fail with a message and a non-zero code.
#include "net/serve.h"

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>

#include "net/real_env.h"
#include "tests/net/temp_dir.h"

namespace sluice {
namespace {

using namespace std::chrono_literals;
using net_test::TempDir;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(ServeTest, AcceptsConnectionsAndStopsGracefullyOnSigterm) {
  TempDir dir;
  const std::string data_dir = dir / "data";
  {
    RealEnv setup("setup", LogLevel::kOff);  // setup code: runs inline, the loop is not running
    ASSERT_TRUE(setup.env().fs.create_dirs(data_dir + "/topic-0").ok());
    ASSERT_TRUE(setup.env().fs.open(data_dir + "/meta", OpenMode::kCreateNew).ok());
  }
  ServeOptions options;
  options.listen = "127.0.0.1:0";
  options.data_dir = data_dir;
  Address bound;
  ::testing::internal::CaptureStderr();
  const int rc = run_serve(options, [&](Env& env, const Address& address) {
    bound = address;
    env.scheduler.spawn("client", [&env, address] {
      // No ASSERTs before the signal: a client failure must not leave serve running.
      Result<std::unique_ptr<Stream>> first = env.net.connect(address);
      EXPECT_TRUE(first.ok()) << first.status().to_string();
      if (first.ok()) {
        EXPECT_TRUE((*first)->write_all(Bytes(1000, 7)).ok());
        (*first)->close();
      }
      // Left open: the graceful stop must close it.
      Result<std::unique_ptr<Stream>> second = env.net.connect(address);
      EXPECT_TRUE(second.ok()) << second.status().to_string();
      if (second.ok()) {
        EXPECT_TRUE((*second)->write_all(Bytes(10, 7)).ok());
      }
      env.scheduler.sleep_for(200ms);
      ::raise(SIGTERM);
      env.scheduler.sleep_for(10s);  // unwound when serve returns
    });
  });
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(rc, 0) << log;
  EXPECT_NE(bound.port, 0);
  EXPECT_TRUE(contains(log, "data directory " + data_dir + " holds 2 entries: meta, topic-0/")) << log;
  EXPECT_TRUE(contains(log, "listening on 127.0.0.1:" + std::to_string(bound.port))) << log;
  EXPECT_TRUE(contains(log, "accepted connection from 127.0.0.1:")) << log;
  EXPECT_TRUE(contains(log, "closed after 1000 bytes")) << log;
  EXPECT_TRUE(contains(log, "closed after 10 bytes")) << log;
  EXPECT_TRUE(contains(log, "stopping")) << log;
  EXPECT_TRUE(contains(log, "stopped")) << log;
}

TEST(ServeTest, CreatesAMissingDataDirectory) {
  TempDir dir;
  ServeOptions options;
  options.listen = "127.0.0.1:0";
  options.data_dir = dir / "a/b/data";
  ::testing::internal::CaptureStderr();
  const int rc = run_serve(options, [](Env& env, const Address&) { ::raise(SIGINT); });
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(rc, 0) << log;
  EXPECT_TRUE(contains(log, "is empty")) << log;
  EXPECT_TRUE(contains(log, "stopped")) << log;
}

TEST(ServeTest, MalformedListenAddressFails) {
  ServeOptions options;
  options.listen = "no-port-here";
  ::testing::internal::CaptureStderr();
  const int rc = run_serve(options);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(rc, 0);
  EXPECT_TRUE(contains(err, "invalid listen address")) << err;
}

TEST(ServeTest, PortInUseFails) {
  TempDir dir;
  RealEnv other("other", LogLevel::kOff);
  Result<std::unique_ptr<Listener>> taken = other.env().net.listen(Address{"127.0.0.1", 0});
  ASSERT_TRUE(taken.ok()) << taken.status().to_string();
  ServeOptions options;
  options.listen = (*taken)->address().to_string();
  options.data_dir = dir / "data";
  ::testing::internal::CaptureStderr();
  const int rc = run_serve(options);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(rc, 0);
  EXPECT_TRUE(contains(err, "cannot listen on " + options.listen)) << err;
  EXPECT_TRUE(contains(err, "AddressInUse")) << err;
}

TEST(ServeTest, UnusableDataDirectoryFails) {
  TempDir dir;
  RealEnv setup("setup", LogLevel::kOff);
  ASSERT_TRUE(setup.env().fs.open(dir / "file", OpenMode::kCreateNew).ok());
  ServeOptions options;
  options.listen = "127.0.0.1:0";
  options.data_dir = dir / "file/data";  // under a regular file
  ::testing::internal::CaptureStderr();
  const int rc = run_serve(options);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(rc, 0);
  EXPECT_TRUE(contains(err, "cannot create data directory")) << err;
}

}  // namespace
}  // namespace sluice
