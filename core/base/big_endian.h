// Big-endian (network order) loads and stores of fixed-width integers, as Kafka's wire and file formats use.
// One unaligned memcpy and a byte swap each: decoding a batch header or a request field byte by byte cost ~7x more.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace sluice {

static_assert(std::endian::native == std::endian::little || std::endian::native == std::endian::big);

namespace detail {

template <typename U>
constexpr U byteswap_if_little(U v) {
  static_assert(std::is_unsigned_v<U>);
  if constexpr (std::endian::native == std::endian::big || sizeof(U) == 1) {
    return v;
  } else if constexpr (sizeof(U) == 2) {
    return __builtin_bswap16(v);
  } else if constexpr (sizeof(U) == 4) {
    return __builtin_bswap32(v);
  } else {
    static_assert(sizeof(U) == 8);
    return __builtin_bswap64(v);
  }
}

}  // namespace detail

// The integer T stored big-endian at p (sizeof(T) bytes, any alignment).
template <typename T>
T load_be(const uint8_t* p) {
  static_assert(std::is_integral_v<T>);
  using U = std::make_unsigned_t<T>;
  U raw;
  std::memcpy(&raw, p, sizeof(U));
  return static_cast<T>(detail::byteswap_if_little(raw));
}

// Stores v big-endian at p (sizeof(T) bytes, any alignment).
template <typename T>
void store_be(uint8_t* p, T v) {
  static_assert(std::is_integral_v<T>);
  using U = std::make_unsigned_t<T>;
  const U raw = detail::byteswap_if_little(static_cast<U>(v));
  std::memcpy(p, &raw, sizeof(U));
}

}  // namespace sluice
