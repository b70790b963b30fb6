// The mutation table: names round-trip, sets print and parse, unknown names are refused naming the valid ones.
#include "core/base/mutations.h"

#include <gtest/gtest.h>

#include <set>

namespace sluice {
namespace {

TEST(Mutations, EveryMutationHasAUniqueNameThatParsesBack) {
  ASSERT_EQ(all_mutations().size(), kMutationCount);
  std::set<std::string_view> names;
  for (const MutationInfo& info : all_mutations()) {
    EXPECT_EQ(mutation_name(info.mutation), info.name);
    EXPECT_EQ(parse_mutation(info.name), info.mutation);
    EXPECT_FALSE(info.what.empty()) << info.name;
    names.insert(info.name);
  }
  EXPECT_EQ(names.size(), kMutationCount);
  EXPECT_EQ(mutation_name(Mutation::kCommitWrongPartition), "commit-wrong-partition");
  EXPECT_EQ(parse_mutation("no-such-bug"), std::nullopt);
}

TEST(Mutations, ASetPrintsInTableOrderAndParsesBack) {
  MutationSet set;
  EXPECT_TRUE(set.empty());
  EXPECT_EQ(set.to_string(), "");
  set.add(Mutation::kTombstoneBeforeHorizon);
  set.add(Mutation::kAckBeforeAppend);
  EXPECT_FALSE(set.empty());
  EXPECT_TRUE(set.has(Mutation::kAckBeforeAppend));
  EXPECT_FALSE(set.has(Mutation::kSkipPersistedFsync));
  EXPECT_EQ(set.to_string(), "ack-before-append,tombstone-before-horizon");
  Result<MutationSet> parsed = MutationSet::parse(" tombstone-before-horizon , ack-before-append,");
  ASSERT_TRUE(parsed.ok()) << parsed.status().to_string();
  EXPECT_EQ(*parsed, set);
  Result<MutationSet> empty = MutationSet::parse("  ");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
}

TEST(Mutations, AnUnknownNameIsRefusedNamingTheValidOnes) {
  Result<MutationSet> parsed = MutationSet::parse("ack-before-append,drop-everything");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().code(), Code::kInvalidArgument);
  const std::string& message = parsed.status().message();
  EXPECT_NE(message.find("drop-everything"), std::string::npos) << message;
  for (const MutationInfo& info : all_mutations()) {
    EXPECT_NE(message.find(info.name), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace sluice
