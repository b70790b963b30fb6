#include "core/storage/key_offset_map.h"

#include <algorithm>
#include <cstring>

#include "core/base/assert.h"

namespace sluice::storage {
namespace {

// The splitmix64 finaliser (mix64 of core/env/random.h), here so that it inlines into the hash loop: the cleaner
// hashes every key of the dirty section twice.
inline uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

constexpr uint64_t kSeedHigh = 0x5a1c3e5eedf00d01ULL;
constexpr uint64_t kSeedLow = 0x0b5e55ed1dea5a1cULL;

struct Digest {
  uint64_t high;
  uint64_t low;
};

// Two independent 64-bit hashes of `key` (one per seed), computed in one walk over it: 8 bytes at a time through
// the finaliser, the length folded in first and the tail last.
Digest digest_of(ByteView key) {
  uint64_t high = mix(kSeedHigh ^ key.size());
  uint64_t low = mix(kSeedLow ^ key.size());
  size_t i = 0;
  for (; i + 8 <= key.size(); i += 8) {
    uint64_t word;
    std::memcpy(&word, key.data() + i, 8);
    high = mix(high ^ word);
    low = mix(low ^ word);
  }
  uint64_t tail = 0;
  for (size_t shift = 0; i < key.size(); ++i, shift += 8) tail |= static_cast<uint64_t>(key[i]) << shift;
  tail ^= 0x8000000000000000ULL;
  return Digest{mix(high ^ tail), mix(low ^ tail)};
}

}  // namespace

bool KeyOffsetMap::digest_even(ByteView key) { return (digest_of(key).low & 1) == 0; }

KeyOffsetMap::KeyOffsetMap(uint64_t memory_bytes, double load_factor)
    : slots_(memory_bytes / kSlotBytes),
      capacity_(static_cast<uint64_t>(static_cast<double>(memory_bytes / kSlotBytes) * load_factor)) {
  SLUICE_ASSERT(!slots_.empty());
  SLUICE_ASSERT(load_factor > 0.0);
  SLUICE_ASSERT(load_factor <= 1.0);
  // At least one empty slot always remains, so a probe for an absent key ends.
  capacity_ = std::min<uint64_t>(std::max<uint64_t>(capacity_, 1), slots_.size() - (slots_.size() > 1 ? 1 : 0));
  SLUICE_ASSERT(capacity_ >= 1);
}

size_t KeyOffsetMap::find(uint64_t high, uint64_t low) const {
  const size_t count = slots_.size();
  // The high digest scaled onto [0, count) by a multiply (Lemire's reduction): no division per probe start.
  auto index = static_cast<size_t>((static_cast<unsigned __int128>(high) * count) >> 64);
  // Linear probing; the step of one keeps the walk cache-friendly and bounded by the empty slot that remains.
  for (size_t probe = 0; probe < count; ++probe) {
    ++probes_;
    const Slot& slot = slots_[index];
    if (slot.offset < 0) return index;
    if (slot.digest_high == high && slot.digest_low == low) return index;
    index = index + 1 == count ? 0 : index + 1;
  }
  SLUICE_ASSERT_MSG(count == 1, "a full probe cycle: the map kept no empty slot");
  return 0;
}

bool KeyOffsetMap::put(ByteView key, int64_t offset) {
  SLUICE_ASSERT(offset >= 0);
  const auto [high, low] = digest_of(key);
  Slot& slot = slots_[find(high, low)];
  if (slot.offset < 0) {
    if (full()) return false;
    slot.digest_high = high;
    slot.digest_low = low;
    ++size_;
  }
  SLUICE_ASSERT(slot.digest_high == high && slot.digest_low == low);
  slot.offset = offset;
  latest_offset_ = std::max(latest_offset_, offset);
  SLUICE_ASSERT(size_ <= capacity_);
  return true;
}

std::optional<int64_t> KeyOffsetMap::get(ByteView key) const {
  const Digest digest = digest_of(key);
  const Slot& slot = slots_[find(digest.high, digest.low)];
  if (slot.offset < 0) return std::nullopt;
  return slot.offset;
}

void KeyOffsetMap::clear() {
  std::fill(slots_.begin(), slots_.end(), Slot{});
  size_ = 0;
  latest_offset_ = -1;
}

}  // namespace sluice::storage
