#include "core/raft/message.h"

#include "core/base/assert.h"

namespace sluice::raft {

std::string_view message_type_name(MessageType type) {
  switch (type) {
    case MessageType::kPreVote: return "PreVote";
    case MessageType::kPreVoteResponse: return "PreVoteResponse";
    case MessageType::kVote: return "Vote";
    case MessageType::kVoteResponse: return "VoteResponse";
    case MessageType::kAppend: return "Append";
    case MessageType::kAppendResponse: return "AppendResponse";
    case MessageType::kHeartbeat: return "Heartbeat";
    case MessageType::kHeartbeatResponse: return "HeartbeatResponse";
    case MessageType::kTimeoutNow: return "TimeoutNow";
    case MessageType::kPropose: return "Propose";
  }
  SLUICE_UNREACHABLE();
}

std::string to_string(const Message& m) {
  std::string out = std::string(message_type_name(m.type)) + " " + std::to_string(m.from) + "->" +
                    std::to_string(m.to) + " term=" + std::to_string(m.term) + " log=" +
                    std::to_string(m.log_index) + "@" + std::to_string(m.log_term);
  if (!m.entries.empty()) {
    out += " entries=" + std::to_string(m.entries.size()) + "(indexes " + std::to_string(m.log_index + 1) + ".." +
           std::to_string(m.log_index + span_of(m.entries)) + ", terms " + std::to_string(m.entries.front().term) +
           ".." + std::to_string(m.entries.back().term) + ")";
  }
  if (m.commit != 0) out += " commit=" + std::to_string(m.commit);
  if (m.log_start != 0) out += " log_start=" + std::to_string(m.log_start);
  if (m.from_log_start) out += " from_log_start";
  if (m.reject) out += " reject hint=" + std::to_string(m.hint_index) + "@" + std::to_string(m.hint_term);
  if (m.transfer) out += " transfer";
  return out;
}

}  // namespace sluice::raft
