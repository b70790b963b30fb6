// A RapidCheck model-based property of the partition log on the simulated disk (storage-semantics.md §4-§5):
// random appends, reads, retention checks, DeleteRecords, rolls, passing time, graceful closes, crashes and power
// losses, each restart reopening "p0" in a new boot, judged after every step against a plain in-memory model of
// the contract: the acknowledged records by offset, the log start, the log end and the last point the log said
// was synced. Offsets are never renumbered; nothing below the log start is readable (except the rest of the batch
// holding it: reads return whole batches, as Kafka's do) and nothing the model holds is missing; the log start
// never moves backwards; a power loss loses nothing under durability=persisted and only a suffix above the last
// synced point under replicated; a close makes everything survive; retention moves the log start exactly to where
// the batch-prefix rule of retention.h says.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "core/protocol/error_codes.h"
#include "core/storage/partition_log.h"
#include "core/storage/record_batch.h"
#include "core/storage/retention.h"
#include "tests/core/storage/log_test_util.h"

namespace sluice::storage {
namespace {

using namespace log_testing;

const std::string kDir = "p0";
constexpr int64_t kHourMs = 3600000;

enum Kind : int { kAppend, kRead, kRetention, kDeleteRecords, kSleep, kRoll, kClose, kCrash, kPowerLoss };

struct RecordSpec {
  int value_pad = 0;
  int64_t age_ms = 0;  // the record's timestamp is now − age: now or in the past
};

struct Op {
  int kind = kAppend;
  std::vector<RecordSpec> records;  // kAppend
  // kRead, kDeleteRecords: picks the offset (see pick_offset); kRetention: retention.ms (-1: none); kSleep: ms;
  // kClose: 1 when the power fails after the close.
  int64_t a = 0;
  int64_t b = 0;  // kRead: max_bytes; kRetention: retention.bytes (-1: none)
};

std::ostream& operator<<(std::ostream& os, const Op& op) {
  static constexpr const char* kKinds[] = {"append", "read",  "retention", "delete_records", "sleep",
                                           "roll",   "close", "crash",     "power_loss"};
  os << kKinds[op.kind];
  if (op.kind == kAppend) {
    os << "[";
    for (const RecordSpec& r : op.records) os << " (pad " << r.value_pad << ", age " << r.age_ms << ")";
    return os << " ]";
  }
  return os << "(" << op.a << ", " << op.b << ")";
}

rc::Gen<RecordSpec> record_gen() {
  return rc::gen::build<RecordSpec>(
      rc::gen::set(&RecordSpec::value_pad, rc::gen::inRange(0, 121)),
      rc::gen::set(&RecordSpec::age_ms,
                   rc::gen::oneOf(rc::gen::just<int64_t>(0), rc::gen::inRange<int64_t>(0, 4 * kHourMs))));
}

rc::Gen<Op> op_of_kind(int kind) {
  rc::Gen<int64_t> a = rc::gen::just<int64_t>(0);
  rc::Gen<int64_t> b = rc::gen::just<int64_t>(0);
  rc::Gen<std::vector<RecordSpec>> records = rc::gen::just(std::vector<RecordSpec>());
  if (kind == kAppend) {
    records = rc::gen::mapcat(rc::gen::inRange(1, 6), [](int n) {
      return rc::gen::container<std::vector<RecordSpec>>(static_cast<size_t>(n), record_gen());
    });
  } else if (kind == kRead || kind == kDeleteRecords) {
    a = rc::gen::inRange<int64_t>(0, 1000);
    b = rc::gen::inRange<int64_t>(1, 4000);
  } else if (kind == kRetention) {
    a = rc::gen::oneOf(rc::gen::just<int64_t>(-1), rc::gen::just<int64_t>(0),
                       rc::gen::inRange<int64_t>(0, 5 * kHourMs));
    b = rc::gen::oneOf(rc::gen::just<int64_t>(-1), rc::gen::inRange<int64_t>(0, 6000));
  } else if (kind == kSleep) {
    a = rc::gen::inRange<int64_t>(0, 3 * kHourMs);
  } else if (kind == kClose) {
    a = rc::gen::inRange<int64_t>(0, 2);
  }
  return rc::gen::build<Op>(rc::gen::set(&Op::kind, rc::gen::just(kind)), rc::gen::set(&Op::records, records),
                            rc::gen::set(&Op::a, a), rc::gen::set(&Op::b, b));
}

rc::Gen<Op> op_gen() {
  const rc::Gen<int> kind = rc::gen::weightedElement<int>({{8, kAppend},
                                                           {4, kRead},
                                                           {3, kRetention},
                                                           {1, kDeleteRecords},
                                                           {2, kSleep},
                                                           {1, kRoll},
                                                           {1, kClose},
                                                           {1, kCrash},
                                                           {1, kPowerLoss}});
  return rc::gen::mapcat(kind, op_of_kind);
}

// ---- The model ----

struct ModelRecord {
  int64_t timestamp = 0;
  std::string value;
};

struct ModelBatch {
  int64_t last = 0;
  int64_t max_timestamp = -1;
  uint64_t size = 0;
};

struct Model {
  std::map<int64_t, ModelRecord> records;  // every acknowledged record not lost, below the log start too
  std::map<int64_t, ModelBatch> batches;   // by base offset
  int64_t log_start = 0;
  int64_t next = 0;    // log end = high watermark (single-node mode)
  int64_t synced = 0;  // the log's recovery point, the highest we saw: a power loss may not cut below it
  int appends = 0;     // tags values, so that a record read back at another offset is told apart

