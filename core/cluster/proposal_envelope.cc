#include "core/cluster/proposal_envelope.h"

#include "core/base/assert.h"
#include "core/base/big_endian.h"

namespace sluice::cluster {

std::string encode_envelope(const ProposalId& id, std::string_view batch) {
  SLUICE_ASSERT(id.node != 0);
  SLUICE_ASSERT(id.incarnation != 0);
  SLUICE_ASSERT(id.sequence != 0);
  SLUICE_ASSERT(!batch.empty());
  std::string out(kEnvelopeHeaderBytes, '\0');
  auto* p = reinterpret_cast<uint8_t*>(out.data());
  p[0] = kEnvelopeFormat;
  store_be<uint64_t>(p + 1, id.node);
  store_be<uint64_t>(p + 9, id.incarnation);
  store_be<uint64_t>(p + 17, id.sequence);
  out.append(batch);
  SLUICE_ASSERT(is_envelope(out));
  return out;
}

bool is_envelope(std::string_view payload) {
  return !payload.empty() && static_cast<uint8_t>(payload.front()) == kEnvelopeFormat;
}

Result<ProposalEnvelope> decode_envelope(std::string_view payload) {
  if (!is_envelope(payload)) return Status(Code::kCorruption, "metadata envelope: another format");
  // A header alone carries no batch: an envelope always wraps one.
  if (payload.size() <= kEnvelopeHeaderBytes) return Status(Code::kCorruption, "metadata envelope: truncated");
  const auto* p = reinterpret_cast<const uint8_t*>(payload.data());
  ProposalEnvelope envelope;
  envelope.id.node = load_be<uint64_t>(p + 1);
  envelope.id.incarnation = load_be<uint64_t>(p + 9);
  envelope.id.sequence = load_be<uint64_t>(p + 17);
  if (envelope.id.node == 0 || envelope.id.incarnation == 0 || envelope.id.sequence == 0) {
    return Status(Code::kCorruption, "metadata envelope: a zero node, incarnation or sequence");
  }
  envelope.batch = payload.substr(kEnvelopeHeaderBytes);
  return envelope;
}

bool ProposalFilter::admit(const ProposalId& id) {
  SLUICE_ASSERT(id.node != 0);
  const std::pair<uint64_t, uint64_t> next{id.incarnation, id.sequence};
  std::pair<uint64_t, uint64_t>& last = last_[id.node];
  if (next <= last) return false;
  last = next;
  return true;
}

std::pair<uint64_t, uint64_t> ProposalFilter::last(uint64_t node) const {
  auto it = last_.find(node);
  return it == last_.end() ? std::pair<uint64_t, uint64_t>{0, 0} : it->second;
}

}  // namespace sluice::cluster
