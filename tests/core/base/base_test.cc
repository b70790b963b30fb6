#include <gtest/gtest.h>

#include <set>

#include "core/base/assert.h"
#include "core/base/result.h"
#include "core/base/status.h"
#include "core/env/file_system.h"
#include "core/env/network.h"
#include "core/env/random.h"

namespace sluice {
namespace {

Result<int> parse_positive(int x) {
  if (x <= 0) return invalid_argument("not positive: " + std::to_string(x));
  return x;
}

Status use_try(int x, int* out) {
  SLUICE_ASSIGN_OR_RETURN(int value, parse_positive(x));
  *out = value;
  SLUICE_TRY(value > 100 ? no_space("too big") : Status());
  return Status();
}

TEST(Status, CarriesKindAndMessage) {
  Status s = no_space("segment 42: disk full");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Code::kNoSpace);
  EXPECT_EQ(s.to_string(), "NoSpace: segment 42: disk full");
  EXPECT_TRUE(Status().ok());
}

TEST(Result, ValueOrStatusAndMacros) {
  int out = 0;
  EXPECT_TRUE(use_try(5, &out).ok());
  EXPECT_EQ(out, 5);
  EXPECT_EQ(use_try(-1, &out).code(), Code::kInvalidArgument);
  EXPECT_EQ(use_try(500, &out).code(), Code::kNoSpace);
  Result<int> r = parse_positive(3);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, 3);
}

TEST(Random, SeededStreamsReplayAndDiffer) {
  Random a(42), b(42), c(43);
  for (int i = 0; i < 100; ++i) {
    const uint64_t x = a.next_u64();
    EXPECT_EQ(x, b.next_u64());
    (void)c;
  }
  EXPECT_NE(Random(42).next_u64(), Random(43).next_u64());
  Random base(7);
  EXPECT_NE(base.fork(1).next_u64(), base.fork(2).next_u64());
  EXPECT_EQ(base.fork(1).next_u64(), Random(7).fork(1).next_u64());
}

TEST(Random, UniformStaysInRange) {
  Random r(1);
  std::set<uint64_t> seen;
  for (int i = 0; i < 1000; ++i) {
    const uint64_t v = r.uniform(10);
    EXPECT_LT(v, 10u);
    seen.insert(v);
    const int64_t w = r.uniform_range(-3, 3);
    EXPECT_GE(w, -3);
    EXPECT_LE(w, 3);
  }
  EXPECT_EQ(seen.size(), 10u);
}

TEST(Address, ParsesAndRejects) {
  auto a = parse_address("127.0.0.1:9092");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->host, "127.0.0.1");
  EXPECT_EQ(a->port, 9092);
  EXPECT_EQ(a->to_string(), "127.0.0.1:9092");
  auto v6 = parse_address("[::1]:0");
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->to_string(), "[::1]:0");
  EXPECT_FALSE(parse_address("nohost").ok());
  EXPECT_FALSE(parse_address("h:99999").ok());
  EXPECT_FALSE(parse_address(":9092").ok());
  EXPECT_FALSE(parse_address("h:").ok());
}

TEST(Paths, ParentAndJoin) {
  EXPECT_EQ(parent_dir("a/b/c.log"), "a/b");
  EXPECT_EQ(parent_dir("c.log"), ".");
  EXPECT_EQ(parent_dir("/c"), "/");
  EXPECT_EQ(join_path("a/", "b"), "a/b");
  EXPECT_EQ(join_path(".", "b"), "b");
}

void rare_path_for_test() { SLUICE_PROBE("test.rare_path"); }

TEST(Probe, SitesAreListedBeforeAndCountedAfterTheyFire) {
  auto find = [] () -> ProbeSite* {
    for (ProbeSite& site : probe_sites()) {
      if (std::string(site.name) == "test.rare_path") return &site;
    }
    return nullptr;
  };
  ProbeSite* site = find();
  ASSERT_NE(site, nullptr) << "probe sites are registered at link time, before they run";
  const uint64_t before = site->hits;
  rare_path_for_test();
  rare_path_for_test();
  EXPECT_EQ(site->hits, before + 2);
}

TEST(AssertDeathTest, FailurePrintsExpressionAndRunsHook) {
  EXPECT_DEATH(
      {
        set_assert_failure_hook([] { fprintf(stderr, "HOOK: replay with --seed 5\n"); });
        SLUICE_ASSERT(1 + 1 == 3);
      },
      "assertion failed: 1 \\+ 1 == 3(.|\n)*HOOK: replay with --seed 5");
}

TEST(VerifyDeathTest, OnlyEvaluatedWhenEnabled) {
  set_verify_enabled(false);
  int evaluated = 0;
  SLUICE_VERIFY((++evaluated, true));
  EXPECT_EQ(evaluated, 0);
  set_verify_enabled(true);
  SLUICE_VERIFY((++evaluated, true));
  EXPECT_EQ(evaluated, 1);
  EXPECT_DEATH(SLUICE_VERIFY(false), "verify");
}

}  // namespace
}  // namespace sluice
