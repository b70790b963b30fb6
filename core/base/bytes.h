// Byte buffers and views shared by every module.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace sluice {

using Bytes = std::vector<uint8_t>;
using ByteView = std::span<const uint8_t>;
using MutableByteView = std::span<uint8_t>;

inline ByteView as_bytes(std::string_view s) {
  return ByteView(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}
inline std::string_view as_chars(ByteView b) {
  return std::string_view(reinterpret_cast<const char*>(b.data()), b.size());
}
inline Bytes to_bytes(std::string_view s) { return Bytes(s.begin(), s.end()); }
// The parts back to back, in one allocation.
inline Bytes concat(std::span<const ByteView> parts) {
  size_t total = 0;
  for (const ByteView part : parts) total += part.size();
  Bytes joined;
  joined.reserve(total);
  for (const ByteView part : parts) joined.insert(joined.end(), part.begin(), part.end());
  return joined;
}

}  // namespace sluice
