#include "core/protocol/serde.h"

#include <fmt/format.h>

namespace sluice::protocol {

void Decoder::null_check(std::string_view n, bool nullable) {
  if (nullable || !reader_.ok()) return;
  reader_.fail(n, fmt::format("null, but the field is not nullable in version {}", version_));
}

std::string Decoder::too_many_elements(int32_t count, size_t element_bytes) {
  return fmt::format("{} elements of {} bytes exceed the bytes left", count, element_bytes);
}

void Encoder::null_check(std::string_view n, bool nullable) {
  if (nullable) return;
  writer_.fail(invalid_argument(fmt::format("field '{}' is null, but not nullable in version {}", n, version_)));
}

}  // namespace sluice::protocol
