// EventAction (event_action.h): a callable kept in place or on the heap runs once per call, survives moves, and is
// destroyed exactly once.
#include <gtest/gtest.h>

#include <array>
#include <memory>
#include <utility>
#include <vector>

#include "sim/world/event_action.h"

namespace sluice {
namespace {

// Counts its live copies through a shared counter, and calls through a shared total.
template <size_t kPadding>
struct Counted {
  std::shared_ptr<int> live;
  std::shared_ptr<int> calls;
  std::array<char, kPadding> padding{};
  Counted(std::shared_ptr<int> l, std::shared_ptr<int> c) : live(std::move(l)), calls(std::move(c)) { ++*live; }
  Counted(Counted&& other) noexcept : live(other.live), calls(other.calls), padding(other.padding) { ++*live; }
  Counted(const Counted&) = delete;
  ~Counted() { --*live; }
  void operator()() { ++*calls; }
};

template <size_t kPadding>
void check_moves_calls_and_destroys() {
  auto live = std::make_shared<int>(0);
  auto calls = std::make_shared<int>(0);
  {
    EventAction a(Counted<kPadding>(live, calls));
    EXPECT_EQ(*live, 1);
    ASSERT_TRUE(a);
    a();
    EventAction b(std::move(a));
    EXPECT_FALSE(a);
    EXPECT_EQ(*live, 1);
    b();
    std::vector<EventAction> actions;
    actions.push_back(std::move(b));
    for (int i = 0; i < 40; ++i) actions.emplace_back(Counted<kPadding>(live, calls));  // reallocates: relocations
    EXPECT_EQ(*live, 41);
    for (EventAction& action : actions) action();
    EXPECT_EQ(*calls, 2 + 41);
    EventAction c;
    c = std::move(actions.front());
    actions.erase(actions.begin());
    EXPECT_EQ(*live, 41);
    c = std::move(actions.back());  // assigning over a held callable destroys it
    actions.pop_back();
    EXPECT_EQ(*live, 40);
    c.reset();
    EXPECT_FALSE(c);
    EXPECT_EQ(*live, 39);
  }
  EXPECT_EQ(*live, 0);
}

TEST(EventAction, AnInlineCallableRunsMovesAndIsDestroyedOnce) {
  static_assert(sizeof(Counted<8>) <= EventAction::kInlineBytes);
  check_moves_calls_and_destroys<8>();
}

TEST(EventAction, AHeapCallableRunsMovesAndIsDestroyedOnce) {
  static_assert(sizeof(Counted<200>) > EventAction::kInlineBytes);
  check_moves_calls_and_destroys<200>();
}

// emplace builds in an empty action what the constructor would: both storage kinds, destroyed once, and the action
// can be emptied and filled again.
template <size_t kPadding>
void check_emplace() {
  auto live = std::make_shared<int>(0);
  auto calls = std::make_shared<int>(0);
  {
    EventAction action;
    action.emplace(Counted<kPadding>(live, calls));
    ASSERT_TRUE(action);
    EXPECT_EQ(*live, 1);
    action();
    EXPECT_EQ(*calls, 1);
    action.reset();
    EXPECT_EQ(*live, 0);
    action.emplace(Counted<kPadding>(live, calls));
    EventAction moved(std::move(action));
    moved();
    EXPECT_EQ(*calls, 2);
    EXPECT_EQ(*live, 1);
  }
  EXPECT_EQ(*live, 0);
}

TEST(EventAction, EmplaceBuildsAnInlineOrAHeapCallable) {
  check_emplace<8>();
  check_emplace<200>();
}

// run_once empties the action first, then calls the callable once and destroys it; while it runs, the callable may
// fill its own action again (a world event's slot goes to the events it schedules).
template <size_t kPadding>
void check_run_once() {
  auto live = std::make_shared<int>(0);
  auto calls = std::make_shared<int>(0);
  EventAction action(Counted<kPadding>(live, calls));
  action.run_once();
  EXPECT_FALSE(action);
  EXPECT_EQ(*calls, 1);
  EXPECT_EQ(*live, 0);
  int ran = 0;
  std::array<char, kPadding> padding{};
  action.emplace([&action, &ran, padding] {
    EXPECT_FALSE(action);
    action.emplace([&ran, padding] { ran += 10 + padding[0]; });
    ++ran;
  });
  action.run_once();
  EXPECT_EQ(ran, 1);
  ASSERT_TRUE(action);
  action.run_once();
  EXPECT_EQ(ran, 11);
  EXPECT_FALSE(action);
}

TEST(EventAction, RunOnceCallsAnInlineOrAHeapCallableOnceAndDestroysIt) {
  check_run_once<8>();
  check_run_once<200>();
}

TEST(EventAction, AMutableLambdaKeepsItsStateBetweenCalls) {
  int seen = 0;
  EventAction count([n = 0, &seen]() mutable { seen = ++n; });
  count();
  count();
  EXPECT_EQ(seen, 2);
}

}  // namespace
}  // namespace sluice
