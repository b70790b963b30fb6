"""Sluice's deterministic simulator from Python.

The same simulator as `sluice sim` (the C++ runner behind the command line, not a second one): the real broker on
virtual time, disk and network, driven by Kafka clients under faults, with the history checkers. The same scenario
and seed give the same trace hash here and on the command line.

    import sys; sys.path.insert(0, "build/release/python")   # from the repository root
    import sluice

    result = sluice.run_scenario("scenarios/crash_loop_persisted.toml", seed=7)
    print(result["passed"], result["figures"])

    sim = sluice.Simulation(sluice.scenario(
        name="notebook",
        topics=[sluice.topic("events", partitions=2, durability="persisted")],
        workloads=[sluice.producer("events", acks="all", idempotent=True, rate=50),
                   sluice.consumer("events")],
        duration=20), seed=3)
    sim.start()
    sim.run_for(5)
    sim.inject(sluice.fault("power-loss", length=1.0))
    sim.run_until(lambda: sim.now >= 15)
    report = sim.finish()             # heal, converge, final read, checks
"""

from __future__ import annotations

import sys
import time
from typing import Any, Callable, Iterable, Mapping

from . import _sluice

Scenario = _sluice.Scenario

__all__ = [
    "Scenario", "Simulation", "scenario", "topic", "producer", "consumer", "group", "table_reader", "admin",
    "fault", "rate", "run_scenario", "load_scenario", "mutations", "fault_kinds",
]


def mutations() -> list[tuple[str, str]]:
    """The planted bugs `mutations=[...]` takes, with what each does."""
    return _sluice.mutations()


def fault_kinds() -> list[str]:
    return _sluice.fault_kinds()


def load_scenario(path: str) -> Scenario:
    """A scenario file (scenarios/*.toml); ValueError with the file, table and field on a mistake."""
    return Scenario.from_file(str(path))


def _as_scenario(spec: Scenario | str) -> Scenario:
    return spec if isinstance(spec, Scenario) else load_scenario(spec)


def run_scenario(spec: Scenario | str, seed: int = 1, mutations: Iterable[str] = ()) -> dict[str, Any]:
    """One whole run, exactly as `sluice sim --scenario F --seed S` runs it; the report as a dict."""
    return _sluice.run_scenario(_as_scenario(spec), seed, list(mutations))


# ---- Building a scenario in Python: plain dicts, written as the scenario file format ----

def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, Mapping):
        return "{ " + ", ".join(f"{_toml_value(str(k))} = {_toml_value(v)}" for k, v in value.items()) + " }"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise TypeError(f"cannot write {value!r} in a scenario")


def _duration(seconds: float | str) -> str:
    return seconds if isinstance(seconds, str) else f"{float(seconds)}s"


def topic(name: str, partitions: int = 1, replication_factor: int = 0, **config: Any) -> dict:
    """A topic; keyword arguments are Kafka topic configs with dots as underscores (retention_ms=60000).
    replication_factor: replicas of each partition on a cluster (0: min(brokers, 3))."""
    spec = {"name": name, "partitions": partitions,
            "config": {k.replace("_", "."): str(v) for k, v in config.items()}}
    if replication_factor:
        spec["replication_factor"] = replication_factor
    return spec


def producer(topic: str, acks: str | int = "all", **knobs: Any) -> dict:
    return {"kind": "producer", "topic": topic, "acks": str(acks), **knobs}


def consumer(topic: str, **knobs: Any) -> dict:
    return {"kind": "consumer", "topic": topic, **knobs}


def group(name: str, topics: list[str], members: int = 2, **knobs: Any) -> dict:
    return {"kind": "group", "group": name, "topics": topics, "members": members, **knobs}


def table_reader(topic: str, cold_start_every: float = 10, **knobs: Any) -> dict:
    return {"kind": "table", "topic": topic, "cold_start_every": _duration(cold_start_every), **knobs}


def admin(actions: list[dict], name: str = "admin") -> dict:
    """Admin actions: dicts with at (seconds), kind (alter-config, delete-records, create-topic, delete-topic)."""
    fixed = [{**a, "at": _duration(a["at"])} for a in actions]
    return {"kind": "admin", "name": name, "actions": fixed}


def fault(kind: str, at: float = 0.0, node: str = "n1", **params: Any) -> dict:
    """A fault value: kind (sluice.fault_kinds()), at (seconds from when it is injected or scheduled), node,
    length (seconds), amount, peer, op, path."""
    return {"kind": kind, "at": at, "node": node, **params}


def rate(kind: str, per_minute: float, length: tuple[float, float] = (0.2, 3.0), amount: tuple[int, int] = (0, 0)) -> dict:
    """Random faults of one kind at a rate; the seed draws the schedule."""
    return {"kind": kind, "per_minute": per_minute, "length_min": _duration(length[0]),
            "length_max": _duration(length[1]), "amount_min": amount[0], "amount_max": amount[1]}


