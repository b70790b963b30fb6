// Faults as values: a time, a kind, a target and parameters. A schedule of them prints as TOML inline tables (the
// scenario file's own syntax), so a schedule drawn from rates by a seed can be printed, stored in a scenario file
// and replayed exactly, and a shrinker can remove faults one by one. The injector (injector.h) turns them into
// world events.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/result.h"
#include "core/env/clock.h"

namespace sluice::sim {

enum class FaultKind : uint8_t {
  kCrash = 0,            // process death; restarts after `length` (the page cache survives)
  kPowerLoss = 1,        // machine death: un-synced writes lost or torn; restarts after `length`
  kRestart = 2,          // graceful stop (logs flushed, clean markers) and start again after `length`
  kPartition = 3,        // both directions between `node` and `peer` (every other node when empty), for `length`
  kPartitionOneWay = 4,  // bytes from `node` to `peer` are held, for `length`
  kResetConnections = 5,  // every connection between `node` and `peer` (every node when empty) breaks at once
  kLatencySpike = 6,     // every link gets up to `amount` ms extra latency, for `length`
  kDiskFull = 7,         // `node`'s disk has no free space, for `length`
  kDiskErrors = 8,       // the next `amount` operations of kind `op` under `path` fail with EIO
  kClockJump = 9,        // `node`'s wall clock moves by `amount` ms (negative: backwards); never undone
  kCorruptSegment = 10,  // `node` crashes; a closed segment's interior gets a flipped byte; restarts after `length`
  // `node`'s process dies at its `amount`-th next disk operation of kind `op` (default metadata: creates, renames,
  // deletes, directory syncs) under `path`, changing nothing from that operation on; restarts after `length`. It
  // lands a crash between any two steps of a multi-step file protocol (a cleaner swap, a roll, a checkpoint).
  kCrashAtDiskOp = 11,
  // `node` (cluster runs only) drops every acks=0 produce it should forward to a partition's leader, for `length`:
  // KubeMQ's follower behaviour as a fault, so that a scenario measures the acks=0 writes it costs (the mutation
  // follower-drops-acks0 is the same behaviour as a bug the checkers must catch in a run without faults).
  kDropAcks0Forwards = 12,
  // `node`'s monotonic clock, and so every timer and timeout it sets, runs `amount` parts per thousand fast
  // (negative: slow; at least -900) for `length`: a drifting oscillator or a VM starved of ticks. Wall time drifts
  // with it; other nodes are unaffected.
  kClockSkew = 13,
  // Every connection on the raft port between `node` and `peer` (every node when empty) breaks, and the frames that
  // were in flight or unread on it are not lost but reach the peer on the next connection between the two, after
  // its first two frames: frames of the old connection delivered after frames of the new one.
  kReconnectReorder = 14,
  // The same, and the last frames the peer had already read on the old connection are sent again on the new one
  // (a sender resending what it cannot know arrived): duplicates, after the new connection's first two frames.
  kReconnectDuplicate = 15,
  // `node`'s process stops for `length` (SIGSTOP, a stop-the-world pause, a descheduled VM): no fiber of it runs, no
  // timer of it fires and no byte reaches it, then it goes on as if nothing happened; its clock has jumped forward
  // and every timer due meanwhile fires at once. Peers see silence, not a reset. A crash ends the pause.
  kProcessPause = 16,
  // `node`'s disk is slow for `length`: every operation gets extra latency from a heavy tail (one in 16 up to
  // `amount` ms, the rest under a fiftieth of it), drawn from the node's seeded disk latency stream.
  kSlowDisk = 17,
  // Every sync of `node` takes `amount` ms for `length` (a device flushing a full write cache).
  kStalledFsync = 18,
  // FoundationDB's swizzle: over `length`, the links of `amount` brokers (0: half of them, rounded up; `node` and
  // the brokers after it, by number) are clogged one at a time (bytes held both ways, not dropped), then released
  // in reverse order. A link stays clogged while either end is.
  kSwizzleClog = 19,
  // The next reads by `node` of `amount` files under `path` (any file when empty), one read of each, return damaged
  // bytes: a flipped bit or a sector of zeros (SimDisk::corrupt_next_reads; a later fault replaces a pending one).
  // The files stay intact, so a reader that checks and reads again gets the truth: the broker must neither serve,
  // keep nor cut anything on a damaged read.
  kReadCorruption = 20,
  // Every timer `node` sets for `length` fires up to `amount` ms late (uniform, from the node's own jitter stream):
  // a loaded machine's scheduler, a VM's stolen time. Timeouts, ticks, backoffs and sleeps all run late, each by
  // its own draw; the clock itself keeps its rate (that is clock-skew).
  kTimerJitter = 21,
};
inline constexpr size_t kFaultKinds = 22;

std::string_view fault_kind_name(FaultKind kind);  // "crash", "power-loss", ...
std::optional<FaultKind> parse_fault_kind(std::string_view name);

struct Fault {
  Duration at{};
  FaultKind kind = FaultKind::kCrash;
  std::string node;        // the broker node it strikes ("n1")
  std::string peer;        // partitions and resets: the other side ("" = every client node)
  Duration length{};       // how long until it is undone (down time, partition, full disk, spike)
  // clock jump ms, disk error count, latency ms, clock skew parts per thousand, slow disk and sync ms, nodes clogged
  int64_t amount = 0;
  std::string op;          // disk errors, crash-at-disk-op: read | write | sync | metadata
  std::string path;        // disk errors, crash-at-disk-op, read corruption: path prefix ("" = any)

  bool operator==(const Fault&) const = default;
};

// The TOML inline table of a fault: { at = "12.5s", kind = "crash", node = "n1", length = "2s" }.
std::string to_toml(const Fault& fault);
// One inline table per line, in the scenario file's `schedule = [ ... ]` form.
std::string to_toml(const std::vector<Fault>& schedule);
// Defaults of a fault's parameters when a scenario leaves them out: length by kind (1 s down, 5 s for network
// faults and full disks, none for instant faults), amount by kind (200 ms of latency, 1 disk error, +1 h).
Duration default_fault_length(FaultKind kind);
int64_t default_fault_amount(FaultKind kind);
// The disk operation kind a fault counts when `op` is left out: write for disk-errors, metadata for
// crash-at-disk-op, none for the rest.
std::string default_fault_op(FaultKind kind);
// Whether the kind has a length (something to undo later).
bool fault_has_length(FaultKind kind);

// "1.5s", "250ms", "2m", "1h", or a bare number of seconds.
Result<Duration> parse_duration(std::string_view text);
std::string format_duration(Duration d);  // the shortest exact form: "1.5s", "250ms", "3us"

// Random faults: per kind a rate (expected faults per simulated minute) and the range their lengths are drawn from.
struct FaultRate {
  FaultKind kind = FaultKind::kCrash;
  double per_minute = 0;
  Duration length_min = std::chrono::milliseconds(200);
  Duration length_max = std::chrono::seconds(3);
  int64_t amount_min = 0;  // clock jumps (ms), latency (ms), disk error counts
  int64_t amount_max = 0;
};

}  // namespace sluice::sim
