#!/usr/bin/python3
"""confluent-kafka 1.7.0 on librdkafka 2.0.2 (Debian python3-confluent-kafka) against SLUICE_BOOTSTRAP.

usage: /usr/bin/python3 confluent_tests.py TEST [ARG]
  produce_acks 0|1|all   produce 10 keyed records with headers, read them back from earliest
  codec gzip|snappy|lz4|zstd  produce 20 ~2 KB repetitive values compressed (fewer bytes on the wire
                         than the payload, per librdkafka's statistics), read them back
  consume_earliest       assign(OFFSET_BEGINNING) without a consumer group: offsets, keys, values, headers,
                         timestamps, null key and null value, watermarks
  offsets_for_times      ListOffsets by timestamp
  admin_create_topics    CreateTopics with partitions and configs; a second create is TOPIC_ALREADY_EXISTS
  admin_describe_configs DescribeConfigs of a topic
  admin_alter_configs    AlterConfigs then DescribeConfigs shows the new value
  admin_invalid_config   an invalid value is INVALID_CONFIG (40) in CreateTopics and AlterConfigs
  admin_create_partitions CreatePartitions from 1 to 3: the metadata lists 3, partition 2 takes records; a count
                         that is no increase is INVALID_PARTITIONS
"""
import concurrent.futures
import json
import time

from compat import (CONNECT_TIMEOUT_S, REQUEST_TIMEOUT_S, TestFailure, big_values, bootstrap, check, check_equal,
                    check_stored_codec, run_tests, step, unique_topic)
from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, ConfigResource, NewPartitions, NewTopic

COMMON = {
    "bootstrap.servers": None,  # filled in by conf()
    "socket.timeout.ms": REQUEST_TIMEOUT_S * 1000,
    "socket.connection.setup.timeout.ms": CONNECT_TIMEOUT_S * 1000,
    "api.version.request.timeout.ms": CONNECT_TIMEOUT_S * 1000,
    "reconnect.backoff.max.ms": 500,
    "log_level": 4,
}


def conf(**extra):
    c = dict(COMMON)
    c["bootstrap.servers"] = bootstrap()
    c.update(extra)
    return c


def admin():
    return AdminClient(conf(**{"client.id": "compat-confluent-admin"}))


def result(future, what):
    try:
        return future.result(timeout=REQUEST_TIMEOUT_S)
    except KafkaException as e:
        raise TestFailure("%s failed: %s" % (what, e.args[0]))
    except concurrent.futures.TimeoutError:
        raise TestFailure("%s: no result within %d s" % (what, REQUEST_TIMEOUT_S))


def create_topic(client, name, configs=None, partitions=1):
    futures = client.create_topics([NewTopic(name, num_partitions=partitions, replication_factor=1,
                                             config=configs or {})], operation_timeout=REQUEST_TIMEOUT_S,
                                   request_timeout=REQUEST_TIMEOUT_S)
    what = "CreateTopics %s%s" % (name, " %s" % configs if configs else "")
    result(futures[name], what)
    step("created topic %s%s" % (name, " %s" % configs if configs else ""))


def produce(topic, records, stats=None, **extra):
    """records: list of (key, value, headers); returns the delivery reports [(error, offset)]."""
    reports = []

    def on_delivery(err, msg):
        reports.append((err, msg.offset()))

    config = conf(**{"client.id": "compat-confluent", "message.timeout.ms": REQUEST_TIMEOUT_S * 1000,
                     "linger.ms": 20})
    if stats is not None:
        config["statistics.interval.ms"] = 100
        config["stats_cb"] = lambda s: stats.append(json.loads(s))
    config.update(extra)
    p = Producer(config)
    for k, v, h in records:
        p.produce(topic, value=v, key=k, headers=h, partition=0, on_delivery=on_delivery)
    left = p.flush(REQUEST_TIMEOUT_S + 2)
    check_equal(left, 0, "messages still undelivered after flush")
    if stats is not None:
        n = len(stats)
        deadline = time.monotonic() + 2
        while len(stats) <= n and time.monotonic() < deadline:
            p.poll(0.1)
    errors = [e for e, _ in reports if e is not None]
    check(not errors, "delivery errors: %s" % errors[:3])
    return [o for _, o in reports]


