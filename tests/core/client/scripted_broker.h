// A scripted broker for client tests: node n1 listens on port 9092 and runs a test's script on each connection it
// accepts, speaking the protocol through core/protocol; node n2 runs the test body with a Client. For what a real
// broker never does on cue: the ApiVersions downgrade, wrong correlation ids, answers never sent or held back,
// chosen error codes.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <optional>
#include <string>

#include "core/client/client.h"
#include "core/protocol/header.h"
#include "core/protocol/messages/api_versions.h"
#include "core/protocol/messages/metadata.h"
#include "sim/world/sim_cluster.h"

namespace sluice::client::testing {

using namespace std::chrono_literals;

inline const Address kScripted{"n1", 9092};

struct Request {
  protocol::RequestHeader header;
  Bytes body;
};

// The next request on `stream`; nullopt when the client closed it.
inline std::optional<Request> next_request(Stream& stream) {
  Result<std::optional<Bytes>> frame = protocol::read_frame(stream);
  if (!frame.ok() || !frame->has_value()) return std::nullopt;
  ByteView body;
  Result<protocol::RequestHeader> header = protocol::decode_request_header(**frame, &body);
  EXPECT_TRUE(header.ok()) << header.status().to_string();
  if (!header.ok()) return std::nullopt;
  return Request{*header, Bytes(body.begin(), body.end())};
}

template <protocol::ApiMessage Resp>
void answer(Stream& stream, const Request& request, const Resp& response, int32_t correlation_id_shift = 0) {
  Result<Bytes> frame = protocol::encode_response_frame(response, request.header.api_version,
                                                        request.header.correlation_id + correlation_id_shift);
  ASSERT_TRUE(frame.ok()) << frame.status().to_string();
  ASSERT_TRUE(stream.write_all(*frame).ok());
}

// Answers the connection's first request, ApiVersions, with the broker's whole table.
inline void answer_api_versions(Stream& stream) {
  std::optional<Request> request = next_request(stream);
  ASSERT_TRUE(request.has_value());
  ASSERT_EQ(request->header.api_key, protocol::ApiKey::kApiVersions) << "ApiVersions comes first";
  answer(stream, *request, protocol::api_versions_response());
}

inline protocol::MetadataResponse cluster_named(const std::string& id) {
  protocol::MetadataResponse response;
  response.cluster_id = id;
  response.brokers.push_back({1, "n1", 9092, std::nullopt});
  return response;
}

// n1 runs `script` on every connection it accepts (in turn), n2 runs `body`.
class ScriptedBroker {
 public:
  // What the test body's Client is made with; a test may change it before run().
  ClientConfig& client_config() { return config_; }

  using Script = std::function<void(Env, Stream&, int connection)>;

  bool run(Script script, const std::function<void(Env, Client&)>& body) {
    bool done = false;
    broker_.boot([script](Env env) {
      Result<std::unique_ptr<Listener>> listener = env.net.listen(kScripted);
      ASSERT_TRUE(listener.ok());
      for (int connection = 0;; ++connection) {
        Result<std::unique_ptr<Stream>> stream = (*listener)->accept();
        if (!stream.ok()) return;
        script(env, **stream, connection);
      }
    });
    client_.boot([&](Env env) {
      env.scheduler.sleep_for(1ms);  // the listener is up
      Client client(env, config_);
      body(env, client);
      done = true;
    });
    return cluster_.world().run_until([&] { return done; }, cluster_.world().now() + 1min);
  }

 private:
  static ClientConfig default_config() {
    ClientConfig config;
    config.bootstrap = {kScripted};
    config.request_timeout = 1s;
    config.read_attempts = 1;
    config.retry_backoff = 10ms;
    return config;
  }

  ClientConfig config_ = default_config();
  SimCluster cluster_{1, LogLevel::kOff};
  SimNode& broker_ = cluster_.add_node();
  SimNode& client_ = cluster_.add_node();
};

}  // namespace sluice::client::testing
