#!/usr/bin/python3
"""Storage behaviour seen through a real client (kafka-python 2.0.2).

usage: /usr/bin/python3 storage_tests.py TEST
  compaction        cleanup.policy=compact, segment.ms=100, min.cleanable.dirty.ratio=0.01,
                    delete.retention.ms=100: keyed updates and tombstones, then (producing a new key every
                    ~0.5 s so segments roll and the cleaner has dirty data) a read from earliest shows exactly
                    the latest record per key, at its original offset, within 30 s
  retention         retention.ms=1000: within 20 s ListOffsets earliest moves past the first batch, a fetch
                    of offset 0 gets OFFSET_OUT_OF_RANGE, and the next produce gets the next offset (no reuse)
  process_crash_durability_sigkill  durability=persisted: 50 records acked with acks=all, SIGKILL right
                    after the acks, restart on the same data dir (a broker of the test's own): all 50 read back.
                    Process-crash durability only: SIGKILL leaves the kernel's page cache, so writes the
                    broker never synced survive it too. Power-loss durability (what persisted's syncs are for)
                    is proven in the simulator, whose disk drops what was not synced
                    (scenarios/crash_loop_persisted.toml, power_loss_torn_tail.toml, cluster_power_loss.toml)
  topic_compression compression.type=zstd: kafka-python produces one uncompressed and one gzip batch; the
                    topic's batches on disk (SLUICE_DATA_DIR) are all zstd, and the records read back exact
                    through confluent-kafka (kafka-python 2.0.2 always fetches at v4, and Kafka, like Sluice,
                    answers a fetch below v10 from a zstd topic with UNSUPPORTED_COMPRESSION_TYPE)
"""
import os
import time

from compat import (CONNECT_TIMEOUT_S, REQUEST_TIMEOUT_S, Broker, big_values, bootstrap, check, check_equal,
                    run_tests, step, stored_codecs, unique_topic)
from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError
from confluent_kafka import TopicPartition as ConfluentTopicPartition
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import ConfigResource, ConfigResourceType, NewTopic
from kafka.errors import OffsetOutOfRangeError

COMMON = dict(api_version_auto_timeout_ms=CONNECT_TIMEOUT_S * 1000, request_timeout_ms=REQUEST_TIMEOUT_S * 1000,
              reconnect_backoff_max_ms=500)


def create_topic(server, name, configs):
    client = KafkaAdminClient(bootstrap_servers=server, client_id="compat-storage-admin", **COMMON)
    try:
        client.create_topics([NewTopic(name, 1, 1, topic_configs=configs)])
    finally:
        client.close()
    step("created topic %s %s" % (name, configs))


def producer(server, **options):
    settings = dict(COMMON, client_id="compat-storage", acks="all", linger_ms=0, max_block_ms=5000)
    settings.update(options)
    return KafkaProducer(bootstrap_servers=server, **settings)


def consumer(server, reset="earliest"):
    return KafkaConsumer(bootstrap_servers=server, client_id="compat-storage-consumer", group_id=None,
                         enable_auto_commit=False, auto_offset_reset=reset, session_timeout_ms=6000,
                         heartbeat_interval_ms=2000, fetch_max_wait_ms=200, **COMMON)


def send(p, topic, key, value):
    return p.send(topic, key=key, value=value, partition=0).get(timeout=REQUEST_TIMEOUT_S).offset


def read_all(c, tp, timeout_s=10):
    """Everything from the earliest offset up to the end offset, as {offset: (key, value)}."""
    end = c.end_offsets([tp])[tp]
    c.seek_to_beginning(tp)
    got = {}
    deadline = time.monotonic() + timeout_s
    while c.position(tp) < end:
        check(time.monotonic() < deadline, "reading up to offset %d took over %d s (position %d)"
              % (end, timeout_s, c.position(tp)))
        for records in c.poll(timeout_ms=300).values():
            for r in records:
                got[r.offset] = (r.key, r.value)
    return got


def read_all_librdkafka(server, topic, count, timeout_s=10):
    """Offsets 0 to count - 1 of partition 0 through confluent-kafka (librdkafka fetches at v11), as
    {offset: (key, value)}."""
    c = Consumer({"bootstrap.servers": server, "client.id": "compat-storage-librdkafka",
                  "group.id": unique_topic("compat-unused"), "enable.auto.commit": False,
                  "enable.partition.eof": True, "fetch.wait.max.ms": 100, "log_level": 4})
    try:
        c.assign([ConfluentTopicPartition(topic, 0, OFFSET_BEGINNING)])
        got = {}
        deadline = time.monotonic() + timeout_s
        while len(got) < count:
            check(time.monotonic() < deadline, "read %d of %d records within %d s" % (len(got), count, timeout_s))
            msg = c.poll(0.3)
            if msg is None or (msg.error() and msg.error().code() == KafkaError._PARTITION_EOF):
                continue
            check(not msg.error(), "consumer error: %s" % msg.error())
            got[msg.offset()] = (msg.key(), msg.value())
        return got
    finally:
        c.close()


