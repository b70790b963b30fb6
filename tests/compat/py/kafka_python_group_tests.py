#!/usr/bin/python3
"""kafka-python 2.0.2 consumer groups against SLUICE_BOOTSTRAP (JoinGroup v2, SyncGroup/Heartbeat/LeaveGroup v1,
OffsetCommit v2, OffsetFetch v1).

usage: /usr/bin/python3 kafka_python_group_tests.py TEST
  group_share            two KafkaConsumers in one group on a 4-partition topic: two partitions each, disjoint,
                         every record read once; one closes (LeaveGroup) and the other gets all four
  group_commit_restart   commit offset 6 of 10, close; a new consumer in the group resumes at 6
  group_commit_broker_restart  (a broker of the test's own) commits survive SIGTERM + restart, then SIGKILL +
                         restart
  group_session_expiry   a raw-protocol member joins (session timeout 6 s), syncs, then goes silent: it is expired
                         and the KafkaConsumer in the group gets all four partitions back
Each consumer runs its poll loop on a thread of its own: kafka-python blocks in poll() while its group rebalances.
"""
import socket
import threading
import time

from compat import (CONNECT_TIMEOUT_S, REQUEST_TIMEOUT_S, SCALE, Broker, bootstrap, check, check_equal, run_tests,
                    step, unique_topic, wait_until)
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import NewTopic
from kafka.errors import NoBrokersAvailable
from kafka.coordinator.protocol import ConsumerProtocolMemberAssignment, ConsumerProtocolMemberMetadata
from kafka.protocol.group import HeartbeatRequest, JoinGroupRequest, SyncGroupRequest
from kafka.protocol.parser import KafkaProtocol
from kafka.structs import OffsetAndMetadata

COMMON = dict(api_version_auto_timeout_ms=CONNECT_TIMEOUT_S * 1000, request_timeout_ms=REQUEST_TIMEOUT_S * 1000 * 3,
              reconnect_backoff_max_ms=500)
# Kafka's group.min.session.timeout.ms is 6000; a rebalance waits at most max_poll_interval_ms for each member.
GROUP = dict(session_timeout_ms=6000, heartbeat_interval_ms=1000, max_poll_interval_ms=10000 * SCALE,
             enable_auto_commit=False, auto_offset_reset="earliest", fetch_max_wait_ms=200)
# The shared broker keeps Kafka's group.initial.rebalance.delay.ms (3 s); the tests' own brokers set it low.
OWN_BROKER_SETTINGS = ["group.initial.rebalance.delay.ms=100"]


def create_topic(server, name, partitions):
    client = KafkaAdminClient(bootstrap_servers=server, client_id="compat-kp-group-admin", **COMMON)
    try:
        client.create_topics([NewTopic(name, partitions, 1)])
    finally:
        client.close()
    step("created topic %s with %d partitions" % (name, partitions))


def produce(server, topic, per_partition, partitions, tag="v"):
    p = KafkaProducer(bootstrap_servers=server, client_id="compat-kp-group", acks="all", linger_ms=5,
                      max_block_ms=5000, **COMMON)
    try:
        futures = [p.send(topic, value=b"%s-%d-%d" % (tag.encode(), part, i), partition=part)
                   for part in range(partitions) for i in range(per_partition)]
        p.flush(timeout=REQUEST_TIMEOUT_S)
        return [f.get(timeout=REQUEST_TIMEOUT_S) for f in futures]
    finally:
        p.close(timeout=2)


def consumer(server, group, client_id="compat-kp-group-consumer"):
    return KafkaConsumer(bootstrap_servers=server, group_id=group, client_id=client_id, **GROUP, **COMMON)


class Member:
    """A subscribed KafkaConsumer polling on its own thread; records and the current assignment are kept."""

    def __init__(self, server, group, topic, name):
        self.name = name
        self.consumer = consumer(server, group, "compat-kp-%s" % name)
        self.topic = topic
        self.lock = threading.Lock()
        self.records = []
        self.partitions = set()
        self.error = None
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def start(self):
        self.consumer.subscribe([self.topic])
        self.thread.start()
        return self

    def _run(self):
        try:
            while not self.stop.is_set():
                batch = self.consumer.poll(timeout_ms=200)
                with self.lock:
                    for records in batch.values():
                        self.records.extend(records)
                    self.partitions = {tp.partition for tp in self.consumer.assignment()}
        except Exception as e:  # reported by the main thread
            self.error = e

    def assigned(self):
        with self.lock:
            if self.error:
                raise self.error
            return set(self.partitions)

    def seen(self):
        with self.lock:
            return [(r.partition, r.offset, r.value) for r in self.records]

    def close(self):
        self.stop.set()
        self.thread.join(10)
        check(not self.thread.is_alive(), "%s: poll loop did not stop" % self.name)
        self.consumer.close()  # LeaveGroup


