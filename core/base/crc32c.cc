#include "core/base/crc32c.h"

#include <array>

namespace sluice {
namespace {

constexpr uint32_t kPolynomial = 0x82f63b78;  // reflected Castagnoli

constexpr std::array<uint32_t, 256> make_table() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t crc = i;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ ((crc & 1) ? kPolynomial : 0);
    table[i] = crc;
  }
  return table;
}

constexpr std::array<uint32_t, 256> kTable = make_table();

}  // namespace

uint32_t crc32c_extend_portable(uint32_t crc, ByteView data) {
  crc = ~crc;
  for (uint8_t byte : data) crc = kTable[(crc ^ byte) & 0xff] ^ (crc >> 8);
  return ~crc;
}

bool crc32c_hardware_available() { return false; }

uint32_t crc32c_extend(uint32_t crc, ByteView data) { return crc32c_extend_portable(crc, data); }

}  // namespace sluice