def scenario(name: str, topics: list[dict], workloads: list[dict], duration: float = 30, liveness: float = 30,
             broker: Mapping[str, Any] | None = None, faults: list[dict] = (), rates: list[dict] = (),
             checks: list[str] = (), summary: str = "", brokers: int = 1) -> Scenario:
    """A scenario from Python values, written in the scenario file format and parsed by the same loader.
    brokers > 1: one cluster of that many nodes (n1..nN); a producer's via="n2" sends every produce to one node."""
    lines = [f"# {line}" for line in summary.splitlines()]
    lines += [f"name = {_toml_value(name)}", f"brokers = {int(brokers)}", f"duration = {_toml_value(_duration(duration))}",
              f"liveness = {_toml_value(_duration(liveness))}", ""]
    if broker:
        lines.append("[broker]")
        lines += [f"{_toml_value(k)} = {_toml_value(str(v))}" for k, v in broker.items()]
        lines.append("")
    for t in topics:
        lines += ["[[topics]]"] + [f"{k} = {_toml_value(v)}" for k, v in t.items() if v != {}] + [""]
    for i, w in enumerate(workloads):
        w = {"name": f"{w['kind']}-{i + 1}", **w}
        lines += ["[[workloads]]"] + [f"{k} = {_toml_value(v)}" for k, v in w.items()] + [""]
    lines.append("[faults]")
    schedule = [{**f, "at": _duration(f["at"]), **({"length": _duration(f["length"])} if "length" in f else {})}
                for f in faults]
    lines.append(f"schedule = {_toml_value(schedule)}")
    lines.append(f"rates = {_toml_value(list(rates))}")
    if checks:
        lines += ["", "[checks]", f"only = {_toml_value(list(checks))}"]
    return Scenario.from_toml("\n".join(lines) + "\n", f"{name}.toml")


class Simulation:
    """One seeded world of a scenario, driven step by step. start() boots the brokers, creates the topics, starts
    the workloads and schedules the scenario's own faults; then run_for / run_until / inject as you like; finish()
    heals, waits for convergence, reads every partition whole and runs the checkers. Long runs release the GIL;
    with progress=True they print the virtual time to stderr every wall second."""

    def __init__(self, spec: Scenario | str, seed: int = 1, mutations: Iterable[str] = (),
                 sample_every: float = 1.0, log_level: str = "off", progress: bool = False):
        self.scenario = _as_scenario(spec)
        self.seed = seed
        self.progress = progress
        self._sim = _sluice.Simulation(self.scenario, seed, list(mutations), sample_every, log_level)
        self._started = False
        self._finished: dict | None = None

    @property
    def now(self) -> float:
        """Virtual seconds since the world began."""
        return self._sim.now

    def start(self) -> "Simulation":
        self._sim.setup()
        self._sim.start_workloads()
        self._sim.schedule_drawn()
        self._started = True
        return self

    def _ensure_started(self) -> None:
        if not self._started:
            self.start()
        if self._finished is not None:
            raise RuntimeError("the simulation has finished")

    def inject(self, f: dict) -> None:
        """A fault (sluice.fault(...)) now, or `at` seconds from now."""
        self._ensure_started()
        self._sim.inject(f)

    def run_for(self, seconds: float, step: float = 1.0) -> None:
        self._ensure_started()
        # Integer nanoseconds: the same total gives the same run however it is cut into steps.
        end = self._sim.now_ns + round(seconds * 1e9)
        step_ns = max(1, round(step * 1e9))
        last = time.monotonic()
        while self._sim.now_ns < end:
            self._sim.run_for_ns(min(step_ns, end - self._sim.now_ns))
            if self.progress and time.monotonic() - last >= 1.0:
                last = time.monotonic()
                print(f"sluice: t={self.now:.1f}s", file=sys.stderr)

    def run_until(self, predicate: Callable[[], bool] | float, limit: float = 600.0, step: float = 0.1) -> bool:
        """Until predicate() holds (checked every `step` virtual seconds) or `limit` passes; a number is a
        virtual time to run to. True when the predicate held."""
        self._ensure_started()
        if not callable(predicate):
            self.run_for(max(0.0, float(predicate) - self.now))
            return True
        end = self._sim.now_ns + round(limit * 1e9)
        step_ns = max(1, round(step * 1e9))
        while not predicate():
            if self._sim.now_ns >= end:
                return False
            self._sim.run_for_ns(min(step_ns, end - self._sim.now_ns))
        return True

    def heal(self) -> None:
        self._ensure_started()
        self._sim.heal()

    def finish(self) -> dict:
        """Heal, converge (within the scenario's liveness bound), stop the workloads, read everything, check."""
        if self._finished is None:
            self._ensure_started()
            self._sim.heal()
            self._sim.converge()
            self._sim.stop_workloads()
            self._sim.final_read()
            self._finished = self._sim.finish()
        return self._finished

    def check(self) -> dict:
        """The checker report (finishing the run first if it is not finished)."""
        return self.finish()

    def history(self) -> list[dict]:
        """Every client operation so far, as dicts (kind, outcome, times, partition, offsets, records...)."""
        return self._sim.operations()

    def world_events(self) -> list[dict]:
        return self._sim.world_events()

    def effects(self) -> list[dict]:
        """What the brokers declared they removed on purpose (retention, compaction, DeleteRecords, ...)."""
        return self._sim.effects()

    def samples(self, topic: str | None = None, partition: int | None = None) -> dict:
        """Per-partition time series (numpy arrays): at, log_start, log_end, high_watermark, size_bytes,
        dirty_ratio, segments; filtered to one topic / partition when given."""
        import numpy as np
        data = self._sim.samples()
        keep = np.ones(len(data["at"]), dtype=bool)
        if topic is not None:
            keep &= np.array([t == topic for t in data["topic"]], dtype=bool)
        if partition is not None:
            keep &= data["partition"] == partition
        return {k: (v[keep] if hasattr(v, "shape") else [x for x, k2 in zip(v, keep) if k2]) for k, v in data.items()}

    def trace_hash(self) -> str:
        return self._sim.trace_hash()
