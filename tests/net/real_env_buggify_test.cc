// The real world never enables BUGGIFY: its sites never fire in `sluice serve`.
#include <gtest/gtest.h>

#include "core/env/buggify.h"
#include "net/real_env.h"

namespace sluice {
namespace {

TEST(RealEnvBuggify, IsOffAndNoSiteFires) {
  RealEnv real("test", LogLevel::kOff);
  EXPECT_FALSE(real.buggify().enabled());
  int fired = 0;
  ASSERT_EQ(real.run([&fired](Env& env) {
              EXPECT_FALSE(env.buggify.enabled());
              for (int i = 0; i < 1000; ++i) fired += SLUICE_BUGGIFY(env.buggify, "test.real-world") ? 1 : 0;
            }),
            0);
  EXPECT_EQ(fired, 0);
  EXPECT_EQ(real.buggify().fired(), 0u);
}

}  // namespace
}  // namespace sluice
