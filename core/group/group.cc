#include "core/group/group.h"

#include <algorithm>

#include "core/protocol/wire.h"

namespace sluice::group {

std::string_view state_name(GroupState state) {
  switch (state) {
    case GroupState::kEmpty: return "Empty";
    case GroupState::kPreparingRebalance: return "PreparingRebalance";
    case GroupState::kCompletingRebalance: return "CompletingRebalance";
    case GroupState::kStable: return "Stable";
    case GroupState::kDead: return "Dead";
  }
  return "Unknown";
}

const Bytes* Member::metadata_for(const std::string& protocol) const {
  for (const Protocol& p : protocols) {
    if (p.name == protocol) return &p.metadata;
  }
  return nullptr;
}

bool Member::matches(const std::vector<Protocol>& other) const { return protocols == other; }

bool Group::can_rebalance() const {
  return is(GroupState::kStable) || is(GroupState::kCompletingRebalance) || is(GroupState::kEmpty);
}

bool Group::supports(const std::string& type, const std::vector<Protocol>& protocols) const {
  if (members.empty()) return !type.empty() && !protocols.empty();
  if (protocol_type != type) return false;
  for (const Protocol& candidate : protocols) {
    const bool everyone = std::all_of(members.begin(), members.end(), [&](const auto& entry) {
      return entry.second.metadata_for(candidate.name) != nullptr;
    });
    if (everyone) return true;
  }
  return false;
}

std::string Group::select_protocol() const {
  SLUICE_ASSERT(!members.empty());
  // Candidates in the leader's (else the first member's) order of preference, so that ties break the same way.
  const Member& first = leader.has_value() && has(*leader) ? members.at(*leader) : members.begin()->second;
  std::vector<std::string> candidates;
  for (const Protocol& p : first.protocols) {
    const bool everyone = std::all_of(members.begin(), members.end(), [&](const auto& entry) {
      return entry.second.metadata_for(p.name) != nullptr;
    });
    if (everyone) candidates.push_back(p.name);
  }
  SLUICE_ASSERT(!candidates.empty());
  std::map<std::string, size_t> votes;
  for (const auto& [id, member] : members) {
    for (const Protocol& p : member.protocols) {
      if (std::find(candidates.begin(), candidates.end(), p.name) == candidates.end()) continue;
      ++votes[p.name];
      break;
    }
  }
  std::string best = candidates.front();
  for (const std::string& name : candidates) {
    if (votes[name] > votes[best]) best = name;
  }
  return best;
}

size_t Group::awaiting_join() const {
  return static_cast<size_t>(
      std::count_if(members.begin(), members.end(), [](const auto& entry) { return entry.second.join != nullptr; }));
}

std::optional<std::string> Group::static_member(const std::string& instance_id) const {
  for (const auto& [id, member] : members) {
    if (member.instance_id == instance_id) return id;
  }
  return std::nullopt;
}

int32_t Group::rebalance_timeout_ms() const {
  int32_t longest = 0;
  for (const auto& [id, member] : members) longest = std::max(longest, member.rebalance_timeout_ms);
  return longest;
}

namespace {

// ConsumerProtocolSubscription (versions 0-3, never flexible): int16 version, then the topics array first.
std::optional<std::vector<std::string>> subscription_topics(const Bytes& metadata) {
  protocol::Reader reader(metadata);
  reader.read_int16("version");
  const int32_t count = reader.read_array_length("topics", false);
  if (!reader.ok() || count < 0) return std::nullopt;
  std::vector<std::string> topics;
  for (int32_t i = 0; i < count; ++i) topics.push_back(reader.read_string("topic", false));
  if (!reader.ok()) return std::nullopt;
  return topics;
}

}  // namespace

std::optional<std::set<std::string>> Group::subscribed_topics() const {
  if (protocol_type != "consumer" || !protocol.has_value()) return std::nullopt;
  std::set<std::string> topics;
  for (const auto& [id, member] : members) {
    const Bytes* metadata = member.metadata_for(*protocol);
    if (metadata == nullptr) return std::nullopt;
    std::optional<std::vector<std::string>> parsed = subscription_topics(*metadata);
    if (!parsed.has_value()) return std::nullopt;
    topics.insert(parsed->begin(), parsed->end());
  }
  return topics;
}

bool Group::subscribed_to(const std::string& topic) const {
  std::optional<std::set<std::string>> topics = subscribed_topics();
  return !topics.has_value() || topics->count(topic) != 0;
}

}  // namespace sluice::group
