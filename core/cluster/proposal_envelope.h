// How ClusterNode writes its proposals into the metadata group's log, and which of them apply.
//
// A node that does not lead the metadata group forwards its proposal to the leader (raft's kPropose) and learns its
// fate only when the entry is applied on its own node; when it is not applied in time the node forwards it again.
// So one proposal may be committed more than once (the first leader appended it and crashed, the next one got it
// again), and the node must recognise its own entry. Each proposal is therefore wrapped in an envelope naming it,
// and the apply path admits only the first copy:
//
//   envelope := u8 kEnvelopeFormat | u64 node | u64 incarnation | u64 sequence | metadata batch (records.h)
//
// big-endian, fixed width. `incarnation` is the proposer's metadata-group hard-state incarnation, raised and synced
// at every start before anything leaves the node, and `sequence` counts that process's proposals from 1; so
// (incarnation, sequence) grows across a node's proposals and restarts, and no two proposals share it.
//
// The rule (ProposalFilter): an envelope applies only when its (incarnation, sequence) is above every one of the
// same node applied before it. A copy of a proposal that applied is thereby refused, and so is a straggler: a
// proposal that commits after a later one of the same node (its proposer gave up on it, or proposes it again under a
// new sequence, see ClusterNode). The rule reads only the log, so every node decides alike, and it keeps one pair
// per node. core/cluster/metadata stays unaware of it: a refused envelope is applied as an empty entry (nothing but
// the applied index moves). The filter is replicated state like the image, rebuilt by replay from index 1; when
// snapshots come, its pairs belong in them.
#pragma once

#include <compare>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "core/base/result.h"

namespace sluice::cluster {

// Never a metadata batch's format byte (metadata::kBatchFormat is 1): a payload says which it is by its first byte.
inline constexpr uint8_t kEnvelopeFormat = 0xE1;
inline constexpr size_t kEnvelopeHeaderBytes = 1 + 3 * 8;

struct ProposalId {
  uint64_t node = 0;
  uint64_t incarnation = 0;
  uint64_t sequence = 0;
  bool operator==(const ProposalId&) const = default;
};

struct ProposalEnvelope {
  ProposalId id;
  std::string_view batch;  // the encoded metadata batch, a view into the payload
};

// REQUIRES id.node, id.incarnation and id.sequence >= 1; batch non-empty.
std::string encode_envelope(const ProposalId& id, std::string_view batch);
bool is_envelope(std::string_view payload);
// kCorruption when the payload is not a whole envelope (the caller checked is_envelope), or names node 0,
// incarnation 0 or sequence 0, or carries no batch.
Result<ProposalEnvelope> decode_envelope(std::string_view payload);

class ProposalFilter {
 public:
  // True when `id` applies: its (incarnation, sequence) is above every admitted one of its node. Admits it.
  bool admit(const ProposalId& id);
  // The last admitted (incarnation, sequence) of `node`, {0, 0} before any.
  std::pair<uint64_t, uint64_t> last(uint64_t node) const;

 private:
  std::map<uint64_t, std::pair<uint64_t, uint64_t>> last_;
};

}  // namespace sluice::cluster
