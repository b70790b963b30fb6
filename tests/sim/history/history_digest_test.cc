// History::digest, the history's share of a run's trace hash: equal for equal histories, and changed by any field
// it folds (an operation's outcome, times, offsets or record digests, a world event, a declared effect).
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <vector>

#include "sim/history/history.h"

namespace sluice::sim {
namespace {

using namespace std::chrono_literals;

// Two produce operations, a fetch, a world event and an effect; `change` edits the history before it is digested.
uint64_t digest_with(const std::function<void(History&)>& change = {}) {
  History h;
  for (int i = 0; i < 2; ++i) {
    Operation op;
    op.kind = OpKind::kProduce;
    op.tp = {"t", i};
    op.offset = 10 + i;
    RecordView record;
    record.offset = 10 + i;
    record.value_digest = 0xabc0 + static_cast<uint64_t>(i);
    op.records.push_back(record);
    const uint64_t id = h.invoke(std::move(op), Instant{} + std::chrono::milliseconds(i));
    h.op(id).outcome = Outcome::kOk;
    h.complete(id, Instant{} + 5ms);
  }
  Operation fetch;
  fetch.kind = OpKind::kFetch;
  fetch.tp = {"t", 0};
  const uint64_t id = h.invoke(std::move(fetch), Instant{} + 6ms);
  h.op(id).outcome = Outcome::kOk;
  h.complete(id, Instant{} + 7ms);
  h.world(WorldEvent{WorldEvent::Kind::kDown, Instant{} + 8ms, "n1", "crash", 0});
  TimedEffect effect;
  effect.at = Instant{} + 9ms;
  effect.node = "n1";
  effect.effect.kind = storage::LogEffect::Kind::kLogStartAdvanced;
  effect.effect.from = 0;
  effect.effect.to = 3;
  h.effect(effect);
  if (change) change(h);
  return h.digest();
}

TEST(HistoryDigest, IsEqualForEqualHistoriesAndChangesWithAnyFoldedField) {
  const uint64_t base = digest_with();
  EXPECT_EQ(digest_with(), base);
  const std::vector<std::function<void(History&)>> changes = {
      [](History& h) { h.op(1).outcome = Outcome::kUnknown; },
      [](History& h) { h.op(0).offset = 11; },
      [](History& h) { h.op(0).result_offset = 4; },
      [](History& h) { h.op(1).completed_at += 1ms; },
      [](History& h) { h.op(0).records[0].value_digest ^= 1; },
      [](History& h) { h.op(1).records.push_back(h.op(1).records[0]); },
      [](History& h) { h.world(WorldEvent{WorldEvent::Kind::kServing, Instant{} + 10ms, "n1", "", 0}); },
      [](History& h) { h.effect(TimedEffect{Instant{} + 11ms, "n1", {}}); },
  };
  for (size_t i = 0; i < changes.size(); ++i) EXPECT_NE(digest_with(changes[i]), base) << "change " << i;
}

// An operation filled in where it is recorded is recorded as one moved in: the same id, times, JSON and digest.
TEST(HistoryDigest, AnOperationInvokedInPlaceIsRecordedAsOneMovedIn) {
  History moved;
  History in_place;
  for (int i = 0; i < 3; ++i) {
    const Instant at = Instant{} + std::chrono::milliseconds(i);
    Operation op;
    op.process = "consumer";
    op.kind = OpKind::kFetch;
    op.tp = {"t", i};
    op.offset = 7 + i;
    const uint64_t moved_id = moved.invoke(std::move(op), at);
    Operation& filled = in_place.invoke_in_place(at);
    filled.process = "consumer";
    filled.kind = OpKind::kFetch;
    filled.tp = {"t", i};
    filled.offset = 7 + i;
    EXPECT_EQ(filled.id, moved_id);
    EXPECT_FALSE(filled.completed);
    if (i != 1) {  // one left pending
      moved.complete(moved_id, at + 1ms);
      in_place.complete(filled.id, at + 1ms);
    }
  }
  EXPECT_EQ(in_place.to_json_lines(), moved.to_json_lines());
  EXPECT_EQ(in_place.digest(), moved.digest());
}

}  // namespace
}  // namespace sluice::sim
