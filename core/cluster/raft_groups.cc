#include "core/cluster/raft_groups.h"

#include "core/base/assert.h"
#include "core/base/big_endian.h"

namespace sluice::cluster {
namespace {

// The splitmix64 finaliser, spelled out here rather than shared with core/env's mix64: group ids are a format, so
// their formula must not move when someone tunes a hash elsewhere.
uint64_t finalise(uint64_t x) {
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

raft::GroupId partition_group_id(const metadata::TopicId& topic_id, int32_t partition) {
  SLUICE_ASSERT(!topic_id.is_zero());
  SLUICE_ASSERT(partition >= 0);
  const uint64_t high = load_be<uint64_t>(topic_id.bytes.data());
  const uint64_t low = load_be<uint64_t>(topic_id.bytes.data() + 8);
  uint64_t h = finalise(high);
  h = finalise(h ^ low);
  h = finalise(h ^ static_cast<uint64_t>(partition));
  // 0 is the metadata group; the one input that lands there takes 1 instead.
  const raft::GroupId id = h == kMetadataGroup ? raft::GroupId{1} : h;
  SLUICE_ASSERT(id != kMetadataGroup);
  return id;
}

}  // namespace sluice::cluster
