// A reference model of what a power loss may leave of one file, written apart from sim/sim_inode.cc on
// purpose: the tests judge SimDisk against it. Given the durable bytes and the un-synced operations in order,
// an outcome is allowed when it is the durable bytes plus the first k operations, possibly followed by
// operation k torn: a prefix of it ending at op start or a 512-byte sector boundary, then maybe one sector of
// anything, confined to the bytes that write covered.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace sluice::testing_model {

inline constexpr uint64_t kSector = 512;

struct ModelOp {
  bool truncate = false;
  uint64_t offset = 0;  // write: where; truncate: the new size
  std::string data;
};

inline void model_apply(std::string& image, const ModelOp& op) {
  if (op.truncate) {
    image.resize(op.offset, '\0');
    return;
  }
  if (image.size() < op.offset + op.data.size()) image.resize(op.offset + op.data.size(), '\0');
  image.replace(op.offset, op.data.size(), op.data);
}

inline bool model_torn_ok(const std::string& actual, const std::string& base, const ModelOp& op) {
  const uint64_t end = op.offset + op.data.size();
  std::vector<uint64_t> cuts{op.offset};
  for (uint64_t boundary = (op.offset / kSector + 1) * kSector; boundary < end; boundary += kSector) {
    cuts.push_back(boundary);
  }
  for (const uint64_t cut : cuts) {
    std::string expected = base;
    if (cut > op.offset) model_apply(expected, ModelOp{false, op.offset, op.data.substr(0, cut - op.offset)});
    if (actual == expected) return true;
    const uint64_t garbage_end = std::min(end, (cut / kSector + 1) * kSector);
    if (expected.size() < garbage_end) expected.resize(garbage_end, '\0');
    if (actual.size() != expected.size()) continue;
    if (actual.compare(0, cut, expected, 0, cut) == 0 &&
        actual.compare(garbage_end, std::string::npos, expected, garbage_end, std::string::npos) == 0) {
      return true;
    }
  }
  return false;
}

// True when a power loss may turn (durable, ops) into `actual`.
inline bool model_crash_ok(const std::string& actual, const std::string& durable,
                           const std::vector<ModelOp>& ops) {
  std::string base = durable;
  for (size_t k = 0; k <= ops.size(); ++k) {
    if (actual == base) return true;
    if (k == ops.size()) break;
    if (!ops[k].truncate && model_torn_ok(actual, base, ops[k])) return true;
    model_apply(base, ops[k]);
  }
  return false;
}

}  // namespace sluice::testing_model
