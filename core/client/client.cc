// Client: metadata, fetch and offsets over the ClientCore (client_core.h); the admin calls are in admin.cc.
#include "core/client/client.h"

#include <fmt/format.h>

#include "core/client/client_core.h"
#include "core/client/requests.h"

namespace sluice::client {

using detail::ClientCore;

std::string_view outcome_name(Outcome outcome) {
  switch (outcome) {
    case Outcome::kOk:
      return "ok";
    case Outcome::kFailed:
      return "fail";
    case Outcome::kUnknown:
      return "unknown";
  }
  return "?";
}

std::string TopicPartitionId::to_string() const { return fmt::format("{}-{}", topic, partition); }

Client::Client(Env env, ClientConfig config)
    : env_(env), config_(config), core_(std::make_shared<ClientCore>(env, std::move(config))) {}

Client::~Client() { close(); }

void Client::close() { core_->close(); }

Result<ClusterInfo> Client::metadata(const std::vector<std::string>& topics, bool allow_auto_create) {
  const std::shared_ptr<ClientCore> core = core_;  // alive through the call, whatever happens to this Client
  return core->metadata(topics, allow_auto_create);
}

Result<int32_t> Client::leader_for(const TopicPartitionId& tp) {
  const std::shared_ptr<ClientCore> core = core_;
  return core->leader_for(tp);
}

void Client::invalidate_metadata() { core_->invalidate_metadata(); }

namespace {

Result<FetchView> fetch_once(ClientCore& core, const TopicPartitionId& tp, int64_t offset,
                             const FetchOptions& options) {
  SLUICE_ASSIGN_OR_RETURN(int32_t leader, core.leader_for(tp));
  // The broker may hold the answer for max_wait: the request's own timeout comes on top.
  const Duration timeout = core.config().request_timeout + options.max_wait;
  SLUICE_ASSIGN_OR_RETURN(ClientCore::Answered<protocol::FetchResponse> answered,
                          core.call_answered<protocol::FetchResponse>(
                              leader, [&](int16_t) { return fetch_request(tp, offset, options); }, timeout));
  return read_fetch(answered.response, std::move(answered.bytes), tp, offset);
}

}  // namespace

Result<FetchResult> Client::fetch(const TopicPartitionId& tp, int64_t offset, const FetchOptions& options) {
  SLUICE_ASSIGN_OR_RETURN(FetchView view, fetch_view(tp, offset, options));
  return owned_fetch_result(view);
}

Result<FetchView> Client::fetch_view(const TopicPartitionId& tp, int64_t offset, const FetchOptions& options) {
  const std::shared_ptr<ClientCore> core = core_;
  for (int attempt = 1;; ++attempt) {
    Result<FetchView> result = fetch_once(*core, tp, offset, options);
    // A retriable partition error (a stale leader) is tried again too; the last one is answered as it came.
    const Status failure = !result.ok()                       ? result.status()
                           : is_retriable(result->error_code) ? broker_error(result->error_code, "fetch")
                                                              : Status();
    if (failure.ok() || attempt >= config_.read_attempts || !worth_retrying(failure)) return result;
    core->pause_after(failure, attempt);
  }
}

Result<ListedOffset> Client::list_offset(const TopicPartitionId& tp, int64_t timestamp) {
  const std::shared_ptr<ClientCore> core = core_;
  return core->retry([&]() -> Result<ListedOffset> {
    SLUICE_ASSIGN_OR_RETURN(int32_t leader, core->leader_for(tp));
    SLUICE_ASSIGN_OR_RETURN(
        protocol::ListOffsetsResponse response,
        core->call<protocol::ListOffsetsResponse>(
            leader, [&](int16_t) { return list_offsets_request(tp, timestamp); }, config_.request_timeout));
    SLUICE_ASSIGN_OR_RETURN(protocol::ListOffsetsResponse::Partition answer, list_offsets_answer(response, tp));
    if (answer.error_code != 0) return broker_error(answer.error_code, "list offsets of " + tp.to_string());
    return ListedOffset{answer.offset, answer.timestamp};
  });
}

Result<int16_t> Client::version_for(int32_t node_id, protocol::ApiKey api) {
  const std::shared_ptr<ClientCore> core = core_;
  SLUICE_ASSIGN_OR_RETURN(std::shared_ptr<detail::Connection> connection, core->connection(node_id));
  return connection->version_for(api);
}

Result<Bytes> Client::round_trip(int32_t node_id, protocol::ApiKey api, int16_t version, Bytes body,
                                 bool expect_response) {
  const std::shared_ptr<ClientCore> core = core_;
  return core->round_trip(node_id, api, version, body, expect_response, config_.request_timeout);
}

}  // namespace sluice::client
