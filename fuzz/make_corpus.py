#!/usr/bin/python3
"""Writes fuzz/corpus/: request frame payloads (header + body, no size prefix) as kafka-python 2.0.2 encodes them,
one small binary file per API and version that both kafka-python and Sluice know. Run with Debian's python3 (it has
python3-kafka) from the repository root:  /usr/bin/python3 fuzz/make_corpus.py
The flexible versions kafka-python cannot encode are seeded by fuzz/seed_corpus.cc from our own encoders."""

import os
import sys

from kafka.protocol import admin, commit, fetch, group, metadata, offset, produce
from kafka.protocol.parser import KafkaProtocol
from kafka.record.default_records import DefaultRecordBatchBuilder

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def record_batch(compression):
    builder = DefaultRecordBatchBuilder(magic=2, compression_type=compression, is_transactional=0, producer_id=-1,
                                        producer_epoch=-1, base_sequence=-1, batch_size=1 << 20)
    builder.append(0, timestamp=1700000000000, key=b"k1", value=b"hello", headers=[("h", b"v")])
    builder.append(1, timestamp=1700000000001, key=None, value=b"world", headers=[])
    return bytes(builder.build())


def requests():
    batch, gzip_batch = record_batch(0), record_batch(1)
    yield "ApiVersions", 0, admin.ApiVersionRequest[0]()
    yield "ApiVersions", 2, admin.ApiVersionRequest[2]()
    yield "Metadata", 0, metadata.MetadataRequest[0](topics=[])
    yield "Metadata", 1, metadata.MetadataRequest[1](topics=None)
    yield "Metadata", 5, metadata.MetadataRequest[5](topics=["orders", "users"], allow_auto_topic_creation=False)
    for v in (3, 7, 8):
        yield "Produce", v, produce.ProduceRequest[v](transactional_id=None, required_acks=-1, timeout=30000,
                                                     topics=[("orders", [(0, batch), (1, gzip_batch)])])
    yield "Fetch", 4, fetch.FetchRequest[4](-1, 500, 1, 52428800, 0, [("orders", [(0, 0, 1048576)])])
    yield "Fetch", 11, fetch.FetchRequest[11](-1, 500, 1, 52428800, 1, 0, -1, [("orders", [(0, -1, 5, 0, 1048576)])],
                                              [], "rack-a")
    yield "ListOffsets", 1, offset.OffsetRequest[1](-1, [("orders", [(0, -1)])])
    yield "ListOffsets", 5, offset.OffsetRequest[5](-1, 1, [("orders", [(0, -1, -2), (1, 3, 1700000000000)])])
    yield "OffsetCommit", 2, commit.OffsetCommitRequest[2]("g1", 3, "m-1", -1, [("orders", [(0, 42, "meta")])])
    yield "OffsetFetch", 1, commit.OffsetFetchRequest[1]("g1", [("orders", [0, 1])])
    yield "OffsetFetch", 3, commit.OffsetFetchRequest[3]("g1", None)
    yield "FindCoordinator", 0, commit.GroupCoordinatorRequest[0]("g1")
    yield "FindCoordinator", 1, commit.GroupCoordinatorRequest[1]("g1", 0)
    yield "JoinGroup", 2, group.JoinGroupRequest[2]("g1", 10000, 300000, "", "consumer",
                                                    [("range", b"\x00\x01\x00\x00\x00\x01\x00\x06orders\xff\xff\xff\xff")])
    yield "Heartbeat", 1, group.HeartbeatRequest[1]("g1", 3, "m-1")
    yield "LeaveGroup", 1, group.LeaveGroupRequest[1]("g1", "m-1")
    yield "SyncGroup", 1, group.SyncGroupRequest[1]("g1", 3, "m-1", [("m-1", b"\x00\x01assignment")])
    yield "DescribeGroups", 3, admin.DescribeGroupsRequest[3](["g1", "g2"], True)
    yield "ListGroups", 2, admin.ListGroupsRequest[2]()
    yield "CreateTopics", 3, admin.CreateTopicsRequest[3](
        [("orders", 3, 1, [], [("cleanup.policy", "compact"), ("retention.ms", "-1")]),
         ("manual", -1, -1, [(0, [1])], [])], 30000, False)
    yield "DeleteTopics", 3, admin.DeleteTopicsRequest[3](["orders", "users"], 30000)
    yield "DescribeConfigs", 2, admin.DescribeConfigsRequest[2]([(2, "orders", None), (4, "1", ["num.partitions"])],
                                                                True)
    yield "AlterConfigs", 1, admin.AlterConfigsRequest[1]([(2, "orders", [("retention.ms", "1000")])], False)
    yield "DeleteGroups", 1, admin.DeleteGroupsRequest[1](["g1"])
    yield "ListOffsets", 0, offset.OffsetRequest[0](-1, [("orders", [(0, -1, 3), (1, -2, 1)])])


def main():
    os.makedirs(OUT, exist_ok=True)
    for correlation_id, (api, version, request) in enumerate(requests(), start=1):
        protocol = KafkaProtocol(client_id="kafka-python")
        protocol.send_request(request, correlation_id=correlation_id)
        frame = protocol.send_bytes()
        path = os.path.join(OUT, "%s-v%d-kafka-python.bin" % (api, version))
        with open(path, "wb") as f:
            f.write(frame[4:])  # the payload: the fuzzer's input is what read_frame returns
    print("make_corpus: wrote %d request frames into %s" % (correlation_id, OUT), file=sys.stderr)


if __name__ == "__main__":
    main()