def consumer():
    # group.id is mandatory in confluent-kafka 1.7, but only assign() is used: no group protocol.
    return Consumer(conf(**{"client.id": "compat-confluent-consumer", "group.id": unique_topic("compat-unused"),
                            "enable.auto.commit": False, "enable.auto.offset.store": False,
                            "fetch.wait.max.ms": 100, "enable.partition.eof": True}))


def consume(topic, count, timeout_s=10):
    c = consumer()
    try:
        c.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
        got = []
        deadline = time.monotonic() + timeout_s
        while len(got) < count and time.monotonic() < deadline:
            msg = c.poll(0.3)
            if msg is None:
                continue
            if msg.error():
                if msg.error().code() == KafkaError._PARTITION_EOF:
                    continue
                raise AssertionError("consumer error: %s" % msg.error())
            got.append(msg)
        check(len(got) >= count, "consumed %d of %d records from %s within %d s: %r"
              % (len(got), count, topic, timeout_s, [(m.offset(), m.key()) for m in got]))
        return got
    finally:
        c.close()


def test_produce_acks(acks):
    topic = unique_topic("ck-acks-" + acks)
    create_topic(admin(), topic)
    records = [(b"key-%d" % i, b"value-%d" % i, [("h", b"%d" % i), ("src", b"confluent")]) for i in range(10)]
    offsets = produce(topic, records, acks=acks)
    if acks != "0":  # acks=0 gets no response, so no offsets
        check_equal(offsets, list(range(10)), "offsets in the delivery reports (acks=%s)" % acks)
    step("produced 10 records, acks=%s, offsets %s" % (acks, offsets))
    got = consume(topic, 10)
    check_equal([(m.offset(), m.key(), m.value(), m.headers()) for m in got],
                [(i, k, v, h) for i, (k, v, h) in enumerate(records)],
                "records read back from earliest (offset, key, value, headers)")


def test_codec(codec):
    topic = unique_topic("ck-codec-" + codec)
    create_topic(admin(), topic)
    values = big_values(20, "ck-" + codec)
    stats = []
    offsets = produce(topic, [(b"k%d" % i, v, None) for i, v in enumerate(values)], stats=stats,
                      **{"compression.codec": codec, "linger.ms": 100, "acks": "all"})
    check_equal(offsets, list(range(20)), "offsets in the delivery reports")
    payload = sum(len(v) for v in values)
    check(stats, "no statistics from librdkafka")
    sent = sum(b["txbytes"] for b in stats[-1]["brokers"].values())
    step("payload %d bytes, librdkafka sent %d bytes in all requests" % (payload, sent))
    check(sent < payload // 2, "sent %d bytes for a %d-byte payload with %s: not compressed on the wire"
          % (sent, payload, codec))
    got = consume(topic, 20)
    check_equal([(m.offset(), m.key(), m.value()) for m in got], [(i, b"k%d" % i, v) for i, v in enumerate(values)],
                "records read back (%s)" % codec)
    check_stored_codec(topic, codec)


def test_consume_earliest():
    topic = unique_topic("ck-consume")
    create_topic(admin(), topic)
    base = int(time.time() * 1000) - 10000
    p = Producer(conf(**{"client.id": "compat-confluent", "message.timeout.ms": REQUEST_TIMEOUT_S * 1000}))
    records = [(b"k0", b"v0", [("a", b"1")]), (None, b"no key", None), (b"k2", None, None),
               (b"k3", b"", [("a", b"x"), ("a", b"y"), ("n", None)])]
    for i, (k, v, h) in enumerate(records):
        p.produce(topic, value=v, key=k, headers=h, partition=0, timestamp=base + i)
    check_equal(p.flush(REQUEST_TIMEOUT_S + 2), 0, "messages still undelivered after flush")
    got = consume(topic, 4)
    check_equal([(m.offset(), m.key(), m.value(), m.headers(), m.timestamp()[1]) for m in got],
                [(i, k, v, h, base + i) for i, (k, v, h) in enumerate(records)],
                "records from OFFSET_BEGINNING (offset, key, value, headers, timestamp)")
    c = consumer()
    try:
        check_equal(c.get_watermark_offsets(TopicPartition(topic, 0), timeout=REQUEST_TIMEOUT_S), (0, 4),
                    "watermarks (low, high)")
    finally:
        c.close()


