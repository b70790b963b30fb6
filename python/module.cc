// The `sluice._sluice` extension: the simulator as Python sees it. The same Simulation and runner as `sluice sim`
// (sim/scenario), not a second one: the same scenario and seed give the same trace hash here and on the command
// line. Python's side (python/sluice/__init__.py) adds the conveniences; this file only converts.
#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <fmt/format.h>

#include "core/base/mutations.h"
#include "sim/faults/fault.h"
#include "sim/history/history.h"
#include "sim/scenario/runner.h"
#include "sim/scenario/simulation.h"
#include "python/convert.h"

namespace py = pybind11;
using namespace sluice;
using namespace sluice::sim;

namespace {

MutationSet mutations_from(const std::vector<std::string>& names) {
  MutationSet set;
  for (const std::string& name : names) {
    const std::optional<Mutation> m = parse_mutation(name);
    if (!m) throw py::value_error("unknown mutation '" + name + "' (sluice.mutations() lists them)");
    set.add(*m);
  }
  return set;
}

RunOptions run_options(uint64_t seed, const std::vector<std::string>& mutations, double sample_every,
                       const std::string& log_level) {
  RunOptions options;
  options.seed = seed;
  options.mutations = mutations_from(mutations);
  options.sample_every = std::chrono::duration_cast<Duration>(std::chrono::duration<double>(sample_every));
  const std::optional<LogLevel> level = parse_log_level(log_level);
  if (!level) throw py::value_error("log_level must be trace, debug, info, warn, error or off");
  options.log_level = *level;
  return options;
}

Scenario scenario_from_file(const std::string& path) {
  Result<Scenario> s = load_scenario_file(path);
  if (!s.ok()) throw py::value_error(s.status().message());
  return *std::move(s);
}

Scenario scenario_from_toml(const std::string& text, const std::string& name) {
  Result<Scenario> s = parse_scenario(text, name);
  if (!s.ok()) throw py::value_error(s.status().message());
  return *std::move(s);
}

Fault fault_from(const py::dict& d) {
  Fault f;
  const std::string kind = d.contains("kind") ? d["kind"].cast<std::string>() : "";
  const std::optional<FaultKind> parsed = parse_fault_kind(kind);
  if (!parsed) throw py::value_error("fault kind '" + kind + "' is unknown (sluice.fault_kinds() lists them)");
  f.kind = *parsed;
  const auto seconds = [&](const char* key, Duration fallback) {
    if (!d.contains(key) || d[key].is_none()) return fallback;
    return std::chrono::duration_cast<Duration>(std::chrono::duration<double>(d[key].cast<double>()));
  };
  f.at = seconds("at", Duration(0));
  f.length = seconds("length", default_fault_length(f.kind));
  f.node = d.contains("node") ? d["node"].cast<std::string>() : "n1";
  f.peer = d.contains("peer") ? d["peer"].cast<std::string>() : "";
  f.amount = d.contains("amount") ? d["amount"].cast<int64_t>() : default_fault_amount(f.kind);
  f.op = d.contains("op") ? d["op"].cast<std::string>() : default_fault_op(f.kind);
  f.path = d.contains("path") ? d["path"].cast<std::string>() : "";
  for (const auto& item : d) {
    const std::string key = py::str(item.first);
    static const std::set<std::string> kKnown = {"kind", "at", "length", "node", "peer", "amount", "op", "path"};
    if (kKnown.count(key) == 0) throw py::value_error("unknown fault field '" + key + "'");
  }
  return f;
}

// Runs `body` without the GIL: a simulation holds no Python object while it runs.
template <typename F>
auto without_gil(F&& body) {
  py::gil_scoped_release release;
  return body();
}

void bind_simulation(py::module_& m) {
  py::class_<Simulation>(m, "Simulation")
      .def(py::init([](const Scenario& scenario, uint64_t seed, const std::vector<std::string>& mutations,
                       double sample_every, const std::string& log_level) {
             return std::make_unique<Simulation>(scenario, run_options(seed, mutations, sample_every, log_level));
           }),
           py::arg("scenario"), py::arg("seed") = 1, py::arg("mutations") = std::vector<std::string>{},
           py::arg("sample_every") = 1.0, py::arg("log_level") = "off")
      .def("setup", [](Simulation& s) {
        const Status status = without_gil([&] { return s.setup(); });
        if (!status.ok()) throw std::runtime_error("setup: " + status.message());
      })
      .def("start_workloads", &Simulation::start_workloads)
      .def("schedule_drawn", &Simulation::schedule_drawn)
      .def("inject", [](Simulation& s, const py::dict& fault) {
        const Status status = s.inject(fault_from(fault));
        if (!status.ok()) throw py::value_error(status.message());
      })
      .def("run_for", [](Simulation& s, double seconds) {
        if (seconds < 0) throw py::value_error("run_for: seconds must not be negative");
        without_gil([&] {
          s.run_for(std::chrono::duration_cast<Duration>(std::chrono::duration<double>(seconds)));
          return 0;
        });
      })
      .def("run_for_ns", [](Simulation& s, int64_t ns) {
        if (ns < 0) throw py::value_error("run_for_ns: must not be negative");
        without_gil([&] {
          s.run_for(Duration(ns));
          return 0;
        });
      })
      .def_property_readonly("now_ns", [](const Simulation& s) {
        return static_cast<int64_t>(std::llround(s.now_seconds() * 1e9));
      })
      .def("heal", &Simulation::heal)
      .def("converge", [](Simulation& s) { return without_gil([&] { return s.converge(); }); })
      .def("stop_workloads", [](Simulation& s) { without_gil([&] { s.stop_workloads(); return 0; }); })
      .def("final_read", [](Simulation& s) { without_gil([&] { s.final_read(); return 0; }); })
      .def("finish", [](Simulation& s) { return result_dict(without_gil([&] { return s.finish(); })); })
      .def_property_readonly("now", &Simulation::now_seconds)
      .def_property_readonly("serving", &Simulation::serving)
      .def("trace_hash", [](const Simulation& s) { return fmt::format("{:016x}", s.trace_hash()); })
      .def("operations", [](const Simulation& s) { return operations_list(s.history()); })
      .def("world_events", [](const Simulation& s) { return world_events_list(s.history()); })
      .def("effects", [](const Simulation& s) { return effects_list(s.history()); })
      .def("samples", [](const Simulation& s) { return samples_dict(s.samples()); })
      .def_property_readonly("scenario", &Simulation::scenario, py::return_value_policy::copy);
}

}  // namespace

