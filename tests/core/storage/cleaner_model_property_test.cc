// A RapidCheck model-based property of compaction on the simulated disk: random keyed appends (tombstones,
// every codec), rolls, cleaner passes with random knobs, passing time, graceful closes and power losses
// (durability=persisted, so nothing acknowledged may be lost), judged after every step against the plain list
// of what was appended. Compaction may drop only what its contract allows: a read never returns a record that was
// not appended at that offset; the latest value of every key is always there; a tombstone stays at least
// delete.retention.ms; the active segment is never rewritten; offsets only grow.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "core/storage/cleaner.h"
#include "tests/core/storage/log_test_util.h"

namespace sluice::storage {
namespace {

using namespace log_testing;

const std::string kDir = "c0";
constexpr int64_t kDeleteRetentionMs = 3600000;

enum Kind : int { kAppend, kRoll, kClean, kSleep, kReopen, kPowerLoss };

struct Op {
  int kind = kAppend;
  std::vector<int> keys;        // kAppend: key index per record; negative = a tombstone of key -k-1
  int codec = 0;                // kAppend: Compression
  double min_ratio = 0.5;       // kClean
  bool force = false;           // kClean
  int64_t sleep_ms = 0;         // kSleep
};

std::ostream& operator<<(std::ostream& os, const Op& op) {
  static constexpr const char* kKinds[] = {"append", "roll", "clean", "sleep", "reopen", "power_loss"};
  os << kKinds[op.kind];
  if (op.kind == kAppend) {
    os << "[codec " << op.codec;
    for (int k : op.keys) os << " " << k;
    os << "]";
  }
  if (op.kind == kClean) os << "(ratio " << op.min_ratio << (op.force ? ", forced)" : ")");
  if (op.kind == kSleep) os << "(" << op.sleep_ms << " ms)";
  return os;
}

rc::Gen<Op> op_gen() {
  const rc::Gen<int> kind = rc::gen::weightedElement<int>(
      {{8, kAppend}, {3, kRoll}, {4, kClean}, {2, kSleep}, {1, kReopen}, {1, kPowerLoss}});
  return rc::gen::mapcat(kind, [](int k) {
    return rc::gen::build<Op>(
        rc::gen::set(&Op::kind, rc::gen::just(k)),
        rc::gen::set(&Op::keys, rc::gen::container<std::vector<int>>(
                                    static_cast<size_t>(k == kAppend ? 3 : 0), rc::gen::inRange(-5, 6))),
        rc::gen::set(&Op::codec, rc::gen::inRange(0, 5)),
        rc::gen::set(&Op::min_ratio, rc::gen::element(0.0, 0.3, 0.5, 0.9)),
        rc::gen::set(&Op::force, rc::gen::arbitrary<bool>()),
        rc::gen::set(&Op::sleep_ms, rc::gen::inRange<int64_t>(0, 2 * kDeleteRetentionMs)));
  });
}

struct Appended {
  std::string key;
  std::optional<std::string> value;  // nullopt: tombstone
  int64_t appended_ms = 0;
};

struct Run {
  std::vector<Op> ops;
  size_t next_op = 0;
  std::map<int64_t, Appended> model;  // every acknowledged record by offset
  int64_t checkpoint = 0;
  int passes = 0;
  int64_t removed = 0;
  std::string violation;
  bool power_loss_after = false;

