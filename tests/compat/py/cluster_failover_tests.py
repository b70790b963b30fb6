#!/usr/bin/python3
"""Partition leader failover on a 3-node cluster of real processes on loopback (issue 22), through real clients.

Run by tests/compat/cluster_run.sh, which starts the cluster and sets SLUICE_CLUSTER_DIR (py/cluster.py).
Every test ends with the cluster as it found it: the node it killed is restarted on its data dir.

usage: /usr/bin/python3 cluster_failover_tests.py TEST
  kafka_python_acks_all_leader_sigkill  1 partition, replication factor 3; kafka-python acks='all' produces numbered
                  records one at a time; after 50 acks the partition leader is SIGKILLed and producing goes on: the
                  client must get an ack again within FAILOVER_LIMIT_S (the failover time is printed); then 50 more.
                  Read through the survivors: every acknowledged record at the offset its ack named, nothing that was
                  never sent (duplicates allowed: kafka-python 2.0.2 retries are not idempotent). Rejoin (below).
                  Last: kafka-python returned no LeaderChange control record as data (fails today: README.md)
  confluent_acks_all_leader_sigkill     the same with confluent-kafka (enable.idempotence, acks=all, ~200 msgs/s,
                  pipelined), read back with confluent-kafka: every acknowledged record at its offset, none twice,
                  the log in produce order. Rejoin
  group_offsets_survive_partition_failover  a group member commits after 10 of 20 records on one partition of a
                  replicated topic whose leader is not the group coordinator; the leader is SIGKILLed; 10 more
                  records go to the new leader; a new member sees the committed offset and reads exactly the 20
                  records after it. Rejoin
  group_offsets_survive_coordinator_sigkill  the group's coordinator (the leader of its __consumer_offsets
                  partition, replication factor 3) is SIGKILLed after a member committed 10 of 20 records; every
                  surviving node then names another coordinator, and a new member sees the committed offset, reads the
                  20 records after it and commits at the new coordinator. Rejoin
Rejoin: the leader's ISR drops the dead node; restarted on its data dir, it answers Metadata with every node, is back
in the leader's ISR, and its own log files reach the end offset the survivors served.
"""
import struct
import time

from cluster import Cluster, find_coordinator, log_end_on_disk
from compat import REQUEST_TIMEOUT_S, SCALE, TestFailure, check, check_equal, run_tests, step, unique_topic, wait_until
from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer
from confluent_kafka import KafkaError as ConfluentError
from confluent_kafka import TopicPartition as ConfluentTopicPartition
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import NewTopic
from kafka.errors import KafkaError

FAILOVER_LIMIT_S = 20 * SCALE  # from the SIGKILL to the client's first ack on a new leader
REJOIN_LIMIT_S = 30 * SCALE  # from the restart to the restarted node back in the leader's ISR
COMMON = dict(api_version_auto_timeout_ms=3000 * SCALE, request_timeout_ms=REQUEST_TIMEOUT_S * 1000,
              reconnect_backoff_ms=50, reconnect_backoff_max_ms=500, retry_backoff_ms=100, metadata_max_age_ms=5000)


def create_topic(cluster, prefix, partitions):
    name = unique_topic(prefix)
    admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap(cluster.live()), client_id="compat-cluster-admin",
                             **COMMON)
    try:
        response = admin.create_topics([NewTopic(name, partitions, 3)], timeout_ms=10000)
        check_equal([e[1] for e in response.topic_errors], [0], "CreateTopics error codes")
    finally:
        admin.close()
    leaders = [wait_until(lambda p=p: cluster.agreed_leader(name, p), 20 * SCALE,
                          "every node naming the same leader of %s-%d" % (name, p), 0.2) for p in range(partitions)]
    step("created %s (%d partitions, replication factor 3); leaders %s" % (name, partitions, leaders))
    return name, leaders


CONTROL_KEY = b"\x00\x00\x00\x02"  # a LeaderChange control record's key (version 0, type 2)


