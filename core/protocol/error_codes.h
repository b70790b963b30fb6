// Kafka error codes: one X-macro table (name, number, retriable, message), FoundationDB's manner. Storage and the
// protocol layer attach these to a Status (Status::protocol_error) so that a handler answers with the exact code.
#pragma once

#include <cstdint>
#include <string_view>

#include "core/base/status.h"

namespace sluice {

// X(name, code, retriable, message)
#define SLUICE_KAFKA_ERRORS(X)                                                                                 \
  X(kUnknownServerError, -1, false, "The server experienced an unexpected error")                                \
  X(kNone, 0, false, "")                                                                                         \
  X(kOffsetOutOfRange, 1, false, "The requested offset is not within the range of offsets")                      \
  X(kCorruptMessage, 2, true, "The message failed its CRC check, exceeded the valid size, or is otherwise corrupt") \
  X(kUnknownTopicOrPartition, 3, true, "This server does not host this topic-partition")                         \
  X(kInvalidFetchSize, 4, false, "The requested fetch size is invalid")                                          \
  X(kLeaderNotAvailable, 5, true, "There is no leader for this topic-partition: an election is under way")       \
  X(kNotLeaderOrFollower, 6, true, "This server is not the leader for that topic-partition")                     \
  X(kRequestTimedOut, 7, true, "The request timed out")                                                          \
  X(kMessageTooLarge, 10, false, "The request included a message larger than the max message size")              \
  X(kOffsetMetadataTooLarge, 12, false, "The metadata field of the offset request was too large")                \
  X(kCoordinatorLoadInProgress, 14, true, "The coordinator is loading and hence can't process requests")         \
  X(kCoordinatorNotAvailable, 15, true, "The coordinator is not available")                                      \
  X(kNotCoordinator, 16, true, "This is not the correct coordinator")                                            \
  X(kInvalidTopicException, 17, false, "The request attempted to perform an operation on an invalid topic")      \
  X(kRecordListTooLarge, 18, false, "The request included a message batch larger than the segment size")         \
  X(kNotEnoughReplicas, 19, true, "Messages are rejected since there are fewer in-sync replicas than required")  \
  X(kNotEnoughReplicasAfterAppend, 20, true,                                                                          \
    "Messages are written to the log, but to fewer in-sync replicas than required.")                                  \
  X(kInvalidRequiredAcks, 21, false, "Produce request specified an invalid value for required acks")             \
  X(kIllegalGeneration, 22, false, "Specified group generation id is not valid")                                 \
  X(kInconsistentGroupProtocol, 23, false, "The group member's supported protocols are incompatible with the members'")\
  X(kInvalidGroupId, 24, false, "The configured groupId is invalid")                                             \
  X(kUnknownMemberId, 25, false, "The coordinator is not aware of this member")                                  \
  X(kInvalidSessionTimeout, 26, false, "The session timeout is not within the range allowed by the broker")      \
  X(kRebalanceInProgress, 27, false, "The group is rebalancing, so a rejoin is needed")                          \
  X(kInvalidCommitOffsetSize, 28, false, "The committing offset data size is not valid")                         \
  X(kInvalidTimestamp, 32, false, "The timestamp of the message is out of acceptable range")                     \
  X(kUnsupportedVersion, 35, false, "The version of API is not supported")                                       \
  X(kTopicAlreadyExists, 36, false, "Topic with this name already exists")                                       \
  X(kInvalidPartitions, 37, false, "Number of partitions is below 1")                                            \
  X(kInvalidReplicationFactor, 38, false, "Replication factor is below 1 or larger than the number of brokers")  \
  X(kInvalidReplicaAssignment, 39, false, "Replica assignment is invalid")                                       \
  X(kInvalidConfig, 40, false, "Configuration is invalid")                                                       \
  X(kInvalidRequest, 42, false, "This most likely occurs because of a request being malformed")                  \
  X(kPolicyViolation, 44, false, "Request parameters do not satisfy the configured policy")                      \
  X(kOutOfOrderSequenceNumber, 45, false, "The broker received an out of order sequence number")                 \
  X(kInvalidProducerEpoch, 47, false, "Producer attempted to produce with an old epoch")                         \
  X(kTransactionalIdAuthorizationFailed, 53, false, "The transactional id is not authorized")                    \
  X(kKafkaStorageError, 56, true, "Disk error when trying to access log file on the disk")                       \
  X(kNonEmptyGroup, 68, false, "The group is not empty")                                                         \
  X(kGroupIdNotFound, 69, false, "The group id does not exist")                                                  \
  X(kFetchSessionIdNotFound, 70, true, "The fetch session ID was not found")                                     \
  X(kFencedLeaderEpoch, 74, true, "The leader epoch in the request is older than the epoch on the broker")       \
  X(kUnknownLeaderEpoch, 75, true, "The leader epoch in the request is newer than the epoch on the broker")      \
  X(kUnsupportedCompressionType, 76, false, "The client does not support the batch's compression type")          \
  X(kMemberIdRequired, 79, false, "The group member needs a valid member id before entering a consumer group")   \
  X(kGroupMaxSizeReached, 81, false, "The group has already reached its maximum number of members")              \
  X(kFencedInstanceId, 82, false, "Another consumer with the same group.instance.id has a different member.id")  \
  X(kGroupSubscribedToTopic, 86, false, "The consumer group is actively subscribed to the topic")                \
  X(kInvalidRecord, 87, false, "This record has failed the validation on broker and hence will be rejected")     \
  X(kUnstableOffsetCommit, 88, true, "There are unstable offsets that need to be cleared")                       \
  X(kUnknownTopicId, 100, true, "This server does not host this topic ID")                                       \
  X(kMismatchedEndpointType, 114, false, "The request was sent to an endpoint of the wrong type")                \
  X(kUnsupportedEndpointType, 115, false, "Unsupported endpoint type")

enum class ErrorCode : int16_t {
#define SLUICE_KAFKA_ERROR_ENUM(name, code, retriable, message) name = (code),
  SLUICE_KAFKA_ERRORS(SLUICE_KAFKA_ERROR_ENUM)
#undef SLUICE_KAFKA_ERROR_ENUM
};

// The int16 a response's error_code field carries.
constexpr int16_t wire_code(ErrorCode error) { return static_cast<int16_t>(error); }

std::string_view error_name(ErrorCode code);  // "OFFSET_OUT_OF_RANGE"
std::string_view error_message(ErrorCode code);
bool error_retriable(ErrorCode code);

// A Status that carries a Kafka error code: `code_kind` is the Status kind callers branch on, `error` what the
// client is told. Example: kafka_error(ErrorCode::kInvalidRecord, "record 3 has no key (compacted topic)").
Status kafka_error(ErrorCode error, std::string message);
// The Kafka error code a Status carries; for Statuses without one, a mapping of its kind (kNoSpace and kIoError →
// KAFKA_STORAGE_ERROR, kCorruption → CORRUPT_MESSAGE, others → UNKNOWN_SERVER_ERROR; ok → NONE).
ErrorCode to_error_code(const Status& status);

}  // namespace sluice