def test_offsets_for_times():
    topic = unique_topic("ck-times")
    create_topic(admin(), topic)
    base = int(time.time() * 1000) - 60000
    p = Producer(conf(**{"client.id": "compat-confluent", "message.timeout.ms": REQUEST_TIMEOUT_S * 1000}))
    for i in range(6):
        p.produce(topic, value=b"t%d" % i, partition=0, timestamp=base + 1000 * i)
    check_equal(p.flush(REQUEST_TIMEOUT_S + 2), 0, "messages still undelivered after flush")
    c = consumer()
    try:
        def lookup(ts):
            res = c.offsets_for_times([TopicPartition(topic, 0, ts)], timeout=REQUEST_TIMEOUT_S)
            check(res[0].error is None, "offsets_for_times(%d) error %s" % (ts, res[0].error))
            return res[0].offset
        check_equal(lookup(base + 2500), 3, "offsets_for_times(base+2.5 s)")
        check_equal(lookup(base), 0, "offsets_for_times(base)")
        check_equal(lookup(base + 100000), -1, "offsets_for_times(after the last record) (-1 = end)")
    finally:
        c.close()


def describe(client, topic):
    futures = client.describe_configs([ConfigResource(ConfigResource.Type.TOPIC, topic)],
                                      request_timeout=REQUEST_TIMEOUT_S)
    (_, future), = futures.items()
    entries = result(future, "DescribeConfigs %s" % topic)
    return {name: entry.value for name, entry in entries.items()}


def test_admin_create_topics():
    client = admin()
    topic = unique_topic("ck-create")
    configs = {"retention.ms": "3600000", "cleanup.policy": "delete", "max.message.bytes": "2000000"}
    create_topic(client, topic, configs, partitions=3)
    md = client.list_topics(topic, timeout=REQUEST_TIMEOUT_S)
    check(topic in md.topics and md.topics[topic].error is None, "metadata of %s: %r" % (topic, md.topics))
    check_equal(sorted(md.topics[topic].partitions), [0, 1, 2], "partitions in the metadata")
    values = describe(client, topic)
    for k, v in configs.items():
        check_equal(values.get(k), v, "config %s of the created topic" % k)
    futures = client.create_topics([NewTopic(topic, num_partitions=1, replication_factor=1)],
                                   request_timeout=REQUEST_TIMEOUT_S)
    try:
        futures[topic].result(timeout=REQUEST_TIMEOUT_S)
        raise AssertionError("creating %s twice succeeded" % topic)
    except KafkaException as e:
        check_equal(e.args[0].code(), KafkaError.TOPIC_ALREADY_EXISTS, "error of the second create")


def test_admin_describe_configs():
    client = admin()
    topic = unique_topic("ck-describe")
    create_topic(client, topic, {"retention.ms": "123456"})
    values = describe(client, topic)
    check_equal(values.get("retention.ms"), "123456", "retention.ms (set at creation)")
    check_equal(values.get("cleanup.policy"), "delete", "cleanup.policy (default)")
    check("segment.bytes" in values, "segment.bytes missing from the configs: %s" % sorted(values))


def test_admin_alter_configs():
    client = admin()
    topic = unique_topic("ck-alter")
    create_topic(client, topic, {"retention.ms": "3600000"})
    futures = client.alter_configs([ConfigResource(ConfigResource.Type.TOPIC, topic,
                                                   set_config={"retention.ms": "7200000",
                                                               "segment.bytes": "1048576"})],
                                   request_timeout=REQUEST_TIMEOUT_S)
    for f in futures.values():
        result(f, "AlterConfigs %s" % topic)
    values = describe(client, topic)
    check_equal((values.get("retention.ms"), values.get("segment.bytes")), ("7200000", "1048576"),
                "retention.ms, segment.bytes after AlterConfigs")


