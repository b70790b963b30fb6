// What every File implementation must do alike, checked the same way against each (the simulated file in
// tests/sim/world, the POSIX one in tests/net).
#pragma once

#include <gtest/gtest.h>

#include "core/base/bytes.h"
#include "core/env/file_system.h"

namespace sluice::testing {

// pread_append on a file holding "abcdef": the bytes read land after what the buffer held, fewer at the end of
// the file, none at or past it. Returns the buffer, "xycdeef" when every check passed, for the caller's own.
inline Bytes expect_pread_append_adds_after_the_buffers_own(File& file) {
  Bytes out = to_bytes("xy");
  EXPECT_EQ(*file.pread_append(2, 3, out), 3u);
  EXPECT_EQ(as_chars(out), "xycde");
  EXPECT_EQ(*file.pread_append(4, 10, out), 2u);  // fewer at the end of the file
  EXPECT_EQ(as_chars(out), "xycdeef");
  EXPECT_EQ(*file.pread_append(6, 4, out), 0u);
  EXPECT_EQ(*file.pread_append(100, 4, out), 0u);
  EXPECT_EQ(as_chars(out), "xycdeef");
  return out;
}

}  // namespace sluice::testing