def test_compaction():
    server = bootstrap()
    topic = unique_topic("st-compact")
    create_topic(server, topic, {"cleanup.policy": "compact", "segment.ms": "100",
                                 "min.cleanable.dirty.ratio": "0.01", "delete.retention.ms": "100"})
    p = producer(server)
    produced = {}  # offset -> (key, value)
    latest = {}  # key -> offset
    rounds = [[(b"a", b"a0"), (b"b", b"b0"), (b"c", b"c0"), (b"d", b"d0"), (b"e", b"e0")],
              [(b"a", b"a1"), (b"b", b"b1"), (b"c", b"c1")],
              [(b"a", b"a2"), (b"b", None), (b"d", None)],
              [(b"c", b"c3")]]
    try:
        for records in rounds:
            for k, v in records:
                off = send(p, topic, k, v)
                produced[off] = (k, v)
                latest[k] = off
            time.sleep(0.15)  # > segment.ms: the next append rolls a new segment
        check_equal(sorted(produced), list(range(12)), "offsets of the 12 acked records")
        tombstones = {off for k, off in latest.items() if produced[off][1] is None}
        live = {off for off in latest.values()} - tombstones
        step("produced offsets 0-11; survivors expected at %s, tombstones (may stay or go) at %s"
             % (sorted(live), sorted(tombstones)))
        c = consumer(server)
        tp = TopicPartition(topic, 0)
        c.assign([tp])
        deadline = time.monotonic() + 30
        tick = 0
        while True:
            off = send(p, topic, b"tick-%d" % tick, b"t")  # new key: rolls a segment, adds dirty data
            produced[off] = (b"tick-%d" % tick, b"t")
            tick += 1
            got = read_all(c, tp)
            for o, kv in got.items():
                check(produced.get(o) == kv, "offset %d reads %r but %r was produced there: offsets moved"
                      % (o, kv, produced.get(o)))
            ticks = {o for o, (k, _) in produced.items() if k.startswith(b"tick-")}
            missing = (live | ticks) - set(got)
            extra = set(got) - live - ticks - tombstones
            if not missing and not extra:
                break
            if time.monotonic() > deadline:
                raise AssertionError("not compacted within 30 s: expected offsets %s (+ tombstones %s, + %d "
                                     "ticks), read %s; missing %s, not yet removed %s"
                                     % (sorted(live), sorted(tombstones), len(ticks), sorted(got), sorted(missing),
                                        sorted(extra)))
            time.sleep(0.5)
        c.close()
        kept = sorted(tombstones & set(got))
        step("compacted after %d ticks: %s%s" % (tick, sorted(o for o in got if o < 12),
                                                  ", tombstones still present: %s" % kept if kept else ""))
    finally:
        p.close(timeout=5)


def test_retention():
    server = bootstrap()
    topic = unique_topic("st-retention")
    create_topic(server, topic, {"retention.ms": "1000", "segment.ms": "100"})
    p = producer(server)
    try:
        offsets = [send(p, topic, None, b"old-%d" % i) for i in range(5)]
        time.sleep(0.2)
        offsets += [send(p, topic, None, b"old-%d" % i) for i in range(5, 10)]
        check_equal(offsets, list(range(10)), "offsets of the 10 acked records")
        started = time.monotonic()
        c = consumer(server)
        tp = TopicPartition(topic, 0)
        c.assign([tp])
        deadline = started + 20
        while True:
            earliest = c.beginning_offsets([tp])[tp]
            if earliest >= 5:
                break
            check(time.monotonic() < deadline, "ListOffsets earliest still %d 20 s after producing "
                  "(retention.ms=1000)" % earliest)
            time.sleep(0.5)
        step("earliest offset %d after %.1f s" % (earliest, time.monotonic() - started))
        check_equal(c.end_offsets([tp])[tp], 10, "end offset after retention")
        c.close()

        c = consumer(server, reset="none")
        c.assign([tp])
        c.seek(tp, 0)
        deadline = time.monotonic() + 10
        try:
            while time.monotonic() < deadline:
                records = c.poll(timeout_ms=300)
                check(not records, "fetch of offset 0 returned records: %r" % records)
            raise AssertionError("fetch of offset 0 (below the log start %d) got no OFFSET_OUT_OF_RANGE "
                                 "within 10 s" % earliest)
        except OffsetOutOfRangeError as e:
            step("fetch of offset 0: %s" % e.__class__.__name__)
        finally:
            c.close()
        check_equal(send(p, topic, None, b"new"), 10, "offset of a record produced after retention")
    finally:
        p.close(timeout=5)


