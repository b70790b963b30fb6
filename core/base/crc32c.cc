#include "core/base/crc32c.h"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

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

#if defined(__x86_64__)

namespace {

// The crc32 instruction has a latency of 3 cycles and a throughput of 1, so three independent streams over three
// adjacent blocks keep it busy; their registers are then joined by "shifting" the first ones over the blocks that
// follow them, which is a linear map on the 32-bit register, tabulated per byte (Adler's crc32c.c technique).
constexpr size_t kLongBlock = 8192;
constexpr size_t kShortBlock = 256;

using ShiftTable = std::array<std::array<uint32_t, 256>, 4>;

// The register after `zero_bytes` zero bytes, starting from `crc` (no pre or post inversion).
uint32_t advance_over_zeros(uint32_t crc, size_t zero_bytes) {
  for (size_t i = 0; i < zero_bytes; ++i) crc = kTables[0][crc & 0xff] ^ (crc >> 8);
  return crc;
}

ShiftTable make_shift_table(size_t zero_bytes) {
  std::array<uint32_t, 32> basis{};
  for (unsigned bit = 0; bit < 32; ++bit) basis[bit] = advance_over_zeros(uint32_t{1} << bit, zero_bytes);
  ShiftTable table{};
  for (unsigned k = 0; k < 4; ++k) {
    for (unsigned b = 0; b < 256; ++b) {
      uint32_t v = 0;
      for (unsigned bit = 0; bit < 8; ++bit) {
        if ((b >> bit) & 1) v ^= basis[8 * k + bit];
      }
      table[k][b] = v;
    }
  }
  return table;
}

uint32_t shift(const ShiftTable& table, uint32_t crc) {
  return table[0][crc & 0xff] ^ table[1][(crc >> 8) & 0xff] ^ table[2][(crc >> 16) & 0xff] ^ table[3][crc >> 24];
}

struct ShiftTables {
  ShiftTable long_block = make_shift_table(kLongBlock);
  ShiftTable short_block = make_shift_table(kShortBlock);
};

const ShiftTables& shift_tables() {
  static const ShiftTables tables;  // built once, on first use (magic statics are thread-safe)
  return tables;
}

// Runs three crc32 streams over three adjacent blocks of `block` bytes each, as long as `*n` allows.
__attribute__((target("sse4.2"))) uint64_t crc_triple_blocks(uint64_t c0, const uint8_t** p, size_t* n, size_t block,
                                                              const ShiftTable& table) {
  while (*n >= 3 * block) {
    uint64_t c1 = 0;
    uint64_t c2 = 0;
    const uint8_t* a = *p;
    for (const uint8_t* end = a + block; a < end; a += 8) {
      c0 = _mm_crc32_u64(c0, load_le64(a));
      c1 = _mm_crc32_u64(c1, load_le64(a + block));
      c2 = _mm_crc32_u64(c2, load_le64(a + 2 * block));
    }
    c0 = shift(table, static_cast<uint32_t>(c0)) ^ c1;
    c0 = shift(table, static_cast<uint32_t>(c0)) ^ c2;
    *p += 3 * block;
    *n -= 3 * block;
  }
  return c0;
}

__attribute__((target("sse4.2"))) uint32_t crc32c_extend_sse42(uint32_t crc, ByteView data) {
  const uint8_t* p = data.data();
  size_t n = data.size();
  uint64_t c = static_cast<uint32_t>(~crc);
  // Align to 8 bytes so that the 64-bit loads below never straddle a cache line needlessly.
  for (; n > 0 && (reinterpret_cast<uintptr_t>(p) & 7) != 0; --n, ++p) c = _mm_crc32_u8(static_cast<uint32_t>(c), *p);
  if (n >= 3 * kShortBlock) {
    const ShiftTables& tables = shift_tables();
    c = crc_triple_blocks(c, &p, &n, kLongBlock, tables.long_block);
    c = crc_triple_blocks(c, &p, &n, kShortBlock, tables.short_block);
  }
  for (; n >= 8; n -= 8, p += 8) c = _mm_crc32_u64(c, load_le64(p));
  for (; n > 0; --n, ++p) c = _mm_crc32_u8(static_cast<uint32_t>(c), *p);
  return ~static_cast<uint32_t>(c);
}

bool detect_sse42() {
  __builtin_cpu_init();  // required when called before constructors might have run
  return __builtin_cpu_supports("sse4.2");
}

}  // namespace

bool crc32c_hardware_available() {
  static const bool available = detect_sse42();
  return available;
}

uint32_t crc32c_extend(uint32_t crc, ByteView data) {
  return crc32c_hardware_available() ? crc32c_extend_sse42(crc, data) : crc32c_extend_portable(crc, data);
}

#else

bool crc32c_hardware_available() { return false; }

uint32_t crc32c_extend(uint32_t crc, ByteView data) { return crc32c_extend_portable(crc, data); }

#endif

}  // namespace sluice
