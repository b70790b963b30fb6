#!/usr/bin/python3
"""kafka-python 2.0.2 (Debian python3-kafka) against the broker at SLUICE_BOOTSTRAP.

usage: /usr/bin/python3 kafka_python_tests.py TEST [ARG]
  produce_acks 0|1|all   produce 10 keyed records with headers, read them back from earliest
  codec gzip|snappy|lz4|zstd  produce 20 ~2 KB repetitive values compressed, read them back
  consume_from_offset    assign + seek to an offset, get exactly the records from there
  offsets_for_times      ListOffsets by timestamp, earliest and latest
  admin_create_topics    CreateTopics with partitions and configs; a second create is TOPIC_ALREADY_EXISTS
  admin_describe_configs DescribeConfigs: all keys, one key, an unknown topic
  admin_alter_configs    AlterConfigs then DescribeConfigs shows the new value
  admin_invalid_config   an invalid value is INVALID_CONFIG (40) in CreateTopics and AlterConfigs
"""
import time

from compat import (CONNECT_TIMEOUT_S, REQUEST_TIMEOUT_S, big_values, bootstrap, check, check_equal,
                    check_stored_codec, run_tests, step, unique_topic)
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import ConfigResource, ConfigResourceType, NewTopic
from kafka.errors import InvalidConfigurationError, TopicAlreadyExistsError

COMMON = dict(api_version_auto_timeout_ms=CONNECT_TIMEOUT_S * 1000, request_timeout_ms=REQUEST_TIMEOUT_S * 1000,
              reconnect_backoff_max_ms=500)


def admin():
    return KafkaAdminClient(bootstrap_servers=bootstrap(), client_id="compat-kafka-python-admin", **COMMON)


def create_topic(name, configs=None, partitions=1):
    client = admin()
    try:
        client.create_topics([NewTopic(name, partitions, 1, topic_configs=configs or {})])
    finally:
        client.close()
    step("created topic %s%s" % (name, " %s" % configs if configs else ""))


def producer(**kwargs):
    config = dict(COMMON, bootstrap_servers=bootstrap(), client_id="compat-kafka-python", max_block_ms=5000,
                  linger_ms=20)
    config.update(kwargs)
    return KafkaProducer(**config)


def consumer():
    return KafkaConsumer(bootstrap_servers=bootstrap(), client_id="compat-kafka-python-consumer", group_id=None,
                         enable_auto_commit=False, auto_offset_reset="earliest", session_timeout_ms=6000,
                         heartbeat_interval_ms=2000, fetch_max_wait_ms=200, **COMMON)


def consume(topic, count, start=None, timeout_s=10):
    """Reads partition 0 from `start` (None = earliest) until `count` records; fails on fewer."""
    c = consumer()
    try:
        tp = TopicPartition(topic, 0)
        c.assign([tp])
        if start is None:
            c.seek_to_beginning(tp)
        else:
            c.seek(tp, start)
        got = []
        deadline = time.monotonic() + timeout_s
        while len(got) < count and time.monotonic() < deadline:
            for records in c.poll(timeout_ms=300).values():
                got.extend(records)
        check(len(got) >= count, "consumed %d of %d records from %s within %d s: %r"
              % (len(got), count, topic, timeout_s, [(r.offset, r.key, r.value[:20] if r.value else r.value)
                                                  for r in got]))
        return got
    finally:
        c.close()


def produce_records(p, topic, records):
    """records: list of (key, value, headers); returns the offsets from the acks."""
    futures = [p.send(topic, key=k, value=v, headers=h, partition=0) for k, v, h in records]
    p.flush(timeout=REQUEST_TIMEOUT_S)
    return [f.get(timeout=REQUEST_TIMEOUT_S).offset for f in futures]


def summary(records):
    return [(r.offset, r.key, r.value, list(r.headers)) for r in records]


