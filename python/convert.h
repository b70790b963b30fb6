// C++ results as plain Python data: dicts, lists and numpy arrays a notebook can plot.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <vector>

#include "sim/history/history.h"
#include "sim/scenario/runner.h"
#include "sim/scenario/simulation.h"

namespace sluice::sim {

pybind11::dict result_dict(const RunResult& result);
pybind11::list operations_list(const History& history);
pybind11::list world_events_list(const History& history);
pybind11::list effects_list(const History& history);
// Column per field, one row per sample: numpy arrays (strings as lists).
pybind11::dict samples_dict(const std::vector<PartitionSample>& samples);

}  // namespace sluice::sim
