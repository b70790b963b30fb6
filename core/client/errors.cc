#include "core/client/errors.h"

#include <fmt/format.h>

#include "core/client/client.h"
#include "core/protocol/error_codes.h"

namespace sluice::client {
namespace {

// Codes the broker's table (core/protocol/error_codes.h) does not name.
std::string_view extra_name(int16_t error) {
  switch (error) {
    case errc::kLeaderNotAvailable:
      return "LEADER_NOT_AVAILABLE";
    case errc::kNetworkException:
      return "NETWORK_EXCEPTION";
    case errc::kNotEnoughReplicasAfterAppend:
      return "NOT_ENOUGH_REPLICAS_AFTER_APPEND";
    case errc::kNotController:
      return "NOT_CONTROLLER";
    case errc::kDuplicateSequenceNumber:
      return "DUPLICATE_SEQUENCE_NUMBER";
    case errc::kUnknownProducerId:
      return "UNKNOWN_PRODUCER_ID";
    case errc::kOffsetNotAvailable:
      return "OFFSET_NOT_AVAILABLE";
    default:
      return {};
  }
}

}  // namespace

std::string error_label(int16_t error) {
  std::string_view name = extra_name(error);
  if (name.empty()) name = error_name(static_cast<ErrorCode>(error));
  if (name.empty() || name == "UNKNOWN") return fmt::format("error {}", error);
  return fmt::format("{} ({})", name, error);
}

bool is_retriable(int16_t error) {
  switch (error) {
    case errc::kCorruptMessage:
    case errc::kUnknownTopicOrPartition:
    case errc::kLeaderNotAvailable:
    case errc::kNotLeaderOrFollower:
    case errc::kRequestTimedOut:
    case errc::kNetworkException:
    case errc::kCoordinatorLoadInProgress:
    case errc::kCoordinatorNotAvailable:
    case errc::kNotCoordinator:
    case errc::kNotEnoughReplicas:
    case errc::kNotEnoughReplicasAfterAppend:
    case errc::kNotController:
    case errc::kKafkaStorageError:
    case errc::kFencedLeaderEpoch:
    case errc::kUnknownLeaderEpoch:
    case errc::kOffsetNotAvailable:
    case errc::kUnstableOffsetCommit:
    case errc::kUnknownTopicId:
      return true;
    default:
      return false;
  }
}

bool invalidates_metadata(int16_t error) {
  switch (error) {
    case errc::kUnknownTopicOrPartition:
    case errc::kLeaderNotAvailable:
    case errc::kNotLeaderOrFollower:
    case errc::kNotController:
    case errc::kKafkaStorageError:
    case errc::kFencedLeaderEpoch:
    case errc::kUnknownLeaderEpoch:
    case errc::kUnknownTopicId:
      return true;
    default:
      return false;
  }
}

bool produce_may_have_appended(int16_t error, int16_t acks) {
  if (error == errc::kRequestTimedOut || error == errc::kNotEnoughReplicasAfterAppend ||
      error == errc::kKafkaStorageError) {
    return true;
  }
  return acks == -1 && error == errc::kNotLeaderOrFollower;
}

bool requires_rejoin(int16_t error) {
  return error == errc::kRebalanceInProgress || error == errc::kIllegalGeneration || error == errc::kUnknownMemberId ||
         error == errc::kFencedInstanceId;
}

bool coordinator_moved(int16_t error) {
  return error == errc::kNotCoordinator || error == errc::kCoordinatorNotAvailable;
}

Status broker_error(int16_t error, std::string_view what, std::string_view detail) {
  std::string message = fmt::format("{}: {}", what, error_label(error));
  if (!detail.empty()) message += fmt::format(": {}", detail);
  return Status(Code::kInvalidArgument, std::move(message), error);
}

Status not_sent(std::string_view why) { return Status(Code::kConnectionRefused, fmt::format("not sent: {}", why)); }

bool outcome_unknown(const Status& status) {
  const Code code = status.code();
  return code == Code::kTimedOut || code == Code::kConnectionReset || code == Code::kClosed;
}

bool worth_retrying(const Status& status) {
  if (status.ok()) return false;
  const Code code = status.code();
  if (code == Code::kConnectionRefused || code == Code::kTimedOut || code == Code::kConnectionReset) return true;
  return status.code() == Code::kInvalidArgument && is_retriable(status.protocol_error());
}

}  // namespace sluice::client
