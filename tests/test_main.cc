// Shared main for the three test binaries: tests run quiet, with the expensive SLUICE_VERIFY checks on.
#include <gtest/gtest.h>

#include "core/base/assert.h"

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  sluice::set_verify_enabled(true);
  return RUN_ALL_TESTS();
}