def test_produce_acks(acks):
    acks_value = {"0": 0, "1": 1, "all": "all"}[acks]
    topic = unique_topic("kp-acks-" + acks)
    create_topic(topic)
    records = [(b"key-%d" % i, b"value-%d" % i, [("h", b"%d" % i), ("src", b"kafka-python")]) for i in range(10)]
    p = producer(acks=acks_value)
    try:
        offsets = produce_records(p, topic, records)
    finally:
        p.close(timeout=5)
    if acks_value != 0:  # acks=0 has no response, so no offsets (kafka-python reports -1)
        check_equal(offsets, list(range(10)), "offsets in the acks (acks=%s)" % acks)
    step("produced 10 records, acks=%s, offsets %s" % (acks, offsets))
    got = consume(topic, 10)
    check_equal(summary(got), [(i, k, v, h) for i, (k, v, h) in enumerate(records)],
                "records read back from earliest (offset, key, value, headers)")


def test_codec(codec):
    topic = unique_topic("kp-codec-" + codec)
    create_topic(topic)
    values = big_values(20, "kp-" + codec)
    p = producer(acks="all", compression_type=codec, batch_size=1 << 20, linger_ms=100)
    try:
        offsets = produce_records(p, topic, [(b"k%d" % i, v, []) for i, v in enumerate(values)])
    finally:
        p.close(timeout=5)
    check_equal(offsets, list(range(20)), "offsets in the acks")
    got = consume(topic, 20)
    check_equal([(r.offset, r.key, r.value) for r in got], [(i, b"k%d" % i, v) for i, v in enumerate(values)],
                "records read back (%s)" % codec)
    check_stored_codec(topic, codec)


def test_consume_from_offset():
    topic = unique_topic("kp-seek")
    create_topic(topic)
    p = producer(acks="all")
    try:
        produce_records(p, topic, [(b"k%d" % i, b"v%d" % i, []) for i in range(10)])
    finally:
        p.close(timeout=5)
    for start in (6, 0, 9):
        got = consume(topic, 10 - start, start=start)
        check_equal([(r.offset, r.value) for r in got], [(i, b"v%d" % i) for i in range(start, 10)],
                    "records after seek(%d)" % start)
        step("seek(%d) read offsets %d..9" % (start, start))


def test_offsets_for_times():
    topic = unique_topic("kp-times")
    create_topic(topic)
    base = int(time.time() * 1000) - 60000
    p = producer(acks="all")
    try:
        futures = [p.send(topic, value=b"t%d" % i, partition=0, timestamp_ms=base + 1000 * i) for i in range(6)]
        p.flush(timeout=REQUEST_TIMEOUT_S)
        for f in futures:
            f.get(timeout=REQUEST_TIMEOUT_S)
    finally:
        p.close(timeout=5)
    c = consumer()
    try:
        tp = TopicPartition(topic, 0)
        check_equal(c.beginning_offsets([tp]), {tp: 0}, "beginning_offsets")
        check_equal(c.end_offsets([tp]), {tp: 6}, "end_offsets")
        hit = c.offsets_for_times({tp: base + 2500})[tp]
        check(hit is not None, "offsets_for_times(base+2.5 s) found nothing")
        check_equal((hit.offset, hit.timestamp), (3, base + 3000), "offsets_for_times(base+2.5 s)")
        hit = c.offsets_for_times({tp: base})[tp]
        check_equal((hit.offset, hit.timestamp), (0, base), "offsets_for_times(base)")
        check_equal(c.offsets_for_times({tp: base + 100000})[tp], None, "offsets_for_times(after the last record)")
    finally:
        c.close()


def describe(client, topic, keys=None):
    """-> (error_code, {name: value}) for one topic resource."""
    responses = client.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic,
                                                        configs={k: None for k in keys} if keys else None)])
    resources = [r for resp in responses for r in resp.resources]
    check_equal(len(resources), 1, "number of resources in the DescribeConfigs response")
    error_code, _message, _type, name, entries = resources[0][:5]
    check_equal(name, topic, "resource name in the DescribeConfigs response")
    return error_code, {e[0]: e[1] for e in entries}


