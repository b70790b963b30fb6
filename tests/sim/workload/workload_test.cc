// make_value's bytes are what every earlier build wrote (traces and disks compare across builds): checked against
// its definition, one base-36 digit per division, over lengths that end mid-draw and on a draw's end.
#include <gtest/gtest.h>

#include <string>

#include "core/env/random.h"
#include "sim/workload/workload.h"

namespace sluice::sim {
namespace {

// The definition: "<process>#<n>|", then each draw's twelve lowest base-36 digits, low digit first, as filler
// characters, the last draw cut off at `bytes`.
Bytes defined_value(const std::string& process, uint64_t n, int bytes, Random& random) {
  constexpr char kFiller[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  const std::string text = process + "#" + std::to_string(n) + "|";
  Bytes value(text.begin(), text.end());
  while (value.size() < static_cast<size_t>(bytes)) {
    uint64_t draw = random.next_u64();
    for (int digit = 0; digit < 12 && value.size() < static_cast<size_t>(bytes); ++digit) {
      value.push_back(static_cast<uint8_t>(kFiller[draw % 36]));
      draw /= 36;
    }
  }
  return value;
}

TEST(MakeValue, IsItsDefinitionByteForByteAndDrawsAsMany) {
  for (const std::string process : {"", "p", "acks-all", "a-workload-name-longer-than-sso"}) {
    for (const uint64_t n : {uint64_t{0}, uint64_t{7}, uint64_t{123456}, UINT64_MAX}) {
      for (int bytes = 0; bytes <= 130; ++bytes) {
        Random made(n + static_cast<uint64_t>(bytes));
        Random defined(n + static_cast<uint64_t>(bytes));
        for (int round = 0; round < 4; ++round) {
          ASSERT_EQ(make_value(process, n + round, bytes, made), defined_value(process, n + round, bytes, defined))
              << process << " #" << n + round << ", " << bytes << " bytes";
        }
        EXPECT_EQ(made.next_u64(), defined.next_u64()) << "as many draws";
      }
    }
  }
}

TEST(MakeValue, NeverCutsItsPrefix) {
  Random random(1);
  const Bytes value = make_value("producer-1", 42, 4, random);
  EXPECT_EQ(std::string(value.begin(), value.end()), "producer-1#42|");
}

}  // namespace
}  // namespace sluice::sim
