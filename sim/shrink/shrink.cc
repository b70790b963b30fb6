#include "sim/shrink/shrink.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

namespace sluice::sim {
namespace {

ScenarioSize size_of(const Scenario& scenario, uint64_t operations) {
  ScenarioSize size;
  size.faults = scenario.schedule.size();
  size.workloads = scenario.workloads.size();
  size.operations = operations;
  size.duration = scenario.duration;
  size.drawn_knobs = scenario.drawn_knobs.size();
  return size;
}

Duration whole_seconds_after(Duration d) {
  return std::chrono::ceil<std::chrono::seconds>(d);
}

// The greedy loop: each pass tries one kind of cut on the current scenario; passes repeat while any cut is kept.
class Shrinker {
 public:
  Shrinker(const Scenario& expanded, const RunOptions& options, const ShrinkOptions& shrink_options,
           const CandidateRunner& run)
      : current_(expanded), options_(options), shrink_options_(shrink_options), run_(run) {
    current_.path = shrink_options.path;
    current_.catches.clear();  // what the original must catch is no part of this failure
    current_.sometimes.clear();
  }

  ShrinkResult shrink() {
    if (!start()) return result_;
    while (budget_left()) {
      // The cuts that make later runs cheaper go first.
      bool progress = move_faults_earlier();
      progress = shorten_duration() || progress;
      progress = drop_workloads() || progress;
      progress = remove_faults() || progress;
      progress = reset_knobs() || progress;
      progress = lighten_workloads() || progress;
      progress = shorten_faults() || progress;
      if (!progress) break;
    }
    result_.shrunk = current_;
    result_.after = size_of(current_, operations_);
    return result_;
  }

 private:
  bool budget_left() const { return result_.runs < shrink_options_.max_runs; }

  std::optional<RunOutcome> run_as_file(const Scenario& candidate) {
    // A candidate runs as its file parses, so that whatever is kept is what the written file replays.
    Result<Scenario> parsed = parse_scenario(to_toml(candidate, true), shrink_options_.path);
    if (!parsed.ok()) return std::nullopt;  // not a valid scenario (a workload's topic gone, ...): no run spent
    ++result_.runs;
    return run_(*parsed, options_);
  }

  bool start() {
    const std::optional<RunOutcome> original = run_as_file(current_);
    result_.before = size_of(current_, original ? original->operations : 0);
    result_.shrunk = current_;
    result_.after = result_.before;
    if (!original || original->passed()) return false;
    result_.failed = true;
    result_.invariant = original->first();
    operations_ = original->operations;
    return true;
  }

  // Keeps the candidate when its run still violates the original's invariant.
  bool try_candidate(const Scenario& candidate) {
    if (!budget_left()) return false;
    const std::optional<RunOutcome> outcome = run_as_file(candidate);
    if (!outcome || !outcome->fails_with(result_.invariant)) return false;
    current_ = candidate;
    operations_ = outcome->operations;
    ++result_.steps_kept;
    return true;
  }

  bool drop_workloads() {
    bool kept = false;
    for (size_t i = current_.workloads.size(); i-- > 0;) {
      Scenario candidate = current_;
      candidate.workloads.erase(candidate.workloads.begin() + static_cast<ptrdiff_t>(i));
      kept = try_candidate(candidate) || kept;
    }
    return kept;
  }

  // Every fault at half its time (none before 1 s, so that the workloads have begun): a failure that needs the
  // faults but not their moment then fits a shorter fault phase.
  bool move_faults_earlier() {
    Scenario candidate = current_;
    bool moved = false;
    for (Fault& f : candidate.schedule) {
      const Duration half = std::max<Duration>(std::chrono::seconds(1),
                                               std::chrono::floor<std::chrono::milliseconds>(f.at / 2));
      if (half < f.at) {
        f.at = half;
        moved = true;
      }
    }
    return moved && try_candidate(candidate);
  }

  // The fault phase cut to just after the last fault ends, else halved; faults that would start after it go too.
  bool shorten_duration() {
    bool kept = false;
    for (bool shorter = true; shorter && budget_left();) {
      shorter = false;
      Duration last_end{};
      for (const Fault& f : current_.schedule) last_end = std::max(last_end, f.at + f.length);
      const Duration after_faults = whole_seconds_after(last_end) + std::chrono::seconds(1);
      const Duration half = std::max<Duration>(std::chrono::seconds(1),
                                               std::chrono::floor<std::chrono::milliseconds>(current_.duration / 2));
      for (const Duration length : {after_faults, half}) {
        if (length >= current_.duration) continue;
        Scenario candidate = current_;
        candidate.duration = length;
        std::erase_if(candidate.schedule, [&](const Fault& f) { return f.at >= length; });
        if (try_candidate(candidate)) {
          kept = shorter = true;
          break;
        }
      }
    }
    return kept;
  }

  // Delta debugging over the schedule: the whole of it, then halves, quarters, ..., then one fault at a time.
  bool remove_faults() {
    bool kept = false;
    for (size_t chunk = current_.schedule.size(); chunk >= 1; chunk /= 2) {
      for (size_t begin = 0; begin < current_.schedule.size() && budget_left();) {
        Scenario candidate = current_;
        const auto first = candidate.schedule.begin() + static_cast<ptrdiff_t>(begin);
        const size_t n = std::min(chunk, candidate.schedule.size() - begin);
        candidate.schedule.erase(first, first + static_cast<ptrdiff_t>(n));
        if (try_candidate(candidate)) {
          kept = true;
        } else {
          begin += chunk;
        }
      }
    }
    return kept;
  }

