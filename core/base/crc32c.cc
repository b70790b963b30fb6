#include "core/base/crc32c.h"

#include <isa-l/crc.h>

#include <algorithm>
#include <array>
#include <cstring>

// ISA-L's SSE4.2 + PCLMULQDQ CRC32C, which its dispatcher (crc32_iscsi) picks on CPUs without AVX-512: exported by
// libisal under this name (its multibinary variants keep their names), though isa-l/crc.h declares only the
// dispatcher and the table-driven base.
extern "C" unsigned int crc32_iscsi_01(unsigned char* buffer, int len, unsigned int init_crc);

namespace sluice {
namespace {

constexpr uint32_t kPolynomial = 0x82f63b78;  // reflected Castagnoli

// Slicing-by-8 tables: kTables[k][b] is the CRC register contribution of byte b followed by k zero bytes.
using Tables = std::array<std::array<uint32_t, 256>, 8>;

constexpr Tables make_tables() {
  Tables t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t crc = i;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ ((crc & 1) ? kPolynomial : 0);
    t[0][i] = crc;
  }
  for (size_t k = 1; k < 8; ++k) {
    for (uint32_t i = 0; i < 256; ++i) t[k][i] = (t[k - 1][i] >> 8) ^ t[0][t[k - 1][i] & 0xff];
  }
  return t;
}

constexpr Tables kTables = make_tables();

uint64_t load_le64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;  // x86-64 and every target we build for are little-endian; the CRC is defined on reflected bytes
}

}  // namespace

uint32_t crc32c_extend_portable(uint32_t crc, ByteView data) {
  const uint8_t* p = data.data();
  size_t n = data.size();
  uint32_t c = ~crc;
  for (; n >= 8; n -= 8, p += 8) {
    const uint64_t v = load_le64(p) ^ c;
    c = kTables[7][v & 0xff] ^ kTables[6][(v >> 8) & 0xff] ^ kTables[5][(v >> 16) & 0xff] ^
        kTables[4][(v >> 24) & 0xff] ^ kTables[3][(v >> 32) & 0xff] ^ kTables[2][(v >> 40) & 0xff] ^
        kTables[1][(v >> 48) & 0xff] ^ kTables[0][v >> 56];
  }
  for (; n > 0; --n, ++p) c = kTables[0][(c ^ *p) & 0xff] ^ (c >> 8);
  return ~c;
}

uint32_t crc32c_extend(uint32_t crc, ByteView data) {
  // The SSE4.2 code needs PCLMULQDQ too (x86-64 CPUs since 2010 have both); without them, ISA-L's own choice.
  using Checksum = unsigned int (*)(unsigned char*, int, unsigned int);
  static const Checksum checksum =
      __builtin_cpu_supports("sse4.2") && __builtin_cpu_supports("pclmul") ? &crc32_iscsi_01 : &crc32_iscsi;
  // ISA-L keeps the raw register (no pre or post inversion) and takes an int length, so long inputs go in pieces.
  constexpr size_t kMaxPiece = size_t{1} << 30;
  uint32_t reg = ~crc;
  for (size_t done = 0; done < data.size();) {
    const size_t piece = std::min(kMaxPiece, data.size() - done);
    reg = checksum(const_cast<uint8_t*>(data.data() + done), static_cast<int>(piece), reg);
    done += piece;
  }
  return ~reg;
}

}  // namespace sluice
