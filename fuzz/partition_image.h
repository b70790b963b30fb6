// A partition directory as one fuzz input (loader_fuzzer.cc), and back (seed_corpus.cc writes seeds this way).
//
//   byte 0          flags: bit 0 recompute the CRC of every whole batch in each .log / .log.swap; bit 1 recompute
//                   the CRCs of partition.state and .sluice_cleanshutdown; bit 2 also run `sluice log repair`'s
//                   path (LogLoader::repair) on the image; bits 4-5 segment.index.bytes (kIndexBytes)
//   then entries    [kind][length, 2 bytes big-endian][length bytes] (the last one may be cut short)
//
// kind & 0x0f names the file (kFileKinds); for segment files, (kind >> 4) & 7 picks the base offset (kBases).
// Later entries for the same file replace earlier ones. The CRC fix-ups let the fuzzer reach past the checksums
// into what the loader does with files that verify.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/base/bytes.h"
#include "core/storage/log_format.h"

namespace sluice::fuzz {

inline constexpr std::string_view kPartitionDir = "data/orders-0";
inline constexpr std::string_view kDataDir = "data";

inline constexpr uint8_t kFixBatchCrcs = 0x01;
inline constexpr uint8_t kFixStateCrcs = 0x02;
inline constexpr uint8_t kRunRepair = 0x04;
inline constexpr std::array<int64_t, 4> kIndexBytes = {10485760, 4096, 64, 24};  // at least one entry of each

inline constexpr std::array<int64_t, 8> kBases = {0, 1, 10, 100, 1000, INT32_MAX, int64_t{INT32_MAX} + 1,
                                                   int64_t{1} << 40};

struct FileKind {
  std::string_view name;  // a suffix after the 20-digit base when `segment`, else the file's name
  bool segment;
};
inline constexpr std::array<FileKind, 12> kFileKinds = {{
    {".log", true},
    {".index", true},
    {".timeindex", true},
    {".log.swap", true},
    {".index.swap", true},
    {".log.cleaned", true},
    {"partition.state", false},
    {".sluice_cleanshutdown", false},
    {"leader-epoch-checkpoint", false},
    {"cleaner-offset-checkpoint", false},  // in the data directory, beside the partition's
    {"partition.state.tmp", false},
    {".log.deleted", true},
}};

// The path an entry's kind byte names.
inline std::string image_path(uint8_t kind) {
  const FileKind& file = kFileKinds[(kind & 0x0f) % kFileKinds.size()];
  if (file.name == "cleaner-offset-checkpoint") return std::string(kDataDir) + "/" + std::string(file.name);
  const std::string name = file.segment ? storage::segment_file_name(kBases[(kind >> 4) & 7], file.name)
                                        : std::string(file.name);
  return std::string(kPartitionDir) + "/" + name;
}

// The kind byte for `path`, when an image can hold it.
inline std::optional<uint8_t> image_kind(const std::string& path) {
  for (uint8_t kind = 0; kind < 0x80; ++kind) {
    if (image_path(kind) == path) return kind;
  }
  return std::nullopt;
}

inline void append_entry(Bytes* image, uint8_t kind, ByteView bytes) {
  const size_t length = std::min<size_t>(bytes.size(), 0xffff);
  image->push_back(kind);
  image->push_back(static_cast<uint8_t>(length >> 8));
  image->push_back(static_cast<uint8_t>(length));
  image->insert(image->end(), bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(length));
}

}  // namespace sluice::fuzz