  void fail(const std::string& what) {
    if (violation.empty()) violation = "step " + std::to_string(next_op) + ": " + what;
  }
};

void do_append(Env env, PartitionLog& log, const Op& op, Run& run) {
  const int64_t now = to_unix_ms(env.clock.wall_now());
  std::vector<Record> records;
  std::vector<Appended> appended;
  for (size_t i = 0; i < op.keys.size(); ++i) {
    const int k = op.keys[i] < 0 ? -op.keys[i] - 1 : op.keys[i];
    Appended a{"k" + std::to_string(k), std::nullopt, now};
    if (op.keys[i] >= 0) a.value = "v" + std::to_string(run.model.size() + i) + std::string(40, 'x');
    Record r;
    r.offset = static_cast<int64_t>(i);
    r.timestamp = now;
    r.key = to_bytes(a.key);
    if (a.value.has_value()) r.value = to_bytes(*a.value);
    records.push_back(std::move(r));
    appended.push_back(std::move(a));
  }
  BatchOptions options;
  options.compression = static_cast<Compression>(op.codec);
  Result<Bytes> batch = build_batch(records, options);
  if (!batch.ok()) return run.fail("build_batch: " + batch.status().to_string());
  Result<AppendResult> result = log.append(*batch);
  if (!result.ok()) return run.fail("append: " + result.status().to_string());
  if (result->base_offset != log.log_end_offset() - static_cast<int64_t>(records.size())) run.fail("append offsets");
  for (size_t i = 0; i < appended.size(); ++i) run.model[result->base_offset + static_cast<int64_t>(i)] = appended[i];
}

void do_clean(Env env, PartitionLog& log, const Op& op, Run& run) {
  CleanerOptions options;
  options.delete_retention_ms = kDeleteRetentionMs;
  options.min_cleanable_dirty_ratio = op.min_ratio;
  options.map_memory_bytes = 24 * 8;  // a tiny map: partial passes happen
  Result<CleanResult> result = clean_once(log, run.checkpoint, options, to_unix_ms(env.clock.wall_now()), op.force);
  if (!result.ok()) return run.fail("clean_once: " + result.status().to_string());
  run.passes += result->cleaned ? 1 : 0;
  run.removed += result->records_removed;
}

// The whole log against the model.
void check(Env env, PartitionLog& log, Run& run) {
  const int64_t now = to_unix_ms(env.clock.wall_now());
  const int64_t end = run.model.empty() ? 0 : run.model.rbegin()->first + 1;
  if (log.log_end_offset() != end) run.fail("log end " + std::to_string(log.log_end_offset()));
  std::map<std::string, int64_t> latest;
  for (const auto& [offset, a] : run.model) latest[a.key] = offset;
  std::map<int64_t, bool> present;
  int64_t previous = -1;
  for (const Seen& s : read_all(log)) {
    auto it = run.model.find(s.offset);
    if (s.offset <= previous) run.fail("offsets out of order at " + std::to_string(s.offset));
    previous = s.offset;
    if (it == run.model.end() || s.key != it->second.key || s.value != it->second.value) {
      return run.fail("read a record never appended at offset " + std::to_string(s.offset));
    }
    present[s.offset] = true;
  }
  const int64_t active_base = log.segments().back().base_offset;
  for (const auto& [offset, a] : run.model) {
    if (present.count(offset) != 0) continue;
    const bool is_latest = latest[a.key] == offset;
    if (offset >= active_base) run.fail("a record of the active segment vanished: " + std::to_string(offset));
    if (is_latest && a.value.has_value()) run.fail("the latest value of " + a.key + " vanished");
    if (is_latest && now < a.appended_ms + kDeleteRetentionMs) run.fail("a young tombstone vanished");
  }
}

bool apply(Env env, PartitionLog& log, const Op& op, Run& run) {
  switch (op.kind) {
    case kAppend: do_append(env, log, op, run); break;
    case kRoll: if (!log.roll().ok()) run.fail("roll"); break;
    case kClean: do_clean(env, log, op, run); break;
    case kSleep: env.scheduler.sleep_for(std::chrono::milliseconds(op.sleep_ms)); break;
    case kReopen: if (!log.close().ok()) run.fail("close"); return false;
    default: run.power_loss_after = true; return false;
  }
  return true;
}

void run_boot(Env env, Run& run) {
  LogSettings settings = small_settings();
  settings.persisted = true;
  settings.segment_bytes = 600;
  Result<std::unique_ptr<PartitionLog>> opened = PartitionLog::open(env, kDir, settings);
  if (!opened.ok()) return run.fail("open: " + opened.status().to_string());
  check(env, **opened, run);
  run.power_loss_after = true;
  while (run.next_op < run.ops.size() && run.violation.empty()) {
    const Op& op = run.ops[run.next_op];
    run.power_loss_after = false;
    const bool more = apply(env, **opened, op, run);
    ++run.next_op;
    if (!more) return;
    check(env, **opened, run);
    run.power_loss_after = true;
  }
}

RC_GTEST_PROP(CleanerModel, CompactionKeepsWhatItsContractPromises, ()) {
  Run run;
  run.ops = *rc::gen::container<std::vector<Op>>(static_cast<size_t>(*rc::gen::inRange(20, 60)), op_gen());
  const uint64_t seed = *rc::gen::inRange<uint64_t>(1, 1000000);
  {
    OneNode world(seed);
    bool more = true;
    while (more && run.violation.empty()) {
      more = run.next_op < run.ops.size();
      if (!world.run([&run](Env env) { run_boot(env, run); }, std::chrono::hours(1000))) run.fail("boot hung");
      if (run.power_loss_after) world.node().power_loss();
    }
  }
  if (!run.violation.empty()) {
    std::ostringstream ops;
    for (const Op& op : run.ops) ops << op << "; ";
    RC_FAIL(run.violation + "\n  ops: " + ops.str());
  }
  RC_TAG(run.passes > 0 ? "cleaned" : "-", run.removed > 0 ? "removed records" : "-");
}

}  // namespace
}  // namespace sluice::storage