def test_process_crash_durability_sigkill():
    # A process crash, not a power loss: the page cache outlives SIGKILL, so this passes even for a broker that
    # never calls fdatasync. It proves the acked records reach the kernel before the ack and that recovery reads
    # them back; that they reach the disk is the simulator's to prove (its SimDisk loses un-synced writes at a
    # power loss: scenarios/crash_loop_persisted.toml, power_loss_torn_tail.toml, cluster_power_loss.toml).
    count = 50
    with Broker() as broker:
        broker.start()
        step("own broker on %s, data dir %s" % (broker.bootstrap, broker.data_dir))
        topic = unique_topic("st-durable")
        create_topic(broker.bootstrap, topic, {"durability": "persisted"})
        p = producer(broker.bootstrap)
        futures = [p.send(topic, key=b"k%d" % i, value=b"persisted value %d" % i, partition=0)
                   for i in range(count)]
        offsets = [f.get(timeout=REQUEST_TIMEOUT_S).offset for f in futures]
        broker.kill()  # right after the last ack
        step("SIGKILL after %d acks (acks=all)" % count)
        p.close(timeout=0)
        check_equal(offsets, list(range(count)), "acked offsets")
        broker.start()
        step("restarted on the same data dir, now %s" % broker.bootstrap)
        c = consumer(broker.bootstrap)
        try:
            tp = TopicPartition(topic, 0)
            c.assign([tp])
            got = read_all(c, tp)
            check_equal(got, {i: (b"k%d" % i, b"persisted value %d" % i) for i in range(count)},
                        "records after SIGKILL and restart")
        finally:
            c.close()
        broker.stop()


def described_config(server, topic, name):
    client = KafkaAdminClient(bootstrap_servers=server, client_id="compat-storage-admin", **COMMON)
    try:
        responses = client.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic, configs={name: None})])
    finally:
        client.close()
    entries = {entry[0]: entry[1] for response in responses for resource in response.resources
               for entry in resource[4]}
    return entries.get(name)


def test_topic_compression():
    server = bootstrap()
    topic = unique_topic("st-zstd")
    create_topic(server, topic, {"compression.type": "zstd"})
    check_equal(described_config(server, topic, "compression.type"), "zstd", "described compression.type")
    values = big_values(10, "st-zstd")
    sent = []
    for codec in (None, "gzip"):  # the broker re-encodes both in zstd
        p = producer(server, compression_type=codec, batch_size=1 << 20, linger_ms=100)
        try:
            futures = [p.send(topic, key=b"%s-%d" % ((codec or "none").encode(), i), value=v, partition=0)
                       for i, v in enumerate(values)]
            offsets = [f.get(timeout=REQUEST_TIMEOUT_S).offset for f in futures]
        finally:
            p.close(timeout=5)
        check_equal(offsets, list(range(len(sent), len(sent) + len(values))), "acked offsets (%s)" % codec)
        sent += [(b"%s-%d" % ((codec or "none").encode(), i), v) for i, v in enumerate(values)]
        step("produced %d records %s" % (len(values), "uncompressed" if codec is None else "with " + codec))
    got = read_all_librdkafka(server, topic, len(sent))
    check_equal(got, dict(enumerate(sent)), "records read back from the zstd topic")
    # A check that finds nothing to look at fails: run.sh always sets SLUICE_DATA_DIR.
    check(bool(os.environ.get("SLUICE_DATA_DIR")), "SLUICE_DATA_DIR is not set: the on-disk codec check cannot run")
    stored = stored_codecs(topic)
    check(stored is not None, "no segment of %s under SLUICE_DATA_DIR %s" % (topic, os.environ["SLUICE_DATA_DIR"]))
    check_equal(sorted(stored), [4], "codecs of the stored batches (4 = zstd)")
    step("on disk: every batch is zstd")


if __name__ == "__main__":
    run_tests({
        "compaction": test_compaction,
        "retention": test_retention,
        "process_crash_durability_sigkill": test_process_crash_durability_sigkill,
        "topic_compression": test_topic_compression,
    })
