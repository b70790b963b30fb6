"""pytest for the sluice module. Run by ctest (python.pytest) with PYTHONPATH=build/release/python and
SLUICE_CLI=build/release/sluice; by hand: PYTHONPATH=build/release/python /usr/bin/python3 -m pytest python/tests"""

import os
import re
import subprocess

import pytest

import sluice

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCENARIOS = os.path.join(ROOT, "scenarios")
CLI = os.environ.get("SLUICE_CLI", os.path.join(ROOT, "build", "release", "sluice"))


def scenario_path(name):
    return os.path.join(SCENARIOS, name)


def cli_trace_hash(path, seed, mutations=()):
    args = [CLI, "sim", "--scenario", path, "--seed", str(seed), "--quiet"]
    for m in mutations:
        args += ["--mutation", m]
    out = subprocess.run(args, capture_output=True, text=True, check=False).stdout
    return re.search(r"^trace hash: ([0-9a-f]+)$", out, re.M).group(1)


def test_the_module_lists_mutations_and_fault_kinds():
    names = [name for name, _ in sluice.mutations()]
    listed = subprocess.run([CLI, "sim", "--list-mutations"], capture_output=True, text=True, check=True).stdout
    assert names == [line.split()[0] for line in listed.splitlines() if line.strip()]
    assert "skip-persisted-fsync" in names and "raft-vote-without-log-check" in names
    assert "power-loss" in sluice.fault_kinds() and "clock-jump" in sluice.fault_kinds()
    assert {"process-pause", "slow-disk", "stalled-fsync", "swizzle-clog", "read-corruption", "timer-jitter"} <= set(sluice.fault_kinds())


def test_the_same_scenario_and_seed_give_the_cli_trace_hash():
    path = scenario_path("network_faults.toml")
    result = sluice.run_scenario(path, seed=3)
    assert result["passed"], result["violations"]
    assert result["trace_hash"] == cli_trace_hash(path, 3)


def test_stepping_a_simulation_gives_the_same_run_as_the_cli():
    path = scenario_path("crash_loop_replicated.toml")
    sim = sluice.Simulation(path, seed=4, sample_every=0.5)
    sim.start()
    for _ in range(int(sim.scenario.duration // 3)):  # the fault phase, cut into uneven steps
        sim.run_for(3)
    sim.run_for(sim.scenario.duration % 3, step=0.7)
    report = sim.finish()
    assert report["passed"], report["violations"]
    assert report["trace_hash"] == cli_trace_hash(path, 4)
    # The world is freed before the checkers run: what it answered is kept.
    assert sim.trace_hash() == report["trace_hash"]
    assert sim.now == report["simulated_seconds"]


def test_samples_are_columns_of_one_length():
    sim = sluice.Simulation(scenario_path("retention_clock_jumps.toml"), seed=2, sample_every=1.0)
    sim.start()
    sim.run_for(20)
    s = sim.samples(topic="metrics", partition=0)
    assert len(s["at"]) >= 19
    assert all(len(s[k]) == len(s["at"]) for k in ("log_start", "log_end", "size_bytes", "dirty_ratio"))
    assert (s["log_start"] <= s["log_end"]).all()
    assert s["log_start"][-1] > 0, "retention.ms=10s has moved the log start within 20 s"


def test_a_power_loss_injected_now_loses_nothing_persisted_unless_the_fsync_is_skipped():
    def run(mutations):
        spec = sluice.scenario(
            name="inject", duration=12, liveness=20,
            topics=[sluice.topic("t", partitions=1, durability="persisted")],
            workloads=[sluice.producer("t", acks="all", idempotent=True, rate=50), sluice.consumer("t")])
        sim = sluice.Simulation(spec, seed=5, mutations=mutations)
        sim.run_for(4)
        sim.inject(sluice.fault("power-loss", length=0.5))
        sim.inject(sluice.fault("power-loss", at=3.0, length=0.5))
        sim.run_until(lambda: sim.now >= 12)
        return sim.finish()
    clean = run([])
    assert clean["passed"], clean["violations"]
    assert clean["figures"]["acks=all acknowledged and present"] > 100
    mutated = run(["skip-persisted-fsync"])
    assert not mutated["passed"]
    assert mutated["violations"][0]["invariant"] == "lost-write"


def test_on_a_cluster_the_drop_fault_costs_acks0_writes_sent_through_a_follower():
    def run(faults):
        spec = sluice.scenario(
            name="forwarding", brokers=3, duration=14, liveness=30,
            topics=[sluice.topic("t", partitions=3, replication_factor=3)],
            workloads=[sluice.producer("t", acks=0, keyed=False, rate=40, via="n2", name="acks-0"),
                       sluice.producer("t", acks="all", idempotent=True, rate=20, via="n2", name="acks-all"),
                       sluice.consumer("t")],
            faults=faults)
        return sluice.run_scenario(spec, seed=2)
    forwarded = run([])
    assert forwarded["passed"], forwarded["violations"]  # a run without faults fails on any write lost
    assert "acks=0 lost without power loss" not in forwarded["figures"]
    dropped = run([sluice.fault("drop-acks0-forwards", at=3, node="n2", length=8)])
    assert dropped["passed"], dropped["violations"]
    assert dropped["figures"]["acks=0 lost without power loss"] > 50
    assert "acks=all lost (violations)" not in dropped["figures"]
    single = sluice.Simulation(scenario_path("network_faults.toml"))
    with pytest.raises(ValueError, match="needs a cluster of brokers"):
        single.inject(sluice.fault("drop-acks0-forwards", length=2))


def test_the_history_is_plain_data():
    sim = sluice.Simulation(scenario_path("group_rebalance_crashes.toml"), seed=1)
    sim.start()
    sim.run_for(10)
    ops = sim.history()
    kinds = {op["kind"] for op in ops}
    assert {"produce", "fetch", "join", "commit"} <= kinds
    assert all(op["invoked"] <= (op["completed"] or op["invoked"]) for op in ops)
    assert any(e["kind"] == "serving" for e in sim.world_events())


def test_mistakes_raise_with_the_cpp_message():
    with pytest.raises(ValueError, match="unknown field 'duraton'"):
        sluice.Scenario.from_toml('name = "x"\nduraton = "3s"\n')
    with pytest.raises(ValueError, match="cannot read scenario file"):
        sluice.load_scenario("/nonexistent.toml")
    with pytest.raises(ValueError, match="unknown mutation"):
        sluice.Simulation(scenario_path("network_faults.toml"), mutations=["meteor"])
    sim = sluice.Simulation(scenario_path("network_faults.toml"))
    with pytest.raises(ValueError, match="fault kind 'meteor'"):
        sim.inject({"kind": "meteor"})
    with pytest.raises(ValueError, match="not a broker node"):
        sim.inject(sluice.fault("crash", node="n9"))
