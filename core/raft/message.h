// The messages raft groups exchange. One flat struct (etcd's shape), so a transport frames one thing and tests can
// build, match and reorder messages freely; which fields mean what depends on `type`, as listed below.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/raft/types.h"

namespace sluice::raft {

enum class MessageType : uint8_t {
  kPreVote,            // log_index/log_term: the candidate's last entry; term: the term it would campaign in
  kPreVoteResponse,    // reject; term: the request's term when granted, the responder's when refused
  kVote,               // log_index/log_term: the candidate's last entry; transfer: caused by TimeoutNow
  kVoteResponse,       // reject
  kAppend,             // log_index/log_term: the index (an entry end) before `entries`; commit: the leader's commit;
                       // log_start: the leader's low watermark; from_log_start: log_index is the leader's log start,
                       // whose term it knows only as an upper bound (see handle_append)
  kAppendResponse,     // accepted: log_index = match that may be counted, hint_index = appended match;
                       // rejected: log_index = the refused prev index, hint_index/hint_term = where to look next
  kHeartbeat,          // commit: min(leader commit, the follower's match); log_index/log_term: the leader's whole
                       // commit index and its term (how far an unclean follower must match to be caught up);
                       // log_start: the leader's low watermark
  kHeartbeatResponse,  //
  kTimeoutNow,         // leadership transfer: campaign at once, skipping pre-vote and the leader lease
  // A proposal a non-leader hands to the leader it knows (etcd's MsgProp): `entries` are appended by the leader as
  // if proposed there (their terms are ignored), or dropped by any node that does not lead. Never answered: the
  // proposer learns the fate by applying the log. Outside the term rules: it neither raises nor checks a term.
  kPropose,
};
std::string_view message_type_name(MessageType type);

struct Message {
  MessageType type = MessageType::kHeartbeat;
  NodeId from = kNoNode;
  NodeId to = kNoNode;
  Term term = 0;
  Index log_index = 0;
  Term log_term = 0;
  std::vector<Entry> entries = {};
  Index commit = 0;
  bool reject = false;
  Index hint_index = 0;
  Term hint_term = 0;
  bool transfer = false;
  uint64_t incarnation = 0;  // the sender's (responses from followers use it)
  // kAppend, kHeartbeat: the leader's low watermark (RaftLog::low_watermark); their responses: the follower's.
  Index log_start = 0;
  bool from_log_start = false;  // kAppend

  bool operator==(const Message&) const = default;
};

// One line, for test failures and traces.
std::string to_string(const Message& message);

}  // namespace sluice::raft
