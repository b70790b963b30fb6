#!/usr/bin/python3
"""The 3-node loopback cluster against a single node, and leader failover time (issue 22). Prints, never asserts.

usage: /usr/bin/python3 bench/cluster_bench.py SLUICE_BINARY [--reps N] [--count N] [--size BYTES] [--rate N]
                                               [--failovers N]   (bench/cluster_bench.sh runs it)

Three setups, each started as tests/compat/cluster_run.sh starts its cluster (tests/compat/py/cluster.py: free
loopback ports, a fresh data dir per node, `sluice serve --listen ... --data-dir ...`): the 3-node cluster (a topic
with replication factor 3), a single node (no cluster flags) and a 1-voter cluster (`--node-id 1 --peers 1@...`,
replication factor 1: the raft path without a network hop). In each, one producer on one partition, acks=all:
  throughput   COUNT records of SIZE bytes as fast as the producer goes (linger.ms=5): msgs/s and MB/s
  latency      RATE records/s for 5 s: p50/p99 of produce() to delivery report (librdkafka's message latency)
Repetitions are interleaved (3 nodes, 1 node, 1 voter, then again); medians are printed, with the ratio of the
3-node figure to the single node's. Then FAILOVERS times on the 3-node cluster: a fresh topic, producing at 200
msgs/s with acks=all (idempotent), SIGKILL of the partition leader, time to the first acknowledged record produced
after the kill; the node is restarted and back in the ISR before the next run. Median and each run are printed.

The producer is $BENCH_BIN/bench_produce (../shared/bench, librdkafka in C) when it is built, else a
confluent-kafka 1.7.0 (librdkafka 2.0.2) Python producer, as the output says; the failover runs always use Python.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "compat", "py"))

from cluster import Cluster  # noqa: E402
import confluent_kafka  # noqa: E402
from confluent_kafka import Producer  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402

BENCH_PRODUCE = os.path.join(os.environ.get("BENCH_BIN", "/tmp/sluice-bench-bin"), "bench_produce")


def create_topic(cluster, name, replication):
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap()})
    admin.create_topics([NewTopic(name, 1, replication)])[name].result(30)
    deadline = time.monotonic() + 30
    while cluster.agreed_leader(name, 0) is None:
        if time.monotonic() > deadline:
            raise RuntimeError("no leader of %s after 30 s" % name)
        time.sleep(0.1)
    return cluster.agreed_leader(name, 0)


def produce_python(bootstrap, topic, count, size, rate):
    """(msgs/s, MB/s, p50 ms, p99 ms) of `count` records produced with acks=all, paced at `rate`/s when rate > 0."""
    latencies, errors = [], []

    def on_delivery(err, msg):
        if err is not None:
            errors.append(err)
        else:
            latencies.append(msg.latency())

    p = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 5, "enable.idempotence": False,
                  "queue.buffering.max.messages": 1000000, "queue.buffering.max.kbytes": 1048576})
    payload = b"x" * size
    # Warm up: librdkafka 2.0.2 asks for a topic's metadata only at its next 1 s scan when the first produce()
    # comes before the connection is up, which would hold the first second of records back (p99 ~1 s).
    p.produce(topic, payload, partition=0)
    if p.flush(30):
        raise RuntimeError("the warm-up record was not delivered within 30 s")
    started = time.monotonic()
    for i in range(count):
        if rate:
            p.poll(max(0.0, started + i / rate - time.monotonic()))
        while True:
            try:
                p.produce(topic, payload, partition=0, on_delivery=on_delivery)
                break
            except BufferError:
                p.poll(0.01)
        if not rate and i % 500 == 0:
            p.poll(0)
    left = p.flush(120)
    elapsed = time.monotonic() - started
    if errors or left:
        raise RuntimeError("%d delivery errors (%s), %d undelivered" % (len(errors), errors[:2], left))
    latencies.sort()
    return (count / elapsed, count * size / elapsed / 1e6, latencies[len(latencies) // 2] * 1e3,
            latencies[int(len(latencies) * 0.99)] * 1e3)


def produce_c(bootstrap, topic, count, size, rate):
    args = [BENCH_PRODUCE, bootstrap, topic, str(count), str(size), "all", "5"] + ([str(rate)] if rate else [])
    out = subprocess.run(args, capture_output=True, text=True, timeout=300, check=True).stdout
    m = re.search(r"([\d.]+) msgs/s, ([\d.]+) MB/s.*p50=(\d+) p99=(\d+)", out)
    return float(m.group(1)), float(m.group(2)), int(m.group(3)) / 1e3, int(m.group(4)) / 1e3


def measure(setup, binary, scratch, args, produce, rep):
    name, nodes, cluster_mode = setup
    directory = os.path.join(scratch, "%s-%d" % (name.replace(" ", "-"), rep))
    cluster = Cluster.setup(directory, binary, nodes, cluster_mode=cluster_mode)
    try:
        for node in sorted(cluster.nodes):
            cluster.start(node, ["--log-level", "warn"])
        reason = cluster.wait_ready(30)
        if reason:
            raise RuntimeError("%s not ready: %s" % (name, reason))
        topic = "bench-%d" % rep
        create_topic(cluster, topic, nodes)
        throughput = produce(cluster.bootstrap(), topic, args.count, args.size, 0)
        latency = produce(cluster.bootstrap(), topic, args.rate * 5, args.size, args.rate)
        return throughput[0], throughput[1], latency[2], latency[3]
    finally:
        for node in sorted(cluster.nodes):
            cluster.stop(node)
        subprocess.run(["rm", "-rf", directory])


def failover_once(cluster, run):
    topic = "failover-%d" % run
    leader = create_topic(cluster, topic, 3)
    produced_at, state = {}, {"since": None, "first": None}

    def on_delivery(err, msg):
        if err is None and state["since"] is not None and state["first"] is None \
                and produced_at[msg.value()] >= state["since"]:
            state["first"] = time.monotonic()

    p = Producer({"bootstrap.servers": cluster.bootstrap(), "acks": "all", "enable.idempotence": True,
                  "linger.ms": 0, "retry.backoff.ms": 100, "reconnect.backoff.max.ms": 500,
                  "topic.metadata.refresh.interval.ms": 1000, "log_level": 0})
    started, i, elected, checked = time.monotonic(), 0, None, 0.0
    while time.monotonic() - started < 60 and (state["first"] is None or time.monotonic() - state["first"] < 1):
        if state["since"] is None and time.monotonic() - started > 2:
            state["since"] = time.monotonic()
            cluster.kill(leader)
        if state["since"] is not None and elected is None and time.monotonic() - checked > 0.05:
            checked = time.monotonic()
            if cluster.agreed_leader(topic, 0, exclude=[leader]) is not None:
                elected = time.monotonic() - state["since"]
        value = b"%d" % i
        produced_at[value] = time.monotonic()
        p.produce(topic, value, partition=0, on_delivery=on_delivery)
        p.poll(0.005)
        i += 1
    p.flush(30)
    cluster.start(leader, ["--log-level", "warn"])
    deadline = time.monotonic() + 60
    while True:
        new_leader = cluster.agreed_leader(topic, 0)
        view = new_leader is not None and cluster.partition(new_leader, topic, 0)
        if view and leader in view[3]:
            break
        if time.monotonic() > deadline:
            raise RuntimeError("node %d not back in the ISR of %s after 60 s" % (leader, topic))
        time.sleep(0.2)
    return None if state["first"] is None else state["first"] - state["since"], elected, leader, new_leader


def failovers(binary, scratch, runs):
    cluster = Cluster.setup(os.path.join(scratch, "failover"), binary, 3)
    try:
        for node in sorted(cluster.nodes):
            cluster.start(node, ["--log-level", "warn"])
        reason = cluster.wait_ready(30)
        if reason:
            raise RuntimeError("cluster not ready: %s" % reason)
        times, elections = [], []
        for run in range(runs):
            elapsed, elected, killed, new_leader = failover_once(cluster, run)
            times.append(elapsed)
            elections.append(elected)
            print("  failover %d: leader node %d SIGKILLed, node %d took over: first ack after %s; every survivor's "
                  "Metadata named the new leader after %s" % (
                      run + 1, killed, new_leader, "%.2f s" % elapsed if elapsed is not None else "none in 60 s",
                      "%.2f s" % elected if elected is not None else "-"), flush=True)
        measured = [t for t in times if t is not None]
        if measured:
            print("FAILOVER median %.2f s over %d runs (SIGKILL of the leader to the ack of the first acks=all "
                  "record produced after it; min %.2f, max %.2f)"
                  % (statistics.median(measured), len(measured), min(measured), max(measured)))
        else:
            print("FAILOVER: no run got an ack within 60 s")
        elected = [t for t in elections if t is not None]
        if elected:
            print("ELECTION median %.2f s (SIGKILL to both survivors' Metadata naming the new leader, polled every "
                  "50 ms)" % statistics.median(elected))
    finally:
        for node in sorted(cluster.nodes):
            cluster.stop(node)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("binary")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--count", type=int, default=50000, help="records in the throughput run (default 50000)")
    parser.add_argument("--size", type=int, default=1024, help="record value bytes (default 1024)")
    parser.add_argument("--rate", type=int, default=1000, help="records/s in the latency run (default 1000)")
    parser.add_argument("--failovers", type=int, default=5)
    args = parser.parse_args()
    binary = os.path.abspath(args.binary)
    produce, tool = produce_python, "confluent-kafka %s Python producer (librdkafka %s)" % (
        confluent_kafka.version()[0], confluent_kafka.libversion()[0])
    if os.access(BENCH_PRODUCE, os.X_OK):
        produce, tool = produce_c, BENCH_PRODUCE + " (librdkafka, C)"
    print("cluster_bench: %s; producer: %s; %d records of %d B for throughput, %d/s for 5 s for latency; acks=all, "
          "one partition, linger.ms=5" % (binary, tool, args.count, args.size, args.rate))
    print("cluster_bench: %d vCPUs (load average %.1f): the nodes and the client share them, so the figures are "
          "CPU-bound; on 2 vCPUs three nodes cost CPU a single node does not spend"
          % (os.cpu_count(), os.getloadavg()[0]))
    if produce is produce_python:
        print("cluster_bench: the Python producer spends CPU of its own per record (produce() and each delivery "
              "report); bench_produce ($BENCH_BIN, ../shared/bench/build.sh) is the lighter client")
    setups = [("3 nodes", 3, True), ("1 node", 1, False), ("1 voter", 1, True)]
    results = {s[0]: [] for s in setups}
    scratch = tempfile.mkdtemp(prefix="sluice-cluster-bench-", dir=os.environ.get("SCRATCH"))
    try:
        for rep in range(args.reps):
            for setup in setups:
                r = measure(setup, binary, scratch, args, produce, rep)
                results[setup[0]].append(r)
                print("  rep %d %-8s %8.0f msgs/s %7.1f MB/s   p50 %6.2f ms  p99 %6.2f ms" % ((rep + 1, setup[0]) + r),
                      flush=True)
        if args.reps > 0:
            median = {name: [statistics.median(r[k] for r in runs) for k in range(4)] for name, runs in results.items()}
            print("\nmedians of %d (throughput at saturation; latency at %d msgs/s):" % (args.reps, args.rate))
            print("  %-8s %10s %8s %10s %10s" % ("", "msgs/s", "MB/s", "p50 ms", "p99 ms"))
            for name, m in median.items():
                print("  %-8s %10.0f %8.1f %10.2f %10.2f" % ((name,) + tuple(m)))
            one = median["1 node"]
            for name in ("3 nodes", "1 voter"):
                m = median[name]
                print("RATIO %s / 1 node: throughput %.2f, p50 latency %.2f, p99 latency %.2f"
                      % (name, m[0] / one[0], m[2] / one[2], m[3] / one[3]))

        if args.failovers > 0:
            failovers(binary, scratch, args.failovers)
    finally:
        subprocess.run(["rm", "-rf", scratch])


if __name__ == "__main__":
    main()