def read_partition(cluster, topic, partition, nodes):
    """Every record kafka-python 2.0.2 returns for topic-partition from offset 0 to the end offset, through `nodes`
    only: ({offset: (key, value)}, end offset). kafka-python 2.0.2 does not skip control batches: their records
    come too."""
    tp = TopicPartition(topic, partition)
    c = KafkaConsumer(bootstrap_servers=cluster.bootstrap(nodes), client_id="compat-cluster-reader", group_id=None,
                      enable_auto_commit=False, auto_offset_reset="earliest", fetch_max_wait_ms=200, **COMMON)
    try:
        c.assign([tp])
        end = c.end_offsets([tp])[tp]
        c.seek(tp, 0)
        records = {}
        deadline = time.monotonic() + 20 * SCALE
        while c.position(tp) < end:
            check(time.monotonic() < deadline, "reading %s-%d: at offset %d of %d after 20 s"
                  % (topic, partition, c.position(tp), end))
            for msgs in c.poll(timeout_ms=500).values():
                records.update((m.offset, (m.key, m.value)) for m in msgs)
        step("kafka-python read %d records (end offset %d) through nodes %s" % (len(records), end, nodes))
        return records, end
    finally:
        c.close()


def read_partition_confluent(cluster, topic, partition, nodes):
    """The same through confluent-kafka (librdkafka skips control batches)."""
    c = Consumer({"bootstrap.servers": cluster.bootstrap(nodes), "client.id": "compat-cluster-reader",
                  "group.id": unique_topic("compat-unused"), "enable.auto.commit": False,
                  "enable.partition.eof": True, "fetch.wait.max.ms": 100,
                  "socket.timeout.ms": REQUEST_TIMEOUT_S * 1000})
    try:
        _low, end = c.get_watermark_offsets(ConfluentTopicPartition(topic, partition), timeout=REQUEST_TIMEOUT_S)
        c.assign([ConfluentTopicPartition(topic, partition, OFFSET_BEGINNING)])
        records = {}
        deadline = time.monotonic() + 20 * SCALE
        while True:
            check(time.monotonic() < deadline, "reading %s-%d: %d records, end offset %d, after 20 s"
                  % (topic, partition, len(records), end))
            msg = c.poll(0.5)
            if msg is None:
                continue
            if msg.error():
                check(msg.error().code() == ConfluentError._PARTITION_EOF, "consumer error %s" % msg.error())
                if msg.offset() >= end:
                    break
                continue
            records[msg.offset()] = (msg.key(), msg.value())
        step("confluent-kafka read %d records (end offset %d) through nodes %s" % (len(records), end, nodes))
        return records, end
    finally:
        c.close()


def check_acked_records(records, acked, sent):
    """Every acked value at its acked offset, and every record read a value that was sent or a LeaderChange control
    record (returned as a list of offsets). Returns (duplicated values, control record offsets)."""
    missing = {v: off for v, off in acked.items() if records.get(off, (None, None))[1] != v}
    if missing:
        sample = ["%s@%d (found %r)" % (v.decode(), off, records.get(off))
                  for v, off in sorted(missing.items(), key=lambda kv: kv[1])[:5]]
        raise TestFailure("%d of %d acknowledged records are not at the offset their ack named, e.g. %s"
                          % (len(missing), len(acked), ", ".join(sample)))
    control = sorted(o for o, (k, _v) in records.items() if k == CONTROL_KEY)
    strangers = [(o, r) for o, r in sorted(records.items()) if r[1] not in sent and o not in control]
    check(not strangers, "records that were never sent: %r" % strangers[:5])
    counts = {}
    for o, (_k, v) in records.items():
        if o not in control:
            counts[v] = counts.get(v, 0) + 1
    return sorted(v for v, n in counts.items() if n > 1), control


def kill_leader(cluster, topic, partition, leader):
    killed_at = time.monotonic()
    status = cluster.kill(leader)
    check_equal(status, 137, "node %d's exit status after SIGKILL" % leader)
    step("SIGKILLed node %d, the leader of %s-%d" % (leader, topic, partition))
    return killed_at