  // The first batch with an offset >= `offset` (batches are contiguous: the one holding it).
  std::map<int64_t, ModelBatch>::const_iterator batch_from(int64_t offset) const {
    auto it = batches.upper_bound(offset);
    if (it != batches.begin() && std::prev(it)->second.last >= offset) --it;
    return it;
  }
};

// Retention's rule (retention.h): the leading batches from the log start whose max timestamp is below
// now − retention.ms go, then the oldest until the bytes from the new log start fit; none at/above the HW.
int64_t expected_time_target(const Model& m, int64_t retention_ms, int64_t now_ms) {
  int64_t target = m.log_start;
  for (auto it = m.batch_from(m.log_start); it != m.batches.end(); ++it) {
    if (it->second.last >= m.next || it->second.max_timestamp >= now_ms - retention_ms) break;
    target = it->second.last + 1;
  }
  return target;
}

int64_t expected_size_target(const Model& m, int64_t from, int64_t retention_bytes) {
  uint64_t size = 0;
  for (auto it = m.batch_from(from); it != m.batches.end(); ++it) size += it->second.size;
  if (size <= static_cast<uint64_t>(retention_bytes)) return from;
  const uint64_t excess = size - static_cast<uint64_t>(retention_bytes);
  uint64_t evicted = 0;
  int64_t target = from;
  for (auto it = m.batch_from(from); it != m.batches.end() && evicted < excess; ++it) {
    if (it->second.last >= m.next) break;
    evicted += it->second.size;
    target = it->second.last + 1;
  }
  return target;
}

// ---- Checking ----

// The first violated invariant, with the step it was found at; later ones are usually its consequences. Checks
// inside the node's fiber record here instead of throwing (an exception must not cross a fiber switch).
class Verdict {
 public:
  bool check(bool holds, const std::string& what, int64_t expected = 0, int64_t actual = 0) {
    if (holds || !message_.empty()) return holds;
    message_ = where + ": " + what + " (expected " + std::to_string(expected) + ", got " +
               std::to_string(actual) + ")";
    return false;
  }
  bool ok() const { return message_.empty(); }
  const std::string& message() const { return message_; }
  std::string where;  // "step N (kind)" or "reopen before step N", N indexing the generated vector