def test_admin_create_topics():
    topic = unique_topic("kp-create")
    configs = {"retention.ms": "3600000", "cleanup.policy": "delete", "max.message.bytes": "2000000"}
    client = admin()
    try:
        client.create_topics([NewTopic(topic, 3, 1, topic_configs=configs)])
        check(topic in client.list_topics(), "created topic missing from list_topics()")
        described = client.describe_topics([topic])
        check_equal(len(described), 1, "describe_topics result count")
        check_equal(described[0]["error_code"], 0, "describe_topics error")
        check_equal(sorted(p["partition"] for p in described[0]["partitions"]), [0, 1, 2], "partitions")
        error, values = describe(client, topic)
        check_equal(error, 0, "DescribeConfigs error code")
        for k, v in configs.items():
            check_equal(values.get(k), v, "config %s of the created topic" % k)
        try:
            client.create_topics([NewTopic(topic, 1, 1)])
            raise AssertionError("creating %s twice succeeded" % topic)
        except TopicAlreadyExistsError:
            step("second create: TOPIC_ALREADY_EXISTS (36)")
    finally:
        client.close()


def test_admin_describe_configs():
    topic = unique_topic("kp-describe")
    client = admin()
    try:
        client.create_topics([NewTopic(topic, 1, 1, topic_configs={"retention.ms": "123456"})])
        error, values = describe(client, topic)
        check_equal(error, 0, "DescribeConfigs error code")
        check_equal(values.get("retention.ms"), "123456", "retention.ms (set at creation)")
        check_equal(values.get("cleanup.policy"), "delete", "cleanup.policy (default)")
        check("segment.bytes" in values, "segment.bytes missing from all configs: %s" % sorted(values))
        error, values = describe(client, topic, keys=["retention.ms"])
        check_equal((error, values), (0, {"retention.ms": "123456"}), "DescribeConfigs of one key")
        error, _ = describe(client, unique_topic("kp-no-such-topic"))
        check_equal(error, 3, "DescribeConfigs of an unknown topic (UNKNOWN_TOPIC_OR_PARTITION)")
    finally:
        client.close()


def test_admin_alter_configs():
    topic = unique_topic("kp-alter")
    client = admin()
    try:
        client.create_topics([NewTopic(topic, 1, 1, topic_configs={"retention.ms": "3600000"})])
        resp = client.alter_configs([ConfigResource(ConfigResourceType.TOPIC, topic,
                                                    configs={"retention.ms": "7200000",
                                                             "segment.bytes": "1048576"})])
        check_equal([(r[0], r[3]) for r in resp.resources], [(0, topic)], "AlterConfigs result (error, name)")
        error, values = describe(client, topic)
        check_equal((error, values.get("retention.ms"), values.get("segment.bytes")), (0, "7200000", "1048576"),
                    "DescribeConfigs after AlterConfigs (error, retention.ms, segment.bytes)")
    finally:
        client.close()


def test_admin_invalid_config():
    topic = unique_topic("kp-invalid")
    client = admin()
    try:
        try:
            client.create_topics([NewTopic(topic, 1, 1, topic_configs={"retention.ms": "not-a-number"})])
            raise AssertionError("CreateTopics with retention.ms=not-a-number succeeded")
        except InvalidConfigurationError as e:
            step("CreateTopics retention.ms=not-a-number: %s" % e.__class__.__name__)
        check(topic not in client.list_topics(), "the rejected topic %s was created anyway" % topic)
        client.create_topics([NewTopic(topic, 1, 1, topic_configs={"cleanup.policy": "delete"})])
        resp = client.alter_configs([ConfigResource(ConfigResourceType.TOPIC, topic,
                                                    configs={"cleanup.policy": "bogus"})])
        check_equal([r[0] for r in resp.resources], [40], "AlterConfigs cleanup.policy=bogus error (INVALID_CONFIG)")
        error, values = describe(client, topic)
        check_equal(values.get("cleanup.policy"), "delete", "cleanup.policy after the rejected alter")
    finally:
        client.close()


if __name__ == "__main__":
    run_tests({
        "produce_acks": test_produce_acks,
        "codec": test_codec,
        "consume_from_offset": test_consume_from_offset,
        "offsets_for_times": test_offsets_for_times,
        "admin_create_topics": test_admin_create_topics,
        "admin_describe_configs": test_admin_describe_configs,
        "admin_alter_configs": test_admin_alter_configs,
        "admin_invalid_config": test_admin_invalid_config,
    })