def rejoin(cluster, node, topic, partition, end_offset):
    """With node down, wait until the leader's ISR leaves it out (so the check below means something); restart it
    on its data dir; wait until it lists the cluster, the leader's ISR includes it, and its own log holds the
    partition up to end_offset (what the survivors served) at least."""
    def leader_view(node_in_isr):
        leader = cluster.agreed_leader(topic, partition)
        view = leader is not None and cluster.partition(leader, topic, partition)
        return view if view and (node in view[3]) == node_in_isr else None

    view = wait_until(lambda: leader_view(False), 10 * SCALE,
                      "the leader's ISR of %s-%d without the dead node %d" % (topic, partition, node))
    step("while node %d is down: leader %d, isr %s" % (node, view[1], view[3]))
    started = time.monotonic()
    cluster.start(node)
    reason = cluster.wait_ready(REJOIN_LIMIT_S, [node])
    check(reason is None, "restarted node %d not ready: %s" % (node, reason))
    view = wait_until(lambda: cluster.partition(node, topic, partition), REJOIN_LIMIT_S,
                      "restarted node %d reporting %s-%d" % (node, topic, partition))
    step("node %d restarted: ready after %.1f s, reports %s-%d as %s"
         % (node, time.monotonic() - started, topic, partition, view))
    view = wait_until(lambda: leader_view(True), REJOIN_LIMIT_S,
                      "node %d back in the leader's ISR of %s-%d" % (node, topic, partition))
    step("node %d back in the ISR after %.1f s: leader %d, replicas %s, isr %s"
         % (node, time.monotonic() - started, view[1], view[2], view[3]))
    data_dir = cluster.nodes[node]["data_dir"]
    wait_until(lambda: (log_end_on_disk(data_dir, topic, partition) or 0) >= end_offset, REJOIN_LIMIT_S,
               "node %d's own log of %s-%d reaching offset %d" % (node, topic, partition, end_offset))
    step("node %d's own log of %s-%d caught up: end offset %d (the survivors served %d)"
         % (node, topic, partition, log_end_on_disk(data_dir, topic, partition), end_offset))


def report_failover(killed_at, first_ack_at):
    check(first_ack_at is not None, "no record acknowledged within %g s of the SIGKILL" % FAILOVER_LIMIT_S)
    step("failover time (SIGKILL to the first ack of a record sent after it): %.2f s" % (first_ack_at - killed_at))


# --------------------------------------------------------------------------------------------------

def test_kafka_python_acks_all_leader_sigkill():
    cluster = Cluster()
    topic, (leader,) = create_topic(cluster, "failover-kp", 1)
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap(), client_id="compat-cluster-kp", acks="all",
                             retries=1000, linger_ms=0, max_in_flight_requests_per_connection=1,
                             max_block_ms=FAILOVER_LIMIT_S * 1000, **COMMON)
    sent, acked, failures = set(), {}, []

    def send(i):
        value = b"kp-%06d" % i
        sent.add(value)
        try:
            acked[value] = producer.send(topic, value=value, partition=0).get(timeout=FAILOVER_LIMIT_S).offset
            return True
        except KafkaError as e:  # fate unknown: it may or may not be in the log
            failures.append((value, repr(e)))
            return False

    try:
        for i in range(50):
            check(send(i), "produce before the kill failed: %s" % failures[-1:])
        step("50 records acknowledged (offsets %d..%d)" % (min(acked.values()), max(acked.values())))
        killed_at = kill_leader(cluster, topic, 0, leader)
        first_ack_at, after, i = None, 0, 50
        while after < 50 and time.monotonic() - killed_at < FAILOVER_LIMIT_S + 30 * SCALE:
            if send(i):
                after += 1
                first_ack_at = first_ack_at or time.monotonic()
            elif first_ack_at is None and time.monotonic() - killed_at > FAILOVER_LIMIT_S:
                break
            i += 1
        report_failover(killed_at, first_ack_at)
        check_equal(after, 50, "records acknowledged after the kill")
    finally:
        producer.close(timeout=5)
    step("%d sent, %d acknowledged, %d failed (fate unknown)%s" % (len(sent), len(acked), len(failures),
                                                                   ": %s" % failures[:3] if failures else ""))
    survivors = cluster.live()
    new_leader = wait_until(lambda: cluster.agreed_leader(topic, 0, exclude=[leader]), 10, "a new leader")
    step("new leader: node %d" % new_leader)
    records, end = read_partition(cluster, topic, 0, survivors)
    duplicates, control = check_acked_records(records, acked, sent)
    step("every acknowledged record is at its offset; %d values written more than once (allowed: kafka-python "
         "retries are not idempotent)%s" % (len(duplicates), ": %s" % duplicates[:5] if duplicates else ""))
    rejoin(cluster, leader, topic, 0, end)
    # Kafka writes no control batch into a data partition on a leader change; Sluice writes the raft no-op of each
    # new leader as a LeaderChange control batch (core/cluster/partition_raft_log.h), and kafka-python 2.0.2, which
    # does not skip control batches, hands its record to the application as if it had been produced.
    check(not control, "kafka-python 2.0.2 returned %d LeaderChange control records as data, at offsets %s: %s (a "
          "Kafka cluster writes no control batch into a data partition on a leader change)"
          % (len(control), control, [records[o] for o in control][:3]))