def wait_assignments(members, expected, timeout_s, what):
    def probe():
        got = [m.assigned() for m in members]
        return got if [len(a) for a in got] == expected else None
    got = wait_until(probe, timeout_s * SCALE, "%s (want %s partitions)" % (what, expected), interval_s=0.2)
    step("%s: %s" % (what, ", ".join("%s has %s" % (m.name, sorted(a)) for m, a in zip(members, got))))
    return got


def test_group_share():
    server = bootstrap()
    topic, group = unique_topic("kp-grp-share"), unique_topic("kp-group")
    create_topic(server, topic, 4)
    a = Member(server, group, topic, "a").start()
    b = Member(server, group, topic, "b").start()
    try:
        got = wait_assignments([a, b], [2, 2], 30, "both members joined")
        check(not (got[0] & got[1]) and got[0] | got[1] == {0, 1, 2, 3},
              "the assignments overlap or miss a partition: %s" % got)
        produce(server, topic, 5, 4)
        wait_until(lambda: len(a.seen()) + len(b.seen()) >= 20, 15 * SCALE, "20 records consumed by the group")
        time.sleep(0.5)  # anything read twice would show now
        for m, parts in ((a, got[0]), (b, got[1])):
            check({p for p, _, _ in m.seen()} <= parts, "%s read partitions %s outside its assignment %s"
                  % (m.name, sorted({p for p, _, _ in m.seen()}), sorted(parts)))
        everything = sorted(a.seen() + b.seen())
        check_equal([(p, o) for p, o, _ in everything], [(p, o) for p in range(4) for o in range(5)],
                    "(partition, offset) of every record read by the two members")
        step("20 records read once each, every member on its own partitions")
        a.close()
        step("a closed (LeaveGroup)")
        got = wait_assignments([b], [4], 20, "after a left")
        check_equal(got[0], {0, 1, 2, 3}, "b's partitions after a left")
    finally:
        for m in (a, b):
            m.stop.set()
        for m in (a, b):
            m.thread.join(5)
            m.consumer.close(autocommit=False)


def commit_and_resume(server, topic, group, offset, total, what):
    """Commits `offset` on partition 0 with a consumer of the group, closes it, and checks that a new one starts
    there (reading from `offset` to `total`)."""
    tp = TopicPartition(topic, 0)
    c = consumer(server, group)
    try:
        c.subscribe([topic])
        wait_until(lambda: c.poll(timeout_ms=200) is not None and c.assignment(), 20 * SCALE, "first assignment")
        c.commit({tp: OffsetAndMetadata(offset, "compat-%d" % offset)})
        check_equal(c.committed(tp), offset, "committed offset read back by the committing consumer")
    finally:
        c.close(autocommit=False)
    step("%s: committed %d, closed" % (what, offset))
    return expect_resume(server, topic, group, offset, total, what)


def answering_consumer(server, group):
    """A consumer of the group, retried while a just-restarted broker is still recovering its logs."""
    def attempt():
        try:
            return consumer(server, group)
        except NoBrokersAvailable:
            return None
    return wait_until(attempt, 20 * SCALE, "the restarted broker at %s answering" % server, interval_s=0.5)


def expect_resume(server, topic, group, offset, total, what):
    tp = TopicPartition(topic, 0)
    c = answering_consumer(server, group)
    try:
        check_equal(c.committed(tp), offset, "%s: committed offset seen by a new consumer" % what)
        c.subscribe([topic])
        got = []
        deadline = time.monotonic() + 20 * SCALE
        while len(got) < total - offset and time.monotonic() < deadline:
            for records in c.poll(timeout_ms=200).values():
                got.extend(r.offset for r in records)
        check_equal(got, list(range(offset, total)), "%s: offsets read by a new consumer of the group" % what)
        step("%s: a new consumer resumed at %d" % (what, offset))
    finally:
        c.close(autocommit=False)


def test_group_commit_restart():
    server = bootstrap()
    topic, group = unique_topic("kp-grp-commit"), unique_topic("kp-group")
    create_topic(server, topic, 1)
    produce(server, topic, 10, 1)
    commit_and_resume(server, topic, group, 6, 10, "consumer restart")