def test_admin_invalid_config():
    client = admin()
    topic = unique_topic("ck-invalid")
    futures = client.create_topics([NewTopic(topic, num_partitions=1, replication_factor=1,
                                             config={"retention.ms": "not-a-number"})],
                                   request_timeout=REQUEST_TIMEOUT_S)
    try:
        futures[topic].result(timeout=REQUEST_TIMEOUT_S)
        raise AssertionError("CreateTopics with retention.ms=not-a-number succeeded")
    except KafkaException as e:
        check_equal(e.args[0].code(), KafkaError.INVALID_CONFIG, "CreateTopics retention.ms=not-a-number error")
    md = client.list_topics(timeout=REQUEST_TIMEOUT_S)
    check(topic not in md.topics, "the rejected topic %s was created anyway" % topic)
    create_topic(client, topic, {"cleanup.policy": "delete"})
    futures = client.alter_configs([ConfigResource(ConfigResource.Type.TOPIC, topic,
                                                   set_config={"cleanup.policy": "bogus"})],
                                   request_timeout=REQUEST_TIMEOUT_S)
    for f in futures.values():
        try:
            f.result(timeout=REQUEST_TIMEOUT_S)
            raise AssertionError("AlterConfigs cleanup.policy=bogus succeeded")
        except KafkaException as e:
            check_equal(e.args[0].code(), KafkaError.INVALID_CONFIG, "AlterConfigs cleanup.policy=bogus error")
    check_equal(describe(client, topic).get("cleanup.policy"), "delete", "cleanup.policy after the rejected alter")


def test_admin_create_partitions():
    client = admin()
    topic = unique_topic("ck-partitions")
    create_topic(client, topic)
    step("CreatePartitions %s to 3" % topic)
    futures = client.create_partitions([NewPartitions(topic, 3)], operation_timeout=REQUEST_TIMEOUT_S,
                                       request_timeout=REQUEST_TIMEOUT_S)
    result(futures[topic], "CreatePartitions %s" % topic)
    md = client.list_topics(topic, timeout=REQUEST_TIMEOUT_S)
    check_equal(sorted(md.topics[topic].partitions), [0, 1, 2], "partitions in the metadata")
    producer = Producer(conf(**{"client.id": "compat-confluent-partitions", "acks": "all"}))
    reports = []
    producer.produce(topic, value=b"in-partition-2", partition=2, on_delivery=lambda err, msg: reports.append(err))
    check_equal(producer.flush(REQUEST_TIMEOUT_S), 0, "messages still queued")
    check_equal(reports, [None], "the delivery report of the produce to partition 2")
    consumer = Consumer(conf(**{"group.id": unique_topic("ck-partitions-reader"), "enable.auto.commit": False}))
    consumer.assign([TopicPartition(topic, 2, OFFSET_BEGINNING)])
    msg = consumer.poll(REQUEST_TIMEOUT_S)
    consumer.close()
    check(msg is not None and msg.error() is None, "no record read from partition 2: %r" % msg)
    check_equal(msg.value(), b"in-partition-2", "the record in partition 2")
    futures = client.create_partitions([NewPartitions(topic, 2)], request_timeout=REQUEST_TIMEOUT_S)
    try:
        futures[topic].result(timeout=REQUEST_TIMEOUT_S)
        raise AssertionError("shrinking %s to 2 partitions succeeded" % topic)
    except KafkaException as e:
        check_equal(e.args[0].code(), KafkaError.INVALID_PARTITIONS, "error of a count that is no increase")


if __name__ == "__main__":
    run_tests({
        "produce_acks": test_produce_acks,
        "codec": test_codec,
        "consume_earliest": test_consume_earliest,
        "offsets_for_times": test_offsets_for_times,
        "admin_create_topics": test_admin_create_topics,
        "admin_describe_configs": test_admin_describe_configs,
        "admin_alter_configs": test_admin_alter_configs,
        "admin_invalid_config": test_admin_invalid_config,
        "admin_create_partitions": test_admin_create_partitions,
    })