def test_confluent_acks_all_leader_sigkill():
    cluster = Cluster()
    topic, (leader,) = create_topic(cluster, "failover-ck", 1)
    sent, produced_at, acked, errors = [], {}, {}, []
    acked_since = {"t": None, "count": 0, "first": None}  # acks of records produced at or after t

    def on_delivery(err, msg):
        if err is not None:
            errors.append((msg.value(), err))
            return
        acked[msg.value()] = msg.offset()
        if acked_since["t"] is not None and produced_at[msg.value()] >= acked_since["t"]:
            acked_since["count"] += 1
            acked_since["first"] = acked_since["first"] or time.monotonic()

    producer = Producer({"bootstrap.servers": cluster.bootstrap(), "client.id": "compat-cluster-ck", "acks": "all",
                         "enable.idempotence": True, "linger.ms": 5, "request.timeout.ms": REQUEST_TIMEOUT_S * 1000,
                         "message.timeout.ms": (FAILOVER_LIMIT_S + 30 * SCALE) * 1000, "retry.backoff.ms": 100,
                         "reconnect.backoff.max.ms": 500, "topic.metadata.refresh.interval.ms": 1000,
                         "socket.connection.setup.timeout.ms": 3000 * SCALE})

    def produce_for(seconds, count, acks):
        """~200 msgs/s until acks() reaches count or `seconds` pass."""
        deadline = time.monotonic() + seconds
        while acks() < count and time.monotonic() < deadline:
            value = b"ck-%06d" % len(sent)
            sent.append(value)
            produced_at[value] = time.monotonic()
            producer.produce(topic, value=value, partition=0, on_delivery=on_delivery)
            producer.poll(0.005)

    produce_for(20 * SCALE, 200, lambda: len(acked))
    check(len(acked) >= 200 and not errors, "before the kill: %d acks, errors %s" % (len(acked), errors[:3]))
    step("%d records acknowledged before the kill" % len(acked))
    acked_since["t"] = kill_leader(cluster, topic, 0, leader)
    produce_for(FAILOVER_LIMIT_S, 1, lambda: acked_since["count"])
    report_failover(acked_since["t"], acked_since["first"])
    produce_for(30 * SCALE, 200, lambda: acked_since["count"])
    check(acked_since["count"] >= 200, "only %d records produced after the kill were acknowledged"
          % acked_since["count"])
    check_equal(producer.flush(FAILOVER_LIMIT_S), 0, "messages still undelivered after flush")
    step("%d sent, %d acknowledged, %d delivery errors%s" % (len(sent), len(acked), len(errors),
                                                             ": %s" % errors[:3] if errors else ""))
    survivors = cluster.live()
    new_leader = wait_until(lambda: cluster.agreed_leader(topic, 0, exclude=[leader]), 10, "a new leader")
    step("new leader: node %d" % new_leader)
    records, end = read_partition_confluent(cluster, topic, 0, survivors)
    duplicates, _control = check_acked_records(records, acked, set(sent))
    check(not duplicates, "an idempotent producer's records written more than once: %d values, e.g. %s at offsets %s"
          % (len(duplicates), duplicates[:3], [sorted(o for o, r in records.items() if r[1] == d)
                                               for d in duplicates[:3]]))
    order = [int(records[o][1][3:]) for o in sorted(records)]
    check(order == sorted(order), "records out of produce order in the log: %s"
          % [(a, b) for a, b in zip(order, order[1:]) if a > b][:5])
    step("every acknowledged record is at its offset, none twice, all in produce order")
    rejoin(cluster, leader, topic, 0, end)


