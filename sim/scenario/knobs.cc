#include "sim/scenario/knobs.h"

#include "core/base/assert.h"

namespace sluice::sim {

const std::vector<Knob>& knobs() {
  // Ranges stay where every scenario's contract still holds: segments small enough to roll, compact and evict
  // many times in a run but not so small that a run spends its time opening files; an offset map of at least a few
  // hundred keys (smaller ones force multi-pass cleaning, which is the point); retention checks within a scenario's
  // length or Kafka's 5 minutes.
  static const std::vector<Knob> all = {
      {"log.segment.bytes", {"16384", "65536", "262144", "1048576", "1073741824"}},
      {"log.index.interval.bytes", {"0", "100", "4096", "65536"}},
      {"log.retention.check.interval.ms", {"250", "1000", "5000", "30000", "300000"}},
      {"log.cleaner.backoff.ms", {"50", "1000", "15000"}},
      {"log.cleaner.dedupe.buffer.size", {"12000", "240000", "134217728"}},
      {"log.cleaner.io.buffer.size", {"1024", "65536", "524288"}},
      {"log.flush.offset.checkpoint.interval.ms", {"100", "5000", "60000"}},
      {"log.flush.start.offset.checkpoint.interval.ms", {"100", "5000", "60000"}},
      {"group.initial.rebalance.delay.ms", {"0", "100", "3000"}},
      {"offsets.topic.segment.bytes", {"16384", "1048576", "104857600"}},
  };
  return all;
}

std::vector<std::string> draw_knobs(std::map<std::string, std::string>& broker, Random& rng) {
  std::vector<std::string> drawn;
  for (const Knob& knob : knobs()) {
    SLUICE_ASSERT(!knob.choices.empty());
    // Drawn even when the scenario pins the key, so pinning one knob does not shift every later knob's draw.
    const std::string_view choice = knob.choices[rng.uniform(knob.choices.size())];
    if (broker.count(std::string(knob.key)) != 0) continue;
    broker.emplace(std::string(knob.key), std::string(choice));
    drawn.emplace_back(knob.key);
  }
  return drawn;
}

}  // namespace sluice::sim