PYBIND11_MODULE(_sluice, m) {
  m.doc() = "Sluice's deterministic simulator: the real broker on virtual time, disk and network";
  py::class_<Scenario>(m, "Scenario")
      .def_static("from_file", &scenario_from_file, py::arg("path"))
      .def_static("from_toml", &scenario_from_toml, py::arg("text"), py::arg("name") = "scenario.toml")
      .def("to_toml", [](const Scenario& s) { return to_toml(s); })
      .def("expand", [](const Scenario& s, uint64_t seed) { return to_toml(expand(s, seed), true); })
      .def_readonly("name", &Scenario::name)
      .def_readonly("summary", &Scenario::summary)
      .def_readonly("path", &Scenario::path)
      .def_property_readonly("duration", [](const Scenario& s) { return to_seconds(s.duration); })
      .def_property_readonly("liveness", [](const Scenario& s) { return to_seconds(s.liveness); });
  bind_simulation(m);
  m.def(
      "run_scenario",
      [](const Scenario& scenario, uint64_t seed, const std::vector<std::string>& mutations) {
        const RunOptions options = run_options(seed, mutations, 0, "off");
        return result_dict(without_gil([&] { return run_scenario(scenario, options); }));
      },
      py::arg("scenario"), py::arg("seed") = 1, py::arg("mutations") = std::vector<std::string>{},
      "One whole run, as `sluice sim --scenario F --seed S` runs it; returns the report as a dict");
  m.def("mutations", [] {
    std::vector<std::pair<std::string, std::string>> out;
    for (const MutationInfo& info : all_mutations()) out.emplace_back(info.name, info.what);
    return out;
  });
  m.def("fault_kinds", [] {
    std::vector<std::string> out;
    for (size_t i = 0; i < kFaultKinds; ++i) out.emplace_back(fault_kind_name(static_cast<FaultKind>(i)));
    return out;
  });
}