def group_consumer(cluster, group, topic, name):
    # confluent-kafka: kafka-python 2.0.2 would also return the partition's LeaderChange control records.
    c = Consumer({"bootstrap.servers": cluster.bootstrap(), "client.id": "compat-cluster-" + name,
                  "group.id": group, "enable.auto.commit": False, "auto.offset.reset": "earliest",
                  "session.timeout.ms": 6000, "heartbeat.interval.ms": 1000, "fetch.wait.max.ms": 100,
                  "topic.metadata.refresh.interval.ms": 1000, "reconnect.backoff.max.ms": 500})
    c.subscribe([topic])  # a group member: JoinGroup/SyncGroup/Heartbeat/OffsetCommit go to the coordinator
    return c


def consume(c, partition, count):
    got = []
    deadline = time.monotonic() + FAILOVER_LIMIT_S
    while len(got) < count and time.monotonic() < deadline:
        msg = c.poll(0.5)
        if msg is not None:
            check(not msg.error(), "consumer error %s" % msg.error())
            check_equal(msg.partition(), partition, "partition of a consumed record")
            got.append((msg.offset(), msg.value()))
    return got


def committed(c, topic, partition):
    return c.committed([ConfluentTopicPartition(topic, partition)], timeout=REQUEST_TIMEOUT_S)[0].offset


def group_coordinator(cluster, group):
    """The coordinator every live node names for the group (FindCoordinator), when they agree; else None."""
    named = set()
    for node in cluster.live():
        try:
            error, coordinator = find_coordinator(cluster.port(node), group)
        except (OSError, struct.error):
            return None
        if error != 0:
            return None
        named.add(coordinator)
    return named.pop() if len(named) == 1 else None


def offsets_partition(group, partitions=50):
    """Kafka's partitionFor: abs(Java String.hashCode) % offsets.topic.num.partitions (ASCII group ids)."""
    h = 0
    for ch in group:
        h = (31 * h + ord(ch)) & 0xFFFFFFFF
    if h >= 1 << 31:
        h -= 1 << 32
    return (0 if h == -(1 << 31) else abs(h)) % partitions


# The leader of a data partition that is NOT on the group's coordinator is killed (the coordinator's own failover:
# the next test).
def test_group_offsets_survive_partition_failover():
    cluster = Cluster()
    group = unique_topic("failover-group")
    # The first FindCoordinator creates __consumer_offsets: COORDINATOR_NOT_AVAILABLE until its partitions lead.
    coordinator = wait_until(lambda: group_coordinator(cluster, group), 30 * SCALE,
                             "every node naming the same coordinator of %s" % group, 0.2)
    for _ in range(5):
        topic, leaders = create_topic(cluster, "failover-grp", 3)
        candidates = [p for p, leader in enumerate(leaders) if leader != coordinator]
        if candidates:
            break
    check(candidates, "every partition of 5 topics was led by the coordinator, node %d" % coordinator)
    partition = candidates[0]
    leader = leaders[partition]
    step("group %s: coordinator node %d; partition %d led by node %d" % (group, coordinator, partition, leader))

    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap(), client_id="compat-cluster-grp", acks="all",
                             retries=1000, linger_ms=0, max_in_flight_requests_per_connection=1,
                             max_block_ms=FAILOVER_LIMIT_S * 1000, **COMMON)
    records = []  # (offset, value) in produce order, from the acks

    def produce(first, count):
        for i in range(first, first + count):
            value = b"g-%d" % i
            records.append((producer.send(topic, value=value, partition=partition).get(timeout=FAILOVER_LIMIT_S)
                            .offset, value))

    try:
        produce(0, 20)
        first = group_consumer(cluster, group, topic, "first")
        check_equal(consume(first, partition, 10), records[:10], "the first consumer's 10 records")
        commit_at = records[9][0] + 1
        first.commit(offsets=[ConfluentTopicPartition(topic, partition, commit_at)], asynchronous=False)
        check_equal(committed(first, topic, partition), commit_at, "committed offset")
        first.close()
        step("committed offset %d after reading 10 of 20 records (offsets %d..%d)"
             % (commit_at, records[0][0], records[-1][0]))
        kill_leader(cluster, topic, partition, leader)
        produce(20, 10)
        new_leader = wait_until(lambda: cluster.agreed_leader(topic, partition, exclude=[leader]), 10, "a new leader")
        step("10 more records (offsets %d..%d) acknowledged by the new leader, node %d"
             % (records[20][0], records[-1][0], new_leader))
        second = group_consumer(cluster, group, topic, "second")
        check_equal(committed(second, topic, partition), commit_at, "committed offset seen by a new consumer after the failover")
        check_equal(consume(second, partition, 20), records[10:], "the new consumer's records (from the committed offset)")
        end = records[-1][0] + 1
        second.commit(offsets=[ConfluentTopicPartition(topic, partition, end)], asynchronous=False)
        check_equal(committed(second, topic, partition), end, "committed offset after the new consumer")
        second.close()
        step("a new consumer started at the committed offset %d and read the 20 records after it from the new leader"
             % commit_at)
    finally:
        producer.close(timeout=5)
    rejoin(cluster, leader, topic, partition, records[-1][0] + 1)


