// Envelope: one raft message addressed to one group. A node hosts many groups; everything between two nodes travels
// as batches of envelopes (the host produces them, the transport frames them).
#pragma once

#include <cstdint>

#include "core/raft/message.h"

namespace sluice::raft {

using GroupId = uint64_t;

struct Envelope {
  GroupId group = 0;
  Message message;
  bool operator==(const Envelope&) const = default;
};

}  // namespace sluice::raft
