#!/usr/bin/python3
"""confluent-kafka 1.7.0 (librdkafka 2.0.2) consumer groups against SLUICE_BOOTSTRAP (JoinGroup v5 with
MEMBER_ID_REQUIRED, SyncGroup/Heartbeat v3, OffsetCommit v7, OffsetFetch v7 flexible).

usage: /usr/bin/python3 confluent_group_tests.py TEST
  group_balance   two Consumers subscribed in one group on a 4-partition topic: two partitions each, disjoint;
                  40 records read once each, each by the member owning its partition; synchronous commit;
                  both close; a new consumer of the group sees the committed offsets and reads only the 4
                  records produced after them
  group_static_restart  two static members (group.instance.id) share a 4-partition topic; one is closed (a static
                  member sends no LeaveGroup) and a new process with its instance id takes its place under a new
                  member id: it gets the same two partitions back and the other member is not rebalanced
"""
import time

from compat import REQUEST_TIMEOUT_S, SCALE, check, check_equal, run_tests, step, unique_topic, wait_until
from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition
from confluent_tests import admin, conf, create_topic

PARTITIONS = 4


def group_consumer(group, name, **extra):
    # Kafka's group.min.session.timeout.ms is 6000; the rebalance waits max.poll.interval.ms for each member.
    settings = {"client.id": "compat-ck-%s" % name, "group.id": group, "session.timeout.ms": 6000,
                "heartbeat.interval.ms": 1000, "max.poll.interval.ms": 10000 * SCALE,
                "enable.auto.commit": False, "auto.offset.reset": "earliest",
                "fetch.wait.max.ms": 100, "topic.metadata.refresh.interval.ms": 1000}
    settings.update(extra)
    return Consumer(conf(**settings))


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


def member_ids(group):
    listed = admin().list_groups(group, timeout=REQUEST_TIMEOUT_S)
    check_equal(len(listed), 1, "groups listed for %s" % group)
    return sorted(m.id for m in listed[0].members)


def test_group_static_restart():
    topic, group = unique_topic("ck-static"), unique_topic("ck-static-group")
    create_topic(admin(), topic, partitions=PARTITIONS)
    revoked_b = []

    def static_consumer(instance, on_revoke=None):
        c = group_consumer(group, instance, **{"group.instance.id": instance, "session.timeout.ms": 30000,
                                                "max.poll.interval.ms": 30000 * SCALE})
        if on_revoke is None:
            c.subscribe([topic])
        else:
            c.subscribe([topic], on_revoke=on_revoke)
        return c

    a = static_consumer("inst-a")
    b = static_consumer("inst-b", on_revoke=lambda consumer, parts: revoked_b.append(len(parts)))
    a2 = None
    try:
        consumers = [("a", a), ("b", b)]
        got = wait_until(lambda: poll_all(consumers, []) or (assignments(consumers)
                         if [len(x) for x in assignments(consumers)] == [2, 2] else None),
                         30 * SCALE, "two partitions for each static member", interval_s=0)
        before = member_ids(group)
        check_equal(len(before), 2, "members before the restart")
        revokes_before = len(revoked_b)
        step("balanced: a has %s, b has %s; members %s" % (sorted(got[0]), sorted(got[1]), before))
        a.close()  # a static member leaves no LeaveGroup behind: its place is kept for its session (30 s)
        a = None
        a2 = static_consumer("inst-a")
        wait_until(lambda: poll_all([("a2", a2), ("b", b)], []) or {tp.partition for tp in a2.assignment()} == got[0],
                   15 * SCALE, "the restarted instance holding its old partitions %s" % sorted(got[0]), interval_s=0)
        after = member_ids(group)
        check_equal(len(after), 2, "members after the restart (%s)" % after)
        check(len(set(after) - set(before)) == 1, "one new member id in place of the old one: %s -> %s"
              % (before, after))
        deadline = time.monotonic() + 3  # a rebalance of b would show within a few heartbeats
        while time.monotonic() < deadline:
            poll_all([("a2", a2), ("b", b)], [])
        check_equal(len(revoked_b), revokes_before, "rebalances seen by the other member")
        check_equal({tp.partition for tp in b.assignment()}, got[1], "the other member's partitions")
        step("the restarted instance took its place and partitions without a rebalance")
    finally:
        for c in (a, b, a2):
            if c is not None:
                c.close()


if __name__ == "__main__":
    run_tests({"group_balance": test_group_balance, "group_static_restart": test_group_static_restart})