# The group's coordinator (the leader of its __consumer_offsets partition, replicated 3 ways) is SIGKILLed after a
# synchronous commit: the partition's new leader loads the group from the replicated log and a new member starts at
# the committed offset.
def test_group_offsets_survive_coordinator_sigkill():
    cluster = Cluster()
    group = unique_topic("coordinator-group")
    coordinator = wait_until(lambda: group_coordinator(cluster, group), 30 * SCALE,
                             "every node naming the same coordinator of %s" % group, 0.2)
    offsets_tp = offsets_partition(group)
    step("group %s: coordinator node %d, the leader of __consumer_offsets-%d" % (group, coordinator, offsets_tp))
    topic, leaders = create_topic(cluster, "coordinator-grp", 1)
    partition = 0
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap(), client_id="compat-cluster-coord", acks="all",
                             retries=1000, linger_ms=0, max_in_flight_requests_per_connection=1,
                             max_block_ms=FAILOVER_LIMIT_S * 1000, **COMMON)
    records = []

    def produce(first, count):
        for i in range(first, first + count):
            value = b"c-%d" % i
            records.append((producer.send(topic, value=value, partition=partition).get(timeout=FAILOVER_LIMIT_S)
                            .offset, value))

    try:
        produce(0, 20)
        first = group_consumer(cluster, group, topic, "first")
        check_equal(consume(first, partition, 10), records[:10], "the first consumer's 10 records")
        commit_at = records[9][0] + 1
        first.commit(offsets=[ConfluentTopicPartition(topic, partition, commit_at)], asynchronous=False)
        check_equal(committed(first, topic, partition), commit_at, "committed offset")
        first.close()
        step("committed offset %d at coordinator node %d" % (commit_at, coordinator))
        status = cluster.kill(coordinator)
        check_equal(status, 137, "node %d's exit status after SIGKILL" % coordinator)
        killed_at = time.monotonic()
        new_coordinator = wait_until(
            lambda: (lambda c: c if c is not None and c != coordinator else None)(group_coordinator(cluster, group)),
            FAILOVER_LIMIT_S, "a new coordinator of %s" % group, 0.2)
        step("SIGKILLed node %d; node %d coordinates %s after %.1f s"
             % (coordinator, new_coordinator, group, time.monotonic() - killed_at))
        produce(20, 10)
        second = group_consumer(cluster, group, topic, "second")
        check_equal(committed(second, topic, partition), commit_at,
                    "committed offset seen by a new member after the coordinator's failover")
        check_equal(consume(second, partition, 20), records[10:], "the new member's records (from the committed offset)")
        end = records[-1][0] + 1
        second.commit(offsets=[ConfluentTopicPartition(topic, partition, end)], asynchronous=False)
        check_equal(committed(second, topic, partition), end, "committed offset at the new coordinator")
        second.close()
        step("a new member started at the committed offset %d and committed %d at node %d"
             % (commit_at, end, new_coordinator))
    finally:
        producer.close(timeout=5)
    rejoin(cluster, coordinator, topic, partition, records[-1][0] + 1)


if __name__ == "__main__":
    run_tests({
        "kafka_python_acks_all_leader_sigkill": test_kafka_python_acks_all_leader_sigkill,
        "confluent_acks_all_leader_sigkill": test_confluent_acks_all_leader_sigkill,
        "group_offsets_survive_partition_failover": test_group_offsets_survive_partition_failover,
        "group_offsets_survive_coordinator_sigkill": test_group_offsets_survive_coordinator_sigkill,
    })
