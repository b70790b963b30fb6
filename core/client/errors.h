// How the client classifies what can go wrong with a request: Kafka error codes (retriable or not, whether the
// cached leader is stale, whether the request may have taken effect) and transport failures (sent or not).
// Codes are the wire int16s: the client also reacts to codes this broker never answers but Kafka does
// (LEADER_NOT_AVAILABLE, DUPLICATE_SEQUENCE_NUMBER, UNKNOWN_PRODUCER_ID, ...), which error_codes.h does not list.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/base/status.h"

namespace sluice::client {

namespace errc {
inline constexpr int16_t kUnknownServerError = -1;
inline constexpr int16_t kNone = 0;
inline constexpr int16_t kOffsetOutOfRange = 1;
inline constexpr int16_t kCorruptMessage = 2;
inline constexpr int16_t kUnknownTopicOrPartition = 3;
inline constexpr int16_t kLeaderNotAvailable = 5;
inline constexpr int16_t kNotLeaderOrFollower = 6;
inline constexpr int16_t kRequestTimedOut = 7;
inline constexpr int16_t kNetworkException = 13;
inline constexpr int16_t kCoordinatorLoadInProgress = 14;
inline constexpr int16_t kCoordinatorNotAvailable = 15;
inline constexpr int16_t kNotCoordinator = 16;
inline constexpr int16_t kNotEnoughReplicas = 19;
inline constexpr int16_t kNotEnoughReplicasAfterAppend = 20;
inline constexpr int16_t kIllegalGeneration = 22;
inline constexpr int16_t kUnknownMemberId = 25;
inline constexpr int16_t kRebalanceInProgress = 27;
inline constexpr int16_t kUnsupportedVersion = 35;
inline constexpr int16_t kNotController = 41;
inline constexpr int16_t kOutOfOrderSequenceNumber = 45;
inline constexpr int16_t kDuplicateSequenceNumber = 46;
inline constexpr int16_t kInvalidProducerEpoch = 47;
inline constexpr int16_t kKafkaStorageError = 56;
inline constexpr int16_t kUnknownProducerId = 59;
inline constexpr int16_t kFencedLeaderEpoch = 74;
inline constexpr int16_t kUnknownLeaderEpoch = 75;
inline constexpr int16_t kOffsetNotAvailable = 78;
inline constexpr int16_t kMemberIdRequired = 79;
inline constexpr int16_t kFencedInstanceId = 82;
inline constexpr int16_t kUnstableOffsetCommit = 88;
inline constexpr int16_t kUnknownTopicId = 100;
}  // namespace errc

// "NOT_LEADER_OR_FOLLOWER (6)"; "error 123" for a code the table does not know.
std::string error_label(int16_t error);

// Worth trying again after a backoff: the condition is expected to pass (Kafka's RetriableException family).
bool is_retriable(int16_t error);
// The cached metadata is stale: refresh it before the next attempt (Kafka's InvalidMetadataException family).
bool invalidates_metadata(int16_t error);
// A produce with these acks answered so may have been appended all the same: REQUEST_TIMED_OUT and
// NOT_ENOUGH_REPLICAS_AFTER_APPEND (the broker gave up waiting for replication, or the ISR shrank after the append),
// and for acks=all NOT_LEADER_OR_FOLLOWER too: Kafka's leader answers it to an acks=all produce it had appended when
// it stops leading before the replicas confirm (Partition.checkEnoughReplicasReachOffset), and the next leader may
// hold the records and commit them. acks=1 is answered after the append, so there it means nothing was appended.
// KAFKA_STORAGE_ERROR with any acks: a broker whose disk failed part-way through an append (the data written, the
// index or the rollback not) answers it, as Kafka does for an I/O error, and its next start recovers the batch.
bool produce_may_have_appended(int16_t error, int16_t acks);
// The group's generation or membership is gone: the member must join again.
bool requires_rejoin(int16_t error);
// The coordinator moved or is unknown: find it again.
bool coordinator_moved(int16_t error);

// "the broker refused": kInvalidArgument carrying the Kafka code, with `what` and the code's name in the message.
Status broker_error(int16_t error, std::string_view what, std::string_view detail = {});
// The request was not sent (see outcome_unknown in client.h).
Status not_sent(std::string_view why);
// A failure worth another attempt of a call that is safe to repeat: not sent, unknown, or a retriable code.
bool worth_retrying(const Status& status);

}  // namespace sluice::client