  // Every drawn knob back to its default at once; failing that, one at a time.
  bool reset_knobs() {
    if (current_.drawn_knobs.empty()) return false;
    Scenario defaults = current_;
    for (const std::string& key : defaults.drawn_knobs) defaults.broker.erase(key);
    defaults.drawn_knobs.clear();
    if (try_candidate(defaults)) return true;
    bool kept = false;
    for (size_t i = current_.drawn_knobs.size(); i-- > 0;) {
      Scenario candidate = current_;
      candidate.broker.erase(candidate.drawn_knobs[i]);
      candidate.drawn_knobs.erase(candidate.drawn_knobs.begin() + static_cast<ptrdiff_t>(i));
      kept = try_candidate(candidate) || kept;
    }
    return kept;
  }

  // Producers at half the rate and one record a batch, one member a group, one partition a topic.
  bool lighten_workloads() {
    bool kept = false;
    for (size_t i = 0; i < current_.workloads.size(); ++i) {
      // current_ changes under a kept cut: each test reads it afresh.
      if (current_.workloads[i].kind == WorkloadSpec::Kind::kProducer && current_.workloads[i].producer.rate > 1) {
        Scenario candidate = current_;
        candidate.workloads[i].producer.rate = std::max(1.0, std::floor(candidate.workloads[i].producer.rate / 2));
        kept = try_candidate(candidate) || kept;
      }
      if (current_.workloads[i].kind == WorkloadSpec::Kind::kProducer &&
          current_.workloads[i].producer.batch_records > 1) {
        Scenario candidate = current_;
        candidate.workloads[i].producer.batch_records = 1;
        kept = try_candidate(candidate) || kept;
      }
      if (current_.workloads[i].kind == WorkloadSpec::Kind::kGroup && current_.workloads[i].group.members > 1) {
        Scenario candidate = current_;
        candidate.workloads[i].group.members = 1;
        kept = try_candidate(candidate) || kept;
      }
    }
    for (size_t i = 0; i < current_.topics.size(); ++i) {
      if (current_.topics[i].partitions <= 1) continue;
      Scenario candidate = current_;
      candidate.topics[i].partitions = 1;
      kept = try_candidate(candidate) || kept;
    }
    return kept;
  }

  // Each fault that lasts (a crash's down time, a partition, a full disk) at half its length, down to 100 ms.
  bool shorten_faults() {
    bool kept = false;
    for (size_t i = 0; i < current_.schedule.size(); ++i) {
      const Fault& f = current_.schedule[i];
      if (!fault_has_length(f.kind) || f.length <= std::chrono::milliseconds(100)) continue;
      Scenario candidate = current_;
      candidate.schedule[i].length = std::max<Duration>(std::chrono::milliseconds(100),
                                                        std::chrono::floor<std::chrono::milliseconds>(f.length / 2));
      kept = try_candidate(candidate) || kept;
    }
    return kept;
  }

  Scenario current_;
  uint64_t operations_ = 0;
  const RunOptions& options_;
  const ShrinkOptions& shrink_options_;
  const CandidateRunner& run_;
  ShrinkResult result_;
};

}  // namespace

bool ScenarioSize::no_larger_than(const ScenarioSize& other) const {
  return faults <= other.faults && workloads <= other.workloads && duration <= other.duration &&
         drawn_knobs <= other.drawn_knobs;
}

ShrinkResult shrink_failure(const Scenario& expanded, const RunOptions& options, const ShrinkOptions& shrink_options,
                            const CandidateRunner& run) {
  return Shrinker(expanded, options, shrink_options, run).shrink();
}

std::string shrunk_scenario_file(const ShrinkResult& result, const Scenario& original, const RunOptions& options) {
  Scenario file = result.shrunk;
  const ScenarioSize& a = result.before;
  const ScenarioSize& b = result.after;
  file.summary = fmt::format(
      "Shrunk from {} ({}) seed {}{}: it still violates {}.\n"
      "faults {} -> {}, workloads {} -> {}, operations {} -> {}, fault phase {} -> {}, drawn knobs {} -> {}\n"
      "({} runs, {} cuts kept). Replay:\n  {}",
      original.name, original.path.empty() ? "built in code" : original.path, options.seed,
      options.mutations.empty() ? "" : " with mutation " + options.mutations.to_string(), result.invariant, a.faults,
      b.faults, a.workloads, b.workloads, a.operations, b.operations, format_duration(a.duration),
      format_duration(b.duration), a.drawn_knobs, b.drawn_knobs, result.runs, result.steps_kept,
      replay_command(file, options.seed, options.mutations));
  return to_toml(file, true);
}

std::string shrunk_scenario_path(const std::string& dir, const Scenario& original, uint64_t seed) {
  return fmt::format("{}/{}-seed{}-shrunk.toml", dir.empty() ? "." : dir, original.name, seed);
}

}  // namespace sluice::sim