def test_group_commit_broker_restart():
    with Broker(settings=OWN_BROKER_SETTINGS) as broker:
        broker.start()
        step("own broker on %s, data dir %s" % (broker.bootstrap, broker.data_dir))
        topic, group = unique_topic("kp-grp-durable"), unique_topic("kp-group")
        create_topic(broker.bootstrap, topic, 1)
        produce(broker.bootstrap, topic, 10, 1)
        commit_and_resume(broker.bootstrap, topic, group, 4, 10, "before any restart")
        broker.stop()
        broker.start()
        step("SIGTERM, restarted on the same data dir, now %s" % broker.bootstrap)
        expect_resume(broker.bootstrap, topic, group, 4, 10, "after SIGTERM + restart")
        commit_and_resume(broker.bootstrap, topic, group, 7, 10, "after the restart")
        broker.kill()
        broker.start()
        step("SIGKILL, restarted on the same data dir, now %s" % broker.bootstrap)
        expect_resume(broker.bootstrap, topic, group, 7, 10, "after SIGKILL + restart")


class RawMember:
    """One group member speaking the protocol itself over one connection: it heartbeats only when told to."""

    def __init__(self, server):
        host, _, port = server.rpartition(":")
        self.sock = socket.create_connection((host, int(port)), timeout=CONNECT_TIMEOUT_S)
        self.protocol = KafkaProtocol(client_id="compat-kp-raw-member")

    def call(self, request, timeout_s):
        self.sock.settimeout(timeout_s)
        self.protocol.send_request(request)
        self.sock.sendall(self.protocol.send_bytes())
        while True:
            data = self.sock.recv(65536)
            check(data, "the broker closed the raw member's connection")
            for _, response in self.protocol.receive_bytes(data):
                return response

    def close(self):
        self.sock.close()


def test_group_session_expiry():
    server = bootstrap()
    topic, group = unique_topic("kp-grp-expiry"), unique_topic("kp-group")
    create_topic(server, topic, 4)
    a = Member(server, group, topic, "a").start()
    raw = None
    try:
        wait_assignments([a], [4], 30, "a alone")
        raw = RawMember(server)
        metadata = ConsumerProtocolMemberMetadata(0, [topic], b"")  # kept: kafka-python's encode() needs it alive
        subscription = metadata.encode()
        # JoinGroup v2 admits the member at once; the answer comes when `a` has rejoined (its heartbeat says
        # REBALANCE_IN_PROGRESS).
        join = raw.call(JoinGroupRequest[2](group, 6000, 10000, "", "consumer",
                                            [("range", subscription), ("roundrobin", subscription)]), 30 * SCALE)
        check_equal(join.error_code, 0, "raw member's JoinGroup error")
        step("raw member joined: generation %d, member %s, leader %s" % (join.generation_id, join.member_id,
                                                                          join.leader_id))
        check(join.leader_id != join.member_id, "the raw member was chosen as leader (a was there first)")
        sync = raw.call(SyncGroupRequest[1](group, join.generation_id, join.member_id, []), 30 * SCALE)
        check_equal(sync.error_code, 0, "raw member's SyncGroup error")
        mine = ConsumerProtocolMemberAssignment.decode(sync.member_assignment)
        raw_parts = {p for _, parts in mine.assignment for p in parts}
        synced_at = time.monotonic()
        step("raw member synced: partitions %s; now silent" % sorted(raw_parts))
        check_equal(len(raw_parts), 2, "partitions assigned to the raw member")
        beat = raw.call(HeartbeatRequest[1](group, join.generation_id, join.member_id), REQUEST_TIMEOUT_S)
        check_equal(beat.error_code, 0, "raw member's one heartbeat")
        wait_assignments([a], [2], 15, "a shares with the raw member")
        wait_assignments([a], [4], 25, "a after the raw member's session timeout")
        elapsed = time.monotonic() - synced_at
        check(elapsed >= 4.0, "a got the raw member's partitions back after %.1f s, before its 6 s session "
              "timeout could expire" % elapsed)
        step("the silent member was expired; a got all four partitions %.1f s after the last heartbeat" % elapsed)
    finally:
        if raw:
            raw.close()
        a.close()


if __name__ == "__main__":
    run_tests({
        "group_share": test_group_share,
        "group_commit_restart": test_group_commit_restart,
        "group_commit_broker_restart": test_group_commit_broker_restart,
        "group_session_expiry": test_group_session_expiry,
    })