 private:
  std::string message_;
};

// What a case exercised, for RapidCheck's tags: a property that never loses power or evicts proves little.
struct Coverage {
  int lossy_reopens = 0;   // a power loss took acknowledged records
  int evictions = 0;       // retention checks that moved the log start
  size_t max_segments = 0;
};

struct Run {
  LogSettings settings;
  Coverage coverage;
  std::vector<Op> ops;
  Model model;
  Verdict verdict;
  size_t next_op = 0;
  bool closed = false;            // the previous boot ended with a successful close()
  bool power_lost = false;        // and then the power failed
  bool power_loss_after = false;  // what the driver must do once the current boot returns
};

// Checks whole batches read from `offset` against the model. Returns the offset after the last one.
int64_t check_batches(const Bytes& bytes, int64_t offset, const Model& m, Verdict& v) {
  size_t consumed = 0;
  Result<std::vector<BatchSpan>> spans = split_batches(bytes, &consumed);
  if (!v.check(spans.ok() && consumed == bytes.size() && !spans->empty(), "read: not whole batches")) return offset;
  auto holding = m.batch_from(offset);
  if (!v.check(holding != m.batches.end(), "read: data past the model's end", m.next, offset)) return offset;
  int64_t expected_base = holding->first;
  for (const BatchSpan& span : *spans) {
    const BatchHeader& h = span.header;
    auto it = m.batches.find(h.base_offset);
    if (!v.check(h.base_offset == expected_base, "read: batch base", expected_base, h.base_offset)) return offset;
    if (!v.check(it != m.batches.end() && it->second.last == h.last_offset(), "read: batch end", 0, h.last_offset()))
      return offset;
    v.check(h.last_offset() >= m.log_start, "read: a batch wholly below the log start", m.log_start, h.base_offset);
    v.check(it->second.size == h.size_bytes(), "read: batch size", static_cast<int64_t>(it->second.size),
            static_cast<int64_t>(h.size_bytes()));
    Result<std::vector<Record>> records = decode_records(ByteView(bytes).subspan(span.position, h.size_bytes()));
    if (!v.check(records.ok(), "read: batch does not decode")) return offset;
    for (const Record& r : *records) {
      auto want = m.records.find(r.offset);
      if (!v.check(want != m.records.end(), "read: a record the model does not hold", -1, r.offset)) return offset;
      v.check(r.value.has_value() && as_chars(*r.value) == want->second.value, "read: renumbered value", r.offset);
      v.check(r.timestamp == want->second.timestamp, "read: timestamp", want->second.timestamp, r.timestamp);
    }
    expected_base = h.last_offset() + 1;
  }
  return expected_base;
}

void check_out_of_range(PartitionLog& log, int64_t offset, Verdict& v) {
  Result<ReadResult> read = log.read(offset, 1 << 16, INT64_MAX);
  v.check(!read.ok() && error_of(read.status()) == ErrorCode::kOffsetOutOfRange, "read: not out of range", offset);
}

// Everything from the log start to the log end reads back exactly; nothing outside does.
void check_all(PartitionLog& log, const Model& m, Verdict& v) {
  v.check(log.log_start_offset() == m.log_start, "log start", m.log_start, log.log_start_offset());
  v.check(log.log_end_offset() == m.next, "log end", m.next, log.log_end_offset());
  v.check(log.high_watermark() == m.next, "high watermark", m.next, log.high_watermark());
  v.check(log.recovery_point() <= m.next, "recovery point past the end", m.next, log.recovery_point());
  if (log.settings().persisted) {
    v.check(log.recovery_point() == m.next, "persisted: acknowledged but not synced", m.next, log.recovery_point());
  }
  int64_t offset = m.log_start;
  while (offset < m.next && v.ok()) {
    Result<ReadResult> read = log.read(offset, 1 << 16, INT64_MAX);
    if (!v.check(read.ok(), "read failed", offset)) return;
    if (!v.check(!read->records.empty(), "read: the model's record is missing", offset)) return;
    offset = check_batches(read->records, offset, m, v);
  }
  Result<ReadResult> at_end = log.read(m.next, 1 << 16, INT64_MAX);
  v.check(at_end.ok() && at_end->records.empty(), "read at the log end", m.next);
  if (m.log_start > 0) check_out_of_range(log, m.log_start - 1, v);
  check_out_of_range(log, m.next + 1, v);
}

// ---- Steps ----

void do_append(Env env, PartitionLog& log, const Op& op, Run& run) {
  Model& m = run.model;
  const int64_t now = to_unix_ms(env.clock.wall_now());
  const std::string tag = "a" + std::to_string(m.appends++) + ".";
  std::vector<Record> records;
  for (size_t i = 0; i < op.records.size(); ++i) {
    Record r;
    r.offset = static_cast<int64_t>(i);
    r.timestamp = now - op.records[i].age_ms;
    r.key = to_bytes("k" + std::to_string(i));
    r.value = to_bytes(tag + std::to_string(i) + std::string(static_cast<size_t>(op.records[i].value_pad), 'x'));
    records.push_back(std::move(r));
  }
  Result<Bytes> batch = build_batch(records);
  if (!run.verdict.check(batch.ok(), "build_batch")) return;
  Result<AppendResult> appended = log.append(*batch);
  if (static_cast<int64_t>(batch->size()) > run.settings.segment_bytes) {
    run.verdict.check(!appended.ok() && error_of(appended.status()) == ErrorCode::kRecordListTooLarge,
                      "append: a batch set over segment.bytes is refused", run.settings.segment_bytes,
                      static_cast<int64_t>(batch->size()));
    return;
  }
  if (!run.verdict.check(appended.ok(), "append failed: " + (appended.ok() ? "" : appended.status().to_string())))
    return;
  const int64_t n = static_cast<int64_t>(records.size());
  run.verdict.check(appended->base_offset == m.next, "append: base offset", m.next, appended->base_offset);
  run.verdict.check(appended->last_offset == m.next + n - 1, "append: last offset", m.next + n - 1,
                    appended->last_offset);
  ModelBatch mb{m.next + n - 1, -1, batch->size()};
  for (const Record& r : records) {
    mb.max_timestamp = std::max(mb.max_timestamp, r.timestamp);
    m.records[m.next + r.offset] = ModelRecord{r.timestamp, std::string(as_chars(*r.value))};
  }
  m.batches[m.next] = mb;
  m.next += n;
}

int64_t pick_offset(const Model& m, int64_t a) {
  const int64_t low = std::max<int64_t>(0, m.log_start - 2);
  return low + a % (m.next + 3 - low);  // from just below the log start to just past the end
}

void do_read(PartitionLog& log, const Op& op, Run& run) {
  const Model& m = run.model;
  Verdict& v = run.verdict;
  const int64_t offset = pick_offset(m, op.a);
  Result<ReadResult> read = log.read(offset, static_cast<size_t>(op.b), INT64_MAX);
  if (offset < m.log_start || offset > m.next) {
    v.check(!read.ok() && error_of(read.status()) == ErrorCode::kOffsetOutOfRange, "read: out of range", offset);
    return;
  }
  if (!v.check(read.ok(), "read failed", offset)) return;
  v.check(read->log_start_offset == m.log_start, "read: log start", m.log_start, read->log_start_offset);
  v.check(read->log_end_offset == m.next, "read: log end", m.next, read->log_end_offset);
  v.check(read->high_watermark == m.next, "read: high watermark", m.next, read->high_watermark);
  if (offset == m.next) {
    v.check(read->records.empty(), "read at the log end returned data", offset);
    return;
  }
  if (!v.check(!read->records.empty(), "read: the model's record is missing", offset)) return;
  check_batches(read->records, offset, m, v);
  // max_bytes may be exceeded only to return one whole batch.
  const uint64_t first = m.batch_from(offset)->second.size;
  v.check(read->records.size() <= std::max<uint64_t>(first, static_cast<uint64_t>(op.b)), "read: over max_bytes",
          op.b, static_cast<int64_t>(read->records.size()));
}

void do_retention(Env env, PartitionLog& log, const Op& op, Run& run) {
  Model& m = run.model;
  RetentionLimits limits;
  if (op.a >= 0) limits.retention_ms = op.a;
  if (op.b >= 0) limits.retention_bytes = op.b;
  const int64_t now = to_unix_ms(env.clock.wall_now());
  const int64_t by_time = op.a >= 0 ? expected_time_target(m, op.a, now) : m.log_start;
  const int64_t by_size = op.b >= 0 ? expected_size_target(m, by_time, op.b) : by_time;
  Result<RetentionResult> result = enforce_retention(log, limits, now);
  if (!run.verdict.check(result.ok(), "enforce_retention failed")) return;
  run.verdict.check(result->log_start_after == by_size, "retention: new log start", by_size, result->log_start_after);
  run.verdict.check(result->evicted_by_time == by_time - m.log_start, "retention: evicted by time",
                    by_time - m.log_start, result->evicted_by_time);
  run.verdict.check(result->evicted_by_size == by_size - by_time, "retention: evicted by size", by_size - by_time,
                    result->evicted_by_size);
  if (by_size > m.log_start) ++run.coverage.evictions;
  m.log_start = by_size;
}

void do_delete_records(PartitionLog& log, const Op& op, Run& run) {
  Model& m = run.model;
  const int64_t offset = op.a % 7 == 0 ? -1 : pick_offset(m, op.a);
  const int64_t target = offset == -1 ? m.next : offset;
  Result<int64_t> deleted = log.delete_records(offset);
  if (target > m.next) {
    run.verdict.check(!deleted.ok() && error_of(deleted.status()) == ErrorCode::kOffsetOutOfRange,
                      "delete_records: above the high watermark", offset);
    return;
  }
  m.log_start = std::max(m.log_start, target);  // never backwards
  run.verdict.check(deleted.ok() && *deleted == m.log_start, "delete_records: new log start", m.log_start,
                    deleted.ok() ? *deleted : -1);
  run.verdict.check(log.remove_segments_below_log_start().ok(), "remove_segments_below_log_start failed");
}

// One step that keeps the log open. Returns false when the boot ends here.
bool apply(Env env, PartitionLog& log, const Op& op, Run& run) {
  switch (op.kind) {
    case kAppend: do_append(env, log, op, run); break;
    case kRead: do_read(log, op, run); break;
    case kRetention: do_retention(env, log, op, run); break;
    case kDeleteRecords: do_delete_records(log, op, run); break;
    case kSleep: env.scheduler.sleep_for(std::chrono::milliseconds(op.a)); break;
    case kRoll: run.verdict.check(log.roll().ok(), "roll failed"); break;
    case kClose: {
      const Status closed = log.close();
      run.verdict.check(closed.ok(), "close failed: " + closed.to_string());
      run.closed = true;
      run.model.synced = run.model.next;  // a close syncs everything: a later power loss may take nothing
      run.power_loss_after = op.a == 1;
      return false;
    }
    case kCrash: return false;
    default: run.power_loss_after = true; return false;  // kPowerLoss
  }
  return true;
}

// ---- Boots ----

// After a restart: replicated may have lost a suffix of what was acknowledged, never below the last synced
// point; otherwise everything is there.
void check_reopened(PartitionLog& log, Run& run) {
  Model& m = run.model;
  Verdict& v = run.verdict;
  const int64_t end = log.log_end_offset();
  v.check(log.load_stats().clean_shutdown == run.closed, "clean-shutdown marker", run.closed,
          log.load_stats().clean_shutdown);
  v.check(log.log_start_offset() == m.log_start, "reopen: log start moved", m.log_start, log.log_start_offset());
  if (run.power_lost && !run.closed && !run.settings.persisted) {
    v.check(end <= m.next, "reopen: more than was acknowledged", m.next, end);
    v.check(end >= m.synced, "reopen: lost synced records", m.synced, end);
    // A torn tail is cut at a batch boundary; only when the log start lay past what survived does the log
    // restart empty at the log start.
    auto cut = m.batch_from(end);
    v.check(end == m.log_start || cut == m.batches.end() || cut->first == end, "reopen: cut inside a batch", 0, end);
    for (auto it = cut; it != m.batches.end(); it = m.batches.erase(it)) {
      for (int64_t o = it->first; o <= it->second.last; ++o) m.records.erase(o);
    }
    if (end < m.next) ++run.coverage.lossy_reopens;
    m.next = std::min(m.next, end);
  } else {
    v.check(end == m.next, "reopen: acknowledged records lost", m.next, end);
  }
  v.check(log.recovery_point() == end, "reopen: recovery point", end, log.recovery_point());
  m.synced = log.recovery_point();
  check_all(log, m, v);
}

void run_boot(Env env, Run& run) {
  run.verdict.where = "reopen before step " + std::to_string(run.next_op);
  Result<std::unique_ptr<PartitionLog>> opened = PartitionLog::open(env, kDir, run.settings);
  if (!run.verdict.check(opened.ok(), "open failed: " + (opened.ok() ? "" : opened.status().to_string()))) return;
  PartitionLog& log = **opened;
  check_reopened(log, run);
  run.closed = false;
  run.power_loss_after = true;  // running out of steps ends the boot as a power loss
  while (run.next_op < run.ops.size() && run.verdict.ok()) {
    const Op& op = run.ops[run.next_op];
    std::ostringstream where;
    where << "step " << run.next_op++ << " (" << op << ")";
    run.verdict.where = where.str();
    run.power_loss_after = false;
    if (!apply(env, log, op, run)) return;
    if (op.kind != kRead && op.kind != kSleep) check_all(log, run.model, run.verdict);
    run.model.synced = std::max(run.model.synced, log.recovery_point());
    run.coverage.max_segments = std::max(run.coverage.max_segments, log.segments().size());
    run.power_loss_after = true;
  }
}

// Runs every boot of the case; returns the first violation, empty when none. The world is gone when it returns:
// RapidCheck's failure is an exception, and one in flight while the node's fibers are killed trips the
// scheduler's assertion that no destructor blocks during an unwind.
std::string run_case(Run& run, uint64_t seed) {
  OneNode world(seed);
  bool more = true;
  while (more) {
    more = run.next_op < run.ops.size();  // otherwise this boot only checks the last reopen
    // The limit is virtual time: a boot may sleep up to 3 h a step.
    if (!world.run([&run](Env env) { run_boot(env, run); }, std::chrono::hours(1000))) return "a boot did not finish";
    if (!run.verdict.ok()) return run.verdict.message();
    run.power_lost = run.power_loss_after;
    if (run.power_loss_after) world.node().power_loss();
  }
  return "";
}

RC_GTEST_PROP(LogModel, StorageEngineMatchesAnInMemoryModel, ()) {
  Run run;
  run.settings = small_settings();
  run.settings.persisted = *rc::gen::arbitrary<bool>();
  run.settings.segment_bytes = *rc::gen::inRange<int64_t>(400, 2000);  // small: rolls happen
  const uint64_t seed = *rc::gen::inRange<uint64_t>(1, 1000000);
  const int steps = *rc::gen::inRange(20, 61);
  run.ops = *rc::gen::container<std::vector<Op>>(static_cast<size_t>(steps), op_gen());
  RC_TAG(run.settings.persisted ? "persisted" : "replicated");
  const std::string violation = run_case(run, seed);
  if (!violation.empty()) RC_FAIL(violation);
  RC_TAG(run.coverage.lossy_reopens > 0 ? "lost an unsynced suffix" : "-",
         run.coverage.evictions > 0 ? "retention evicted" : "-", run.coverage.max_segments > 2 ? "rolled" : "-");
}

}  // namespace
}  // namespace sluice::storage
