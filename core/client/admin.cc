// Client's admin calls: CreateTopics, DeleteTopics, IncrementalAlterConfigs, DescribeConfigs, DeleteRecords. They
// change state, so a request that may have reached the broker is not repeated (a repeated CreateTopics would answer
// TOPIC_ALREADY_EXISTS for its own first attempt): only requests that were not sent, and retriable refusals, are.
#include <fmt/format.h>

#include <utility>

#include "core/client/client.h"
#include "core/client/client_core.h"
#include "core/client/requests.h"

namespace sluice::client {

using detail::ClientCore;

namespace {

constexpr int32_t kAdminTimeoutMs = 30000;

// Not sent, or refused with a retriable code: nothing happened, another attempt is safe.
bool safe_to_repeat(const Status& status) {
  return status.code() == Code::kConnectionRefused ||
         (status.code() == Code::kInvalidArgument && is_retriable(status.protocol_error()));
}

template <typename Attempt>
auto repeat_while_safe(ClientCore& core, Attempt&& attempt) -> decltype(attempt()) {
  for (int n = 1;; ++n) {
    auto result = attempt();
    const Status& status = detail::status_of(result);
    if (status.ok() || n >= core.config().read_attempts || !safe_to_repeat(status)) return result;
    core.pause_after(status, n);
  }
}

enum class Repeat { kWhileSafe, kAsARead };

// One admin request (`build(version)`) to `node` and the reading of its answer (`read(response)`), repeated as
// `repeat` allows.
template <protocol::ApiMessage Resp, typename Build, typename Read>
auto admin_call(ClientCore& core, int32_t node, Repeat repeat, Build&& build, Read&& read)
    -> decltype(read(std::declval<const Resp&>())) {
  using Out = decltype(read(std::declval<const Resp&>()));
  auto attempt = [&]() -> Out {
    Result<Resp> response = core.call<Resp>(node, build, core.config().request_timeout);
    if (!response.ok()) return response.status();
    return read(*response);
  };
  return repeat == Repeat::kAsARead ? core.retry(attempt) : repeat_while_safe(core, attempt);
}

}  // namespace

Status Client::create_topic(const NewTopic& topic) {
  const std::shared_ptr<ClientCore> core = core_;
  const Status created = admin_call<protocol::CreateTopicsResponse>(
      *core, core->admin_node(), Repeat::kWhileSafe,
      [&](int16_t) { return create_topics_request({topic}, kAdminTimeoutMs); },
      [&](const protocol::CreateTopicsResponse& response) { return create_topics_answer(response, topic.name); });
  core->invalidate_metadata();
  return created;
}

Status Client::delete_topic(const std::string& name) {
  const std::shared_ptr<ClientCore> core = core_;
  const Status deleted = admin_call<protocol::DeleteTopicsResponse>(
      *core, core->admin_node(), Repeat::kWhileSafe,
      [&](int16_t) { return delete_topics_request({name}, kAdminTimeoutMs); },
      [&](const protocol::DeleteTopicsResponse& response) { return delete_topics_answer(response, name); });
  core->invalidate_metadata();
  return deleted;
}

Status Client::alter_topic_config(const std::string& topic, const std::vector<ConfigChange>& changes) {
  const std::shared_ptr<ClientCore> core = core_;
  return admin_call<protocol::IncrementalAlterConfigsResponse>(
      *core, core->admin_node(), Repeat::kWhileSafe, [&](int16_t) { return alter_configs_request(topic, changes); },
      [&](const protocol::IncrementalAlterConfigsResponse& response) { return alter_configs_answer(response, topic); });
}

Result<std::map<std::string, std::string>> Client::describe_topic_config(const std::string& topic) {
  const std::shared_ptr<ClientCore> core = core_;
  return admin_call<protocol::DescribeConfigsResponse>(
      *core, core->admin_node(), Repeat::kAsARead, [&](int16_t) { return describe_configs_request(topic); },
      [&](const protocol::DescribeConfigsResponse& response) { return describe_configs_answer(response, topic); });
}

Result<int64_t> Client::delete_records(const TopicPartitionId& tp, int64_t before_offset) {
  const std::shared_ptr<ClientCore> core = core_;
  // Moving the log start to the same offset twice is the same as once: safe to repeat. The leader takes it.
  return core->retry([&]() -> Result<int64_t> {
    SLUICE_ASSIGN_OR_RETURN(int32_t leader, core->leader_for(tp));
    SLUICE_ASSIGN_OR_RETURN(
        protocol::DeleteRecordsResponse response,
        core->call<protocol::DeleteRecordsResponse>(
            leader, [&](int16_t) { return delete_records_request(tp, before_offset, kAdminTimeoutMs); },
            core->config().request_timeout));
    return delete_records_answer(response, tp);
  });
}

}  // namespace sluice::client
