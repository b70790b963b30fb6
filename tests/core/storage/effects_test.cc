// Declared effects (core/storage/effects.h): how an effect reads in traces and failure reports.
#include "core/storage/effects.h"

#include <gtest/gtest.h>

namespace sluice::storage {
namespace {

using Kind = LogEffect::Kind;
using Reason = LogEffect::Reason;

const TopicPartition kTp{"t", 0};

TEST(EffectText, OneLineForTracesAndFailureReports) {
  LogEffect effect;
  effect.reason = Reason::kRetentionTime;
  effect.tp = {"orders", 3};
  effect.from = 10;
  effect.to = 42;
  effect.now_ms = 1700000000000;
  EXPECT_EQ(to_string(effect), "log-start-advanced orders-3 [10, 42) by retention.ms now_ms=1700000000000");
  LogEffect pass;
  pass.kind = Kind::kCompacted;
  pass.tp = kTp;
  pass.from = 0;
  pass.to = 7;
  pass.now_ms = 5;
  pass.delete_retention_ms = 86400000;
  EXPECT_EQ(to_string(pass), "compacted t-0 [0, 7) now_ms=5 delete.retention.ms=86400000");
  LogEffect created;
  created.kind = Kind::kPartitionCreated;
  created.tp = kTp;
  EXPECT_EQ(to_string(created), "partition-created t-0");
}

}  // namespace
}  // namespace sluice::storage
