#!/usr/bin/python3
"""confluent-kafka 1.7.0 (librdkafka 2.0.2) consumer groups against SLUICE_BOOTSTRAP (JoinGroup v5 with
MEMBER_ID_REQUIRED, SyncGroup/Heartbeat v3, OffsetCommit v7, OffsetFetch v7 flexible).

usage: /usr/bin/python3 confluent_group_tests.py TEST
  group_balance   two Consumers subscribed in one group on a 4-partition topic: two partitions each, disjoint;
                  40 records read once each, each by the member owning its partition; synchronous commit;
                  both close; a new consumer of the group sees the committed offsets and reads only the 4
                  records produced after them
"""
import time

from compat import REQUEST_TIMEOUT_S, SCALE, check, check_equal, run_tests, step, unique_topic, wait_until
from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition
from confluent_tests import admin, conf, create_topic

PARTITIONS = 4


def group_consumer(group, name):
    # Kafka's group.min.session.timeout.ms is 6000; the rebalance waits max.poll.interval.ms for each member.
    return Consumer(conf(**{"client.id": "compat-ck-%s" % name, "group.id": group, "session.timeout.ms": 6000,
                            "heartbeat.interval.ms": 1000, "max.poll.interval.ms": 10000 * SCALE,
                            "enable.auto.commit": False, "auto.offset.reset": "earliest",
                            "fetch.wait.max.ms": 100, "topic.metadata.refresh.interval.ms": 1000}))


def produce_spread(topic, per_partition, tag):
    reports = []
    p = Producer(conf(**{"client.id": "compat-ck-group", "linger.ms": 5,
                         "message.timeout.ms": REQUEST_TIMEOUT_S * 1000}))
    for part in range(PARTITIONS):
        for i in range(per_partition):
            p.produce(topic, value=b"%s-%d-%d" % (tag, part, i), partition=part,
                      on_delivery=lambda err, msg: reports.append(err))
    check_equal(p.flush(REQUEST_TIMEOUT_S + 2), 0, "messages still undelivered after flush")
    check(not [e for e in reports if e is not None], "delivery errors: %s" % reports[:3])


def poll_all(consumers, seen):
    for name, c in consumers:
        msg = c.poll(0.1)
        if msg is None:
            continue
        if msg.error():
            check(msg.error().code() == KafkaError._PARTITION_EOF, "%s: consumer error %s" % (name, msg.error()))
            continue
        seen.append((name, msg.partition(), msg.offset()))


def assignments(consumers):
    return [{tp.partition for tp in c.assignment()} for _, c in consumers]


def test_group_balance():
    topic, group = unique_topic("ck-grp"), unique_topic("ck-group")
    create_topic(admin(), topic, partitions=PARTITIONS)
    consumers = [("a", group_consumer(group, "a")), ("b", group_consumer(group, "b"))]
    seen = []
    try:
        for _, c in consumers:
            c.subscribe([topic])

        def balanced():
            poll_all(consumers, seen)
            got = assignments(consumers)
            return got if [len(a) for a in got] == [2, 2] else None
        got = wait_until(balanced, 30 * SCALE, "two partitions for each member", interval_s=0)
        check(not (got[0] & got[1]) and got[0] | got[1] == set(range(PARTITIONS)), "assignments: %s" % got)
        step("balanced: a has %s, b has %s" % (sorted(got[0]), sorted(got[1])))
        produce_spread(topic, 10, b"v")
        wait_until(lambda: poll_all(consumers, seen) or len(seen) >= 40, 15 * SCALE, "40 records consumed",
                   interval_s=0)
        deadline = time.monotonic() + 0.5  # anything read twice shows now
        while time.monotonic() < deadline:
            poll_all(consumers, seen)
        owner = {p: name for (name, _), parts in zip(consumers, got) for p in parts}
        check(all(owner[p] == name for name, p, _ in seen), "a record read by a member not owning its partition: "
              "%s" % [(n, p, o) for n, p, o in seen if owner[p] != n][:5])
        check_equal(sorted((p, o) for _, p, o in seen), [(p, o) for p in range(PARTITIONS) for o in range(10)],
                    "(partition, offset) of every record read by the group")
        step("40 records read once each, by their partition's owner")
        for name, c in consumers:
            committed = c.commit(asynchronous=False)
            check(all(tp.error is None for tp in committed), "%s: commit errors %s" % (name, committed))
        step("both members committed synchronously")
    finally:
        for _, c in consumers:
            c.close()
    produce_spread(topic, 1, b"after")
    c = group_consumer(group, "c")
    try:
        committed = c.committed([TopicPartition(topic, p) for p in range(PARTITIONS)], timeout=REQUEST_TIMEOUT_S)
        check_equal(sorted((tp.partition, tp.offset) for tp in committed), [(p, 10) for p in range(PARTITIONS)],
                    "committed offsets seen by a new consumer of the group")
        c.subscribe([topic])
        resumed = []
        wait_until(lambda: poll_all([("c", c)], resumed) or len(resumed) >= 4, 25 * SCALE,
                   "the 4 records after the commits", interval_s=0)
        check_equal(sorted((p, o) for _, p, o in resumed), [(p, 10) for p in range(PARTITIONS)],
                    "(partition, offset) read by the new consumer")
        step("a new consumer resumed at the committed offsets")
    finally:
        c.close()


if __name__ == "__main__":
    run_tests({"group_balance": test_group_balance})
