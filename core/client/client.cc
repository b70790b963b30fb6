// Client: metadata, fetch and offsets over the ClientCore (client_core.h); the admin calls are in admin.cc.
#include "core/client/client.h"

#include <fmt/format.h>

#include <utility>

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

namespace {

void invalidate_if_stale(ClientCore& core, int16_t error_code) {
  if (invalidates_metadata(error_code)) core.invalidate_metadata();
}

// fetch_from's request, written: its version and call.
Result<std::pair<int16_t, detail::CallPtr>> start_fetch(ClientCore& core, int32_t node_id,
                                                         const std::vector<FetchPosition>& positions,
                                                         const FetchOptions& options) {
  SLUICE_ASSIGN_OR_RETURN(std::shared_ptr<detail::Connection> connection, core.connection(node_id));
  SLUICE_ASSIGN_OR_RETURN(int16_t version, connection->version_for(protocol::ApiKey::kFetch));
  Bytes framed;
  framed.reserve(ClientCore::kTypicalRequestBytes);
  framed.resize(connection->head_room());
  SLUICE_TRY(protocol::encode_message(fetch_request(positions, options), version, &framed));
  // The broker may hold the answer for max_wait: the request's own timeout comes on top.
  return std::pair(version, connection->start_framed(protocol::ApiKey::kFetch, version, std::move(framed),
                                                     core.config().request_timeout + options.max_wait,
                                                     /*expect_response=*/true));
}

}  // namespace

FetchMany Client::fetch_from(int32_t node_id, const std::vector<FetchPosition>& positions,
                             const FetchOptions& options) {
  const std::shared_ptr<ClientCore> core = core_;
  FetchMany answered;
  answered.partitions.reserve(positions.size());
  auto fail_all = [&](const Status& why) {
    while (answered.partitions.size() < positions.size()) answered.partitions.emplace_back(why);
    return std::move(answered);
  };
  Result<std::pair<int16_t, detail::CallPtr>> started = start_fetch(*core, node_id, positions, options);
  if (!started.ok()) return fail_all(started.status());
  const auto& [version, call] = *started;
  Result<detail::Answer> answer = detail::wait_for_answer(*call);
  if (!answer.ok()) return fail_all(answer.status());
  Result<protocol::FetchResponse> response =
      protocol::decode_message<protocol::FetchResponse>(answer->body(), version);
  if (!response.ok()) return fail_all(response.status());
  invalidate_if_stale(*core, response->error_code);
  for (const FetchPosition& position : positions) {
    answered.partitions.push_back(read_fetch_partition(*response, position.tp, position.offset));
    if (answered.partitions.back().ok()) invalidate_if_stale(*core, answered.partitions.back()->error_code);
  }
  answered.answer = std::move(answer->buffer);  // a move: the views still point into its buffer
  return answered;
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
