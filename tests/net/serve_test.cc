// `sluice serve` end to end in this process: it opens the data directory, answers Kafka requests, stops
// gracefully on SIGTERM; bad addresses, taken ports and bad configuration fail with a message and a non-zero code;
// flags, --set and the --config file combine with the flags winning.
#include "net/serve.h"

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <fstream>

#include "core/protocol/header.h"
#include "core/protocol/messages/api_versions.h"
#include "core/protocol/messages/metadata.h"
#include "net/real_env.h"
#include "tests/net/temp_dir.h"

namespace sluice {
namespace {

using namespace std::chrono_literals;
using net_test::TempDir;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  ASSERT_TRUE(out.good()) << path;
}

// Sends one request and reads its response (no ASSERTs: callers run before a signal that must come).
template <typename Response, typename Request>
Result<Response> call(Stream& stream, protocol::ApiKey key, int16_t version, const Request& request) {
  SLUICE_ASSIGN_OR_RETURN(Bytes frame, protocol::encode_request_frame({key, version, 17, "serve-test"}, request));
  SLUICE_TRY(stream.write_all(frame));
  SLUICE_ASSIGN_OR_RETURN(std::optional<Bytes> response, protocol::read_frame(stream));
  if (!response) return connection_reset("no response");
  ByteView body;
  SLUICE_ASSIGN_OR_RETURN(int32_t correlation_id, protocol::decode_response_header(*response, key, version, &body));
  if (correlation_id != 17) return corruption("correlation id " + std::to_string(correlation_id));
  return protocol::decode_message<Response>(body, version);
}

// Runs serve with `flags` until the client body returns, then SIGTERMs it; returns serve's exit code.
int serve_and_call(const ServeFlags& flags, const std::function<void(Env&, const Address&)>& client) {
  return run_serve_command(flags, [&client](Env& env, const Address& address) {
    env.scheduler.spawn("client", [&env, address, &client] {
      client(env, address);
      ::raise(SIGTERM);
      env.scheduler.sleep_for(10s);  // unwound when serve returns
    });
  });
}

TEST(ServeTest, AnswersKafkaRequestsAndStopsGracefullyOnSigterm) {
  TempDir dir;
  const std::string data_dir = dir / "data";
  {
    RealEnv setup("setup", LogLevel::kOff);  // setup code: runs inline, the loop is not running
    ASSERT_TRUE(setup.env().fs.create_dirs(data_dir + "/topic-0").ok());
    ASSERT_TRUE(setup.env().fs.open(data_dir + "/meta", OpenMode::kCreateNew).ok());
  }
  ServeFlags flags;
  flags.listen = "127.0.0.1:0";
  flags.data_dir = data_dir;
  Address bound;
  bool answered = false;
  ::testing::internal::CaptureStderr();
  const int rc = serve_and_call(flags, [&](Env& env, const Address& address) {
    bound = address;
    Result<std::unique_ptr<Stream>> first = env.net.connect(address);
    EXPECT_TRUE(first.ok()) << first.status().to_string();
    if (first.ok()) {
      Result<protocol::ApiVersionsResponse> response = call<protocol::ApiVersionsResponse>(
          **first, protocol::ApiKey::kApiVersions, 0, protocol::ApiVersionsRequest{});
      EXPECT_TRUE(response.ok()) << response.status().to_string();
      answered = response.ok() && response->error_code == 0 && !response->api_keys.empty();
      (*first)->close();
    }
    // Left open in the middle of a frame: the graceful stop must close it.
    Result<std::unique_ptr<Stream>> second = env.net.connect(address);
    EXPECT_TRUE(second.ok()) << second.status().to_string();
    if (second.ok()) {
      EXPECT_TRUE((*second)->write_all(Bytes{0, 0, 0, 10, 0}).ok());
    }
    // The broker accepts in order: once a later connection is answered, it holds the second one (no sleep).
    Result<std::unique_ptr<Stream>> third = env.net.connect(address);
    EXPECT_TRUE(third.ok()) << third.status().to_string();
    if (third.ok()) {
      Result<protocol::ApiVersionsResponse> response = call<protocol::ApiVersionsResponse>(
          **third, protocol::ApiKey::kApiVersions, 0, protocol::ApiVersionsRequest{});
      EXPECT_TRUE(response.ok()) << response.status().to_string();
      (*third)->close();
    }
  });
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(rc, 0) << log;
  EXPECT_TRUE(answered);
  EXPECT_NE(bound.port, 0);
  EXPECT_TRUE(contains(log, "data directory " + data_dir + " holds 2 entries: meta, topic-0/")) << log;
  EXPECT_TRUE(contains(log, "listening on 127.0.0.1:" + std::to_string(bound.port))) << log;
  EXPECT_TRUE(contains(log, "advertised as 127.0.0.1:" + std::to_string(bound.port))) << log;
  EXPECT_FALSE(contains(log, "--advertised")) << log;  // no wildcard warning for a loopback listener
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

TEST(ServeTest, FlagsWinOverSetWhichWinsOverTheConfigFile) {
  TempDir dir;
  const std::string config = dir / "server.properties";
  write_file(config,
             "# a Kafka server.properties\n"
             "node.id=5\n"
             "num.partitions=2\n"
             "listeners=PLAINTEXT://127.0.0.1:1111\n"
             "advertised.listeners=PLAINTEXT://file-host:2222\n"
             "log.dirs=" +
                 (dir / "from-file") + "\n");
  ServeFlags flags;
  flags.config_file = config;
  flags.settings = {"num.partitions=3", "log.retention.hours=1", "num.partitions=4"};  // the later --set wins
  Result<ServeOptions> from_file = resolve_serve_options(flags);
  ASSERT_TRUE(from_file.ok()) << from_file.status().to_string();
  EXPECT_EQ(from_file->listen, "127.0.0.1:1111");
  EXPECT_EQ(from_file->advertised, "file-host:2222");
  EXPECT_EQ(from_file->data_dir, dir / "from-file");
  EXPECT_EQ(from_file->broker.node_id, 5);
  EXPECT_EQ(from_file->broker.num_partitions, 4);
  EXPECT_EQ(from_file->broker.storage.topic_defaults.retention_ms, 3600000);
  EXPECT_EQ(from_file->settings.at("num.partitions"), "4");

  flags.listen = "127.0.0.1:0";
  flags.advertised = "flag-host:3333";
  flags.data_dir = dir / "from-flag";
  flags.settings = {"listeners=PLAINTEXT://127.0.0.1:4444", "log.dir=/nowhere"};
  Result<ServeOptions> from_flags = resolve_serve_options(flags);
  ASSERT_TRUE(from_flags.ok()) << from_flags.status().to_string();
  EXPECT_EQ(from_flags->listen, "127.0.0.1:0");
  EXPECT_EQ(from_flags->advertised, "flag-host:3333");
  EXPECT_EQ(from_flags->data_dir, dir / "from-flag");
  EXPECT_EQ(from_flags->broker.num_partitions, 2);  // the file's, no longer overridden
}

// --node-id and --peers are node.id and controller.quorum.voters, winning over the file and --set; a bad value is
// refused at start-up with the setting's name.
TEST(ServeTest, NodeIdAndPeersFlagsMakeAClusterNode) {
  ServeFlags flags;
  flags.settings = {"broker.id=9", "controller.quorum.voters=9@127.0.0.1:1"};
  flags.node_id = 2;
  flags.peers = "1@127.0.0.1:9192,2@127.0.0.1:9193,3@127.0.0.1:9194";
  Result<ServeOptions> options = resolve_serve_options(flags);
  ASSERT_TRUE(options.ok()) << options.status().to_string();
  EXPECT_TRUE(options->broker.cluster_mode());
  EXPECT_EQ(options->broker.node_id, 2);
  EXPECT_EQ(options->broker.controller_quorum_voters.size(), 3u);
  EXPECT_EQ(options->broker.controller_quorum_voters.at(2), (Address{"127.0.0.1", 9193}));
  EXPECT_EQ(options->settings.at("controller.quorum.voters"), *flags.peers);

  flags.node_id = 4;
  Result<ServeOptions> outside = resolve_serve_options(flags);
  ASSERT_FALSE(outside.ok());
  EXPECT_NE(outside.status().message().find("node.id 4 is not one of the voters"), std::string::npos)
      << outside.status().to_string();
  flags.node_id = 1;
  flags.peers = "1@127.0.0.1:9192,1@127.0.0.1:9193";
  Result<ServeOptions> duplicate = resolve_serve_options(flags);
  ASSERT_FALSE(duplicate.ok());
  EXPECT_NE(duplicate.status().message().find("node id 1 is given twice"), std::string::npos)
      << duplicate.status().to_string();
}

TEST(ServeTest, NoFlagsIsTheEmbeddedSingleNodeDefault) {
  Result<ServeOptions> options = resolve_serve_options(ServeFlags{});
  ASSERT_TRUE(options.ok()) << options.status().to_string();
  EXPECT_EQ(options->listen, "127.0.0.1:9092");
  EXPECT_EQ(options->advertised, "");
  EXPECT_EQ(options->data_dir, "./sluice-data");
  EXPECT_EQ(options->broker.node_id, 1);
  EXPECT_TRUE(options->settings.empty());
}

TEST(ServeTest, ConfigReachesTheBrokerAndClientsSeeTheAdvertisedAddress) {
  TempDir dir;
  const std::string config = dir / "sluice.properties";
  write_file(config, "node.id: 7\ncluster.id = file-cluster\nlog.dir=" + (dir / "data") + "\n");
  ServeFlags flags;
  flags.listen = "127.0.0.1:0";
  flags.advertised = "broker.example:19092";
  flags.config_file = config;
  std::optional<protocol::MetadataResponse> metadata;
  ::testing::internal::CaptureStderr();
  const int rc = serve_and_call(flags, [&](Env& env, const Address& address) {
    Result<std::unique_ptr<Stream>> stream = env.net.connect(address);
    EXPECT_TRUE(stream.ok()) << stream.status().to_string();
    if (!stream.ok()) return;
    protocol::MetadataRequest request;  // no topics: only the brokers and the cluster
    Result<protocol::MetadataResponse> response =
        call<protocol::MetadataResponse>(**stream, protocol::ApiKey::kMetadata, 4, request);
    EXPECT_TRUE(response.ok()) << response.status().to_string();
    if (response.ok()) metadata = *response;
    (*stream)->close();
  });
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(rc, 0) << log;
  ASSERT_TRUE(metadata.has_value()) << log;
  ASSERT_EQ(metadata->brokers.size(), 1u);
  EXPECT_EQ(metadata->brokers[0].node_id, 7);
  EXPECT_EQ(metadata->brokers[0].host, "broker.example");
  EXPECT_EQ(metadata->brokers[0].port, 19092);
  EXPECT_EQ(metadata->cluster_id, "file-cluster");
  EXPECT_TRUE(contains(log, "settings: cluster.id=file-cluster, log.dir=" + (dir / "data") + ", node.id=7")) << log;
  EXPECT_TRUE(contains(log, "advertised as broker.example:19092")) << log;
  EXPECT_TRUE(contains(log, "data directory " + (dir / "data") + " is empty")) << log;
}

TEST(ServeTest, WildcardListenerWarnsThatClientsWillBeToldIt) {
  TempDir dir;
  ServeFlags flags;
  flags.settings = {"listeners=PLAINTEXT://:0"};  // an empty host: every interface
  flags.data_dir = dir / "data";
  ::testing::internal::CaptureStderr();
  const int rc = serve_and_call(flags, [](Env&, const Address&) {});
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(rc, 0) << log;
  EXPECT_TRUE(contains(log, "listening on every interface (0.0.0.0:")) << log;
  EXPECT_TRUE(contains(log, "clients will be told to connect to 0.0.0.0:")) << log;
  EXPECT_TRUE(contains(log, "pass --advertised HOST:PORT")) << log;
}

// run_serve_command's exit code and stderr for a configuration that must not start.
struct Refusal {
  int rc = 0;
  std::string err;
};

Refusal refuse(const ServeFlags& flags) {
  ::testing::internal::CaptureStderr();
  Refusal refusal;
  refusal.rc = run_serve_command(flags, [](Env&, const Address&) { ::raise(SIGTERM); });
  refusal.err = ::testing::internal::GetCapturedStderr();
  return refusal;
}

TEST(ServeTest, BadConfigurationExitsWithTwoAndNamesTheProblem) {
  TempDir dir;
  ServeFlags flags;
  flags.data_dir = dir / "data";
  flags.listen = "127.0.0.1:0";
  auto with_file = [&](const std::string& text) {
    write_file(dir / "bad.properties", text);
    ServeFlags f = flags;
    f.config_file = dir / "bad.properties";
    return refuse(f);
  };
  const std::vector<std::pair<Refusal, std::string>> cases = {
      {with_file("num.partitions=zero\n"),
       "Invalid value zero for configuration num.partitions: Not a number of type INT, valid values: "
       "[1,...,2147483647]"},
      {with_file("num.partition=3\n"), "unknown broker setting num.partition (did you mean num.partitions?)"},
      {with_file("# ok\nnum.partitions 3\n"),
       dir / "bad.properties" + ": line 2: expected key=value or key: value, got 'num.partitions 3'"},
      {with_file("listeners=SSL://h:1\n"), "for configuration listeners: expected PLAINTEXT://host:port"},
      {refuse([&] {
         ServeFlags f = flags;
         f.config_file = dir / "missing.properties";
         return f;
       }()),
       "cannot read " + dir / "missing.properties" + ": No such file or directory"},
      {refuse([&] {
         ServeFlags f = flags;
         f.settings = {"auto.create.topics.enable"};
         return f;
       }()),
       "--set: expected key=value, got 'auto.create.topics.enable'"},
      {refuse([&] {
         ServeFlags f = flags;
         f.settings = {"auto.create.topics.enable=maybe"};
         return f;
       }()),
       "auto.create.topics.enable: Expected value to be either true or false"},
  };
  for (const auto& [refusal, message] : cases) {
    EXPECT_EQ(refusal.rc, 2) << refusal.err;
    EXPECT_TRUE(contains(refusal.err, "sluice serve: configuration: ")) << refusal.err;
    EXPECT_TRUE(contains(refusal.err, message)) << refusal.err << "\nwanted: " << message;
    EXPECT_FALSE(contains(refusal.err, "listening")) << refusal.err;
  }
}

// Mutations plant known bugs for the simulator's checkers: a properties file may carry them (the simulator's
// nodes read one), but serve never runs them.
TEST(ServeTest, RefusesToRunMutations) {
  TempDir dir;
  write_file(dir / "sim.properties", "sluice.mutations=ack-before-append\n");
  ServeFlags flags;
  flags.data_dir = dir / "data";
  flags.listen = "127.0.0.1:0";
  flags.config_file = dir / "sim.properties";
  const Refusal from_file = refuse(flags);
  EXPECT_EQ(from_file.rc, 2) << from_file.err;
  EXPECT_TRUE(contains(from_file.err, "sluice serve: configuration: sluice.mutations=ack-before-append: mutations "
                                      "plant known bugs for the simulator's checkers, and sluice serve never runs them"))
      << from_file.err;
  EXPECT_FALSE(contains(from_file.err, "listening")) << from_file.err;
  ServeOptions options;
  options.listen = "127.0.0.1:0";
  options.data_dir = dir / "data";
  options.broker.mutations.add(Mutation::kCommitWrongPartition);
  ::testing::internal::CaptureStderr();
  const int rc = run_serve(options, [](Env&, const Address&) { ::raise(SIGTERM); });
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(rc, 2) << err;
  EXPECT_TRUE(contains(err, "sluice.mutations=commit-wrong-partition")) << err;
  RealEnv look("look", LogLevel::kOff);
  EXPECT_FALSE(*look.env().fs.exists(dir / "data")) << "refused before touching the data directory";
}

TEST(ServeTest, AdvertisedAddressMustBeReachable) {
  TempDir dir;
  ServeFlags flags;
  flags.listen = "127.0.0.1:0";
  flags.data_dir = dir / "data";
  flags.advertised = "broker.example:0";
  Refusal port_zero = refuse(flags);
  EXPECT_EQ(port_zero.rc, 2);
  EXPECT_TRUE(contains(port_zero.err,
                       "invalid advertised address: address 'broker.example:0': clients cannot "
                       "connect to port 0"))
      << port_zero.err;
  flags.advertised = "no-port";
  Refusal no_port = refuse(flags);
  EXPECT_EQ(no_port.rc, 2);
  EXPECT_TRUE(contains(no_port.err, "invalid advertised address")) << no_port.err;
}

}  // namespace
}  // namespace sluice
