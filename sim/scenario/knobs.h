// Randomized knobs (FoundationDB's): a seed draws the broker's own tuning — segment size, index interval, retention
// check interval, the cleaner's buffers and backoff, the group coordinator's delay and its log's segment size, the
// flush checkpoint intervals — from ranges a deployment might use, so bugs that the defaults hide surface. Only keys
// the scenario's [broker] table leaves unset are drawn; the seed's printed configuration lists them, so a replay of
// the printed file runs the same knobs without drawing.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/env/random.h"

namespace sluice::sim {

struct Knob {
  std::string_view key;                    // Kafka's broker setting name
  std::vector<std::string_view> choices;   // drawn uniformly; Kafka's (or Sluice's) default among them
};

// Every knob a seed may draw.
const std::vector<Knob>& knobs();

// Draws each knob `broker` does not set into it, in knobs() order, from `rng` alone. Returns the keys drawn.
std::vector<std::string> draw_knobs(std::map<std::string, std::string>& broker, Random& rng);

}  // namespace sluice::sim
