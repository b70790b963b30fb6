// A client connection against a scripted broker on n1 (not the real one), for what a real broker never does on
// cue: the ApiVersions downgrade, an answer with a wrong correlation id, a request never answered, and answers
// held until several requests arrived (the pipeline).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "core/client/client.h"
#include "core/client/connection.h"
#include "tests/core/client/scripted_broker.h"

namespace sluice::client {
namespace {

using namespace testing;
using protocol::ApiKey;

TEST(ClientConnection, AnUnsupportedApiVersionsIsRetriedAtAVersionTheBrokerSpeaks) {
  std::vector<int16_t> tried;
  ScriptedBroker broker;
  ASSERT_TRUE(broker.run(
      [&](Env, Stream& stream, int) {
        std::optional<Request> first = next_request(stream);
        ASSERT_TRUE(first.has_value());
        tried.push_back(first->header.api_version);
        // Kafka's answer to a version it does not speak: error 35 in the v0 layout, its ApiVersions range 0-4.
        ASSERT_TRUE(stream.write_all(protocol::unsupported_api_versions_frame(first->header.correlation_id)).ok());
        std::optional<Request> second = next_request(stream);
        ASSERT_TRUE(second.has_value());
        tried.push_back(second->header.api_version);
        protocol::ApiVersionsResponse versions;
        versions.api_keys = {{18, 0, 2}, {0, 3, 5}, {1, 4, 4}, {3, 0, 9}, {22, 3, 9}};
        answer(stream, *second, versions);
        while (next_request(stream)) {
        }
      },
      [&](Env, Client& client) {
        EXPECT_EQ(client.version_for(-1, ApiKey::kProduce).value(), 5) << "min(client 8, broker 5)";
        EXPECT_EQ(client.version_for(-1, ApiKey::kFetch).value(), 4);
        EXPECT_EQ(client.version_for(-1, ApiKey::kMetadata).value(), 9);
        EXPECT_EQ(client.version_for(-1, ApiKey::kInitProducerId).value(), 4) << "min(client 4, broker 9)";
        Result<int16_t> join = client.version_for(-1, ApiKey::kJoinGroup);
        ASSERT_FALSE(join.ok()) << "not offered";
        EXPECT_EQ(join.status().code(), Code::kNotSupported);
      }));
  EXPECT_EQ(tried, (std::vector<int16_t>{3, 2}));
}

TEST(ClientConnection, RequestsArePipelinedAndAnswersMatchedInOrder) {
  size_t arrived_before_first_answer = 0;
  ScriptedBroker broker;
  ASSERT_TRUE(broker.run(
      [&](Env, Stream& stream, int) {
        answer_api_versions(stream);
        std::vector<Request> requests;
        for (int i = 0; i < 3; ++i) {
          std::optional<Request> request = next_request(stream);
          ASSERT_TRUE(request.has_value());
          requests.push_back(std::move(*request));
        }
        arrived_before_first_answer = requests.size();
        for (const Request& request : requests) {
          answer(stream, request, cluster_named(fmt::format("c{}", request.header.correlation_id)));
        }
        while (next_request(stream)) {
        }
      },
      [&](Env env, Client& client) {
        std::vector<std::string> answers(3);
        std::vector<FiberRef> fibers;
        for (int i = 0; i < 3; ++i) {
          fibers.push_back(env.scheduler.spawn("caller", [&client, &answers, i] {
            Result<protocol::MetadataResponse> response =
                client.call<protocol::MetadataResponse>(-1, protocol::MetadataRequest{});
            ASSERT_TRUE(response.ok()) << response.status().to_string();
            answers[i] = response->cluster_id.value_or("");
          }));
        }
        for (const FiberRef& fiber : fibers) env.scheduler.join(fiber);
        std::sort(answers.begin(), answers.end());
        EXPECT_EQ(answers, (std::vector<std::string>{"c2", "c3", "c4"})) << "each caller got its own answer";
      }));
  EXPECT_EQ(arrived_before_first_answer, 3u);
}

// The scripted broker of the tests below: each request answered with a cluster id naming its correlation id.
void answer_each_with_its_correlation_id(Env, Stream& stream, int) {
  answer_api_versions(stream);
  while (std::optional<Request> request = next_request(stream)) {
    answer(stream, *request, cluster_named(fmt::format("c{}", request->header.correlation_id)));
  }
}

// A connection of its own to the client's bootstrap broker, timeouts of a second.
Result<std::shared_ptr<detail::Connection>> open_connection(Env env, Client& client, const std::string& client_id) {
  detail::ConnectionOptions options;
  options.client_id = client_id;
  options.connect_timeout = 1s;
  options.request_timeout = 1s;
  return detail::Connection::open(env, client.config().bootstrap.at(0), options);
}

Bytes metadata_request_v4() {
  Bytes body;
  EXPECT_TRUE(protocol::encode_message(protocol::MetadataRequest{}, 4, &body).ok());
  return body;
}

// An answered call its caller let go of serves the next request; one its caller still holds is never reused, so its
// answer stays its own.
TEST(ClientConnection, OnlyACallItsCallerLetGoOfIsReused) {
  ScriptedBroker broker;
  ASSERT_TRUE(broker.run(
      answer_each_with_its_correlation_id,
      [&](Env env, Client& client) {
        Result<std::shared_ptr<detail::Connection>> opened = open_connection(env, client, "reuse");
        ASSERT_TRUE(opened.ok()) << opened.status().to_string();
        detail::Connection& connection = **opened;
        const Bytes body = metadata_request_v4();
        auto ask = [&] { return connection.start(ApiKey::kMetadata, 4, body, 1s, /*expect_response=*/true); };
        auto cluster_id = [](Result<Bytes> answer) {
          EXPECT_TRUE(answer.ok()) << answer.status().to_string();
          if (!answer.ok()) return std::string();
          Result<protocol::MetadataResponse> response = protocol::decode_message<protocol::MetadataResponse>(*answer, 4);
          EXPECT_TRUE(response.ok()) << response.status().to_string();
          return response.ok() ? response->cluster_id.value_or("") : std::string();
        };

        detail::CallPtr held = ask();
        ASSERT_EQ(cluster_id(detail::wait_for(*held)), "c2");
        const detail::Call* let_go = nullptr;
        {
          detail::CallPtr first = ask();
          let_go = first.get();
          EXPECT_NE(let_go, held.get()) << "the held call is not reused";
          EXPECT_EQ(cluster_id(detail::wait_for(*first)), "c3");
        }
        detail::CallPtr second = ask();
        EXPECT_EQ(second.get(), let_go) << "the call let go of serves the next request";
        EXPECT_EQ(second->correlation_id, 4);
        EXPECT_EQ(cluster_id(detail::wait_for(*second)), "c4");
        EXPECT_TRUE(held->done()) << "the held call is still answered";
        connection.close();
      }));
}

// An answer that came as one write of the broker's stays in that buffer, its body after the frame's size and
// header (wait_for_answer: no copy); wait_for hands over the body alone.
TEST(ClientConnection, AnAnswerStaysInTheBufferItCameIn) {
  ScriptedBroker broker;
  ASSERT_TRUE(broker.run(
      answer_each_with_its_correlation_id,
      [&](Env env, Client& client) {
        Result<std::shared_ptr<detail::Connection>> opened = open_connection(env, client, "in-place");
        ASSERT_TRUE(opened.ok()) << opened.status().to_string();
        detail::Connection& connection = **opened;
        const Bytes body = metadata_request_v4();
        auto cluster_id = [](ByteView answer) {
          Result<protocol::MetadataResponse> response = protocol::decode_message<protocol::MetadataResponse>(answer, 4);
          EXPECT_TRUE(response.ok()) << response.status().to_string();
          return response.ok() ? response->cluster_id.value_or("") : std::string();
        };

        detail::CallPtr kept = connection.start(ApiKey::kMetadata, 4, body, 1s, /*expect_response=*/true);
        Result<detail::Answer> answer = detail::wait_for_answer(*kept);
        ASSERT_TRUE(answer.ok()) << answer.status().to_string();
        EXPECT_EQ(answer->body_at, protocol::kFrameSizeBytes + 4) << "the frame's size and correlation id ahead";
        EXPECT_EQ(cluster_id(answer->body()), "c2");

        detail::CallPtr shifted = connection.start(ApiKey::kMetadata, 4, body, 1s, /*expect_response=*/true);
        Result<Bytes> alone = detail::wait_for(*shifted);
        ASSERT_TRUE(alone.ok()) << alone.status().to_string();
        EXPECT_EQ(cluster_id(*alone), "c3");
        connection.close();
      }));
}

TEST(ClientConnection, AnAnswerWithTheWrongCorrelationIdBreaksTheConnection) {
  ScriptedBroker broker;
  ASSERT_TRUE(broker.run(
      [&](Env, Stream& stream, int connection) {
        answer_api_versions(stream);
        std::optional<Request> request = next_request(stream);
        if (!request) return;
        answer(stream, *request, cluster_named("x"), connection == 0 ? 100 : 0);  // the first one lies
        while (next_request(stream)) {
        }
      },
      [&](Env, Client& client) {
        Result<protocol::MetadataResponse> lied =
            client.call<protocol::MetadataResponse>(-1, protocol::MetadataRequest{});
        ASSERT_FALSE(lied.ok());
        EXPECT_EQ(lied.status().code(), Code::kConnectionReset) << lied.status().to_string();
        EXPECT_TRUE(outcome_unknown(lied.status()));
        Result<protocol::MetadataResponse> again =
            client.call<protocol::MetadataResponse>(-1, protocol::MetadataRequest{});
        ASSERT_TRUE(again.ok()) << "a new connection: " << again.status().to_string();
        EXPECT_EQ(again->cluster_id, "x");
      }));
}

TEST(ClientConnection, AnUnansweredRequestTimesOutAndClosesTheConnection) {
  bool closed_by_client = false;
  ScriptedBroker broker;
  ASSERT_TRUE(broker.run(
      [&](Env, Stream& stream, int connection) {
        answer_api_versions(stream);
        if (connection > 0) return;
        EXPECT_TRUE(next_request(stream).has_value());  // never answered
        closed_by_client = !next_request(stream).has_value();
      },
      [&](Env env, Client& client) {
        const Instant start = env.clock.now();
        Result<protocol::MetadataResponse> response =
            client.call<protocol::MetadataResponse>(-1, protocol::MetadataRequest{});
        ASSERT_FALSE(response.ok());
        EXPECT_EQ(response.status().code(), Code::kTimedOut) << response.status().to_string();
        EXPECT_TRUE(outcome_unknown(response.status()));
        EXPECT_GE(env.clock.now() - start, 1s);
        EXPECT_LT(env.clock.now() - start, 1100ms);
        env.scheduler.sleep_for(10ms);
      }));
  EXPECT_TRUE(closed_by_client);
}

// One timer keeps a connection's deadlines, armed at the oldest pending request's. When that request is answered
// the timer still fires at its deadline and moves on to the next request's: a later request times out at its own
// deadline, neither at the answered one's nor never.
TEST(ClientConnection, ARequestBehindAnAnsweredOneTimesOutAtItsOwnDeadline) {
  ScriptedBroker broker;
  ASSERT_TRUE(broker.run(
      [&](Env, Stream& stream, int connection) {
        answer_api_versions(stream);
        if (connection > 0) return;
        std::optional<Request> first = next_request(stream);
        ASSERT_TRUE(first.has_value());
        answer(stream, *first, cluster_named("answered"));
        EXPECT_TRUE(next_request(stream).has_value());  // never answered
        while (next_request(stream)) {
        }
      },
      [&](Env env, Client& client) {
        Result<protocol::MetadataResponse> answered =
            client.call<protocol::MetadataResponse>(-1, protocol::MetadataRequest{});
        ASSERT_TRUE(answered.ok()) << answered.status().to_string();
        EXPECT_EQ(answered->cluster_id, "answered");
        env.scheduler.sleep_for(700ms);  // the first request's deadline passes while the second is pending
        const Instant start = env.clock.now();
        Result<protocol::MetadataResponse> unanswered =
            client.call<protocol::MetadataResponse>(-1, protocol::MetadataRequest{});
        ASSERT_FALSE(unanswered.ok());
        EXPECT_EQ(unanswered.status().code(), Code::kTimedOut) << unanswered.status().to_string();
        EXPECT_GE(env.clock.now() - start, 1s) << "at its own deadline, not at the answered request's";
        EXPECT_LT(env.clock.now() - start, 1100ms);
        env.scheduler.sleep_for(10ms);
      }));
}

TEST(ClientConnection, CloseEndsPendingCallsAsUnknownAndLaterOnesAsNotSent) {
  ScriptedBroker broker;
  ASSERT_TRUE(broker.run(
      [&](Env, Stream& stream, int) {
        answer_api_versions(stream);
        while (next_request(stream)) {
        }
      },
      [&](Env env, Client& client) {
        ASSERT_TRUE(client.version_for(-1, ApiKey::kMetadata).ok());  // connected
        env.scheduler.spawn("closer", [env, &client] {
          env.scheduler.sleep_for(100ms);
          client.close();
        });
        Result<protocol::MetadataResponse> pending =
            client.call<protocol::MetadataResponse>(-1, protocol::MetadataRequest{});
        ASSERT_FALSE(pending.ok());
        EXPECT_EQ(pending.status().code(), Code::kClosed) << pending.status().to_string();
        Result<protocol::MetadataResponse> later =
            client.call<protocol::MetadataResponse>(-1, protocol::MetadataRequest{});
        ASSERT_FALSE(later.ok());
        EXPECT_EQ(later.status().code(), Code::kConnectionRefused) << "not sent: " << later.status().to_string();
        EXPECT_FALSE(outcome_unknown(later.status()));
      }));
}

TEST(ClientConnection, MetadataIsCachedUntilItsMaxAgeOrAnInvalidation) {
  int metadata_requests = 0;
  ScriptedBroker broker;
  broker.client_config().metadata_max_age = 5s;
  ASSERT_TRUE(broker.run(
      [&](Env, Stream& stream, int) {
        answer_api_versions(stream);
        while (std::optional<Request> request = next_request(stream)) {
          ++metadata_requests;
          protocol::MetadataResponse response = cluster_named("cached");
          protocol::MetadataResponse::Topic& topic = response.topics.emplace_back();
          topic.name = "t";
          topic.partitions.push_back({0, 0, 1, 0, {1}, {1}, {}});
          answer(stream, *request, response);
        }
      },
      [&](Env env, Client& client) {
        ASSERT_TRUE(client.leader_for({"t", 0}).ok());
        ASSERT_TRUE(client.leader_for({"t", 0}).ok());
        EXPECT_EQ(metadata_requests, 1) << "the second lookup is served from the cache";
        env.scheduler.sleep_for(6s);
        ASSERT_TRUE(client.leader_for({"t", 0}).ok());
        EXPECT_EQ(metadata_requests, 2) << "older than metadata_max_age";
        client.invalidate_metadata();
        ASSERT_TRUE(client.leader_for({"t", 0}).ok());
        EXPECT_EQ(metadata_requests, 3) << "invalidated";
        EXPECT_FALSE(client.leader_for({"t", 1}).ok()) << "no partition 1";
      }));
}

}  // namespace
}  // namespace sluice::client
