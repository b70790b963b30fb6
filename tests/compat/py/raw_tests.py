#!/usr/bin/python3
"""Hand-built Kafka frames on raw sockets (127.0.0.1 only), following kafka-protocol.md.

usage: /usr/bin/python3 raw_tests.py TEST
  produce_invalid_acks     Produce v7 with acks=2 -> the partition's error is 21 INVALID_REQUIRED_ACKS, and
                           nothing was appended (ListOffsets latest stays 0)
  truncated_frame          a Produce frame whose body stops mid-field -> closed or answered (not left hanging);
                           a length prefix promising more bytes than arrive before EOF -> closed;
                           then the broker answers ApiVersions on a new connection
  oversize_length          length prefix 0x7fffffff, and -1 -> connection closed; broker still answers
  unknown_api_key          API key 9999 -> connection closed; broker still answers
  apiversions_unsupported  ApiVersions v99 -> error 35 in the v0 layout (header v0, int16 error, int32-counted
                           [key, min, max] array listing ApiVersions), connection kept open for a v0 retry
"""
import socket
import struct
import time

from compat import SCALE, check, check_equal, host_port, run_tests, step, unique_topic

IO_TIMEOUT_S = 3 * SCALE

# ---------------------------------------------------------------- encoding


def string(s):
    if s is None:
        return struct.pack(">h", -1)
    b = s.encode()
    return struct.pack(">h", len(b)) + b


def uvarint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def varint(n):
    return uvarint((n << 1) ^ (n >> 63))


def compact_string(s):
    b = s.encode()
    return uvarint(len(b) + 1) + b


def header_v1(api_key, version, correlation_id, client_id="compat-raw"):
    return struct.pack(">hhi", api_key, version, correlation_id) + string(client_id)


def header_v2(api_key, version, correlation_id, client_id="compat-raw"):
    return header_v1(api_key, version, correlation_id, client_id) + uvarint(0)  # no tagged fields


def frame(payload):
    return struct.pack(">i", len(payload)) + payload


_CRC_TABLE = []
for _i in range(256):
    _c = _i
    for _ in range(8):
        _c = (_c >> 1) ^ 0x82F63B78 if _c & 1 else _c >> 1
    _CRC_TABLE.append(_c)


def crc32c(data):
    c = 0xFFFFFFFF
    for x in data:
        c = _CRC_TABLE[(c ^ x) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def record_batch(values, timestamp_ms):
    """One uncompressed magic-2 batch of unkeyed records without headers."""
    body = bytearray()
    for i, v in enumerate(values):
        rec = b"\x00" + varint(0) + varint(i) + varint(-1) + varint(len(v)) + v + varint(0)
        body += varint(len(rec)) + rec
    after_crc = struct.pack(">hiqqqhii", 0, len(values) - 1, timestamp_ms, timestamp_ms, -1, -1, -1,
                            len(values)) + body
    batch = struct.pack(">ibI", 0, 2, crc32c(after_crc)) + after_crc
    return struct.pack(">qi", 0, len(batch)) + batch


def produce_v7(correlation_id, topic, acks, records):
    body = string(None) + struct.pack(">hi", acks, 5000)  # transactional id, acks, timeout
    body += struct.pack(">i", 1) + string(topic) + struct.pack(">i", 1)
    body += struct.pack(">i", 0) + struct.pack(">i", len(records)) + records
    return header_v1(0, 7, correlation_id) + body


def list_offsets_v1(correlation_id, topic, timestamp):
    body = struct.pack(">i", -1)  # replica id
    body += struct.pack(">i", 1) + string(topic) + struct.pack(">i", 1) + struct.pack(">iq", 0, timestamp)
    return header_v1(2, 1, correlation_id) + body


# ---------------------------------------------------------------- sockets

class Reader:
    def __init__(self, data):
        self.data, self.pos = data, 0

    def take(self, fmt):
        v = struct.unpack_from(">" + fmt, self.data, self.pos)
        self.pos += struct.calcsize(fmt)
        return v[0] if len(v) == 1 else v

    def string(self):
        n = self.take("h")
        if n < 0:
            return None
        s = self.data[self.pos:self.pos + n].decode()
        self.pos += n
        return s

    def left(self):
        return len(self.data) - self.pos


def connect():
    host, port = host_port()
    s = socket.create_connection((host, port), timeout=IO_TIMEOUT_S)
    s.settimeout(IO_TIMEOUT_S)
    return s


def recv_exact(s, n):
    buf = b""
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            raise EOFError("connection closed after %d of %d bytes" % (len(buf), n))
        buf += chunk
    return buf


def recv_frame(s):
    (n,) = struct.unpack(">i", recv_exact(s, 4))
    check(0 <= n <= 64 << 20, "response length prefix %d" % n)
    return recv_exact(s, n)


def request(s, payload):
    s.sendall(frame(payload))
    return recv_frame(s)


def outcome(s):
    """What the broker does next on this socket: 'closed', ('answered', bytes) or 'hung'."""
    deadline = time.monotonic() + IO_TIMEOUT_S
    data = b""
    while time.monotonic() < deadline:
        try:
            chunk = s.recv(65536)
        except socket.timeout:
            break
        except ConnectionError:
            return "closed"
        if not chunk:
            return ("answered", data) if data else "closed"
        data += chunk
        if len(data) >= 4 and len(data) >= 4 + struct.unpack_from(">i", data)[0]:
            return ("answered", data)
    return ("answered", data) if data else "hung"


def check_closed(s, what):
    result = outcome(s)
    if result != "closed":
        raise AssertionError("%s: expected the broker to close the connection, got %s"
                             % (what, "no reaction within %d s" % IO_TIMEOUT_S if result == "hung"
                                else "a response %r" % (result[1][:64],)))
    step("%s: connection closed" % what)


def api_versions_v0(s, correlation_id=7):
    """ApiVersions v0 round trip -> {key: (min, max)}; asserts error 0."""
    r = Reader(request(s, header_v1(18, 0, correlation_id)))
    check_equal(r.take("i"), correlation_id, "ApiVersions v0 correlation id")
    check_equal(r.take("h"), 0, "ApiVersions v0 error code")
    n = r.take("i")
    check(0 < n < 1000, "ApiVersions v0 array count %d" % n)
    return {k: (lo, hi) for k, lo, hi in (r.take("hhh") for _ in range(n))}


def check_broker_answers(what):
    s = connect()
    try:
        versions = api_versions_v0(s)
    except (OSError, EOFError) as e:
        raise AssertionError("after %s the broker does not answer ApiVersions on a new connection: %r" % (what, e))
    finally:
        s.close()
    check(18 in versions and 0 in versions, "ApiVersions lists ApiVersions (18) and Produce (0): %s" % versions)
    step("after %s: ApiVersions v0 on a new connection answered (%d APIs)" % (what, len(versions)))


# ---------------------------------------------------------------- tests

def test_produce_invalid_acks():
    topic = unique_topic("raw-acks")
    from confluent_tests import admin, create_topic  # setup only
    create_topic(admin(), topic)
    s = connect()
    try:
        versions = api_versions_v0(s)
        check(0 in versions and versions[0][0] <= 7 <= versions[0][1], "Produce v7 not advertised: %s"
              % (versions.get(0),))
        batch = record_batch([b"must not be stored"], int(time.time() * 1000))
        r = Reader(request(s, produce_v7(41, topic, 2, batch)))
        check_equal(r.take("i"), 41, "Produce correlation id")
        check_equal(r.take("i"), 1, "Produce response topic count")
        check_equal(r.string(), topic, "Produce response topic")
        check_equal(r.take("i"), 1, "Produce response partition count")
        partition, error, base_offset = r.take("ihq")
        check_equal((partition, error), (0, 21), "Produce acks=2: (partition, error) (21 = INVALID_REQUIRED_ACKS)")
        step("Produce acks=2: error 21, base offset %d" % base_offset)
        r = Reader(request(s, list_offsets_v1(42, topic, -1)))
        check_equal(r.take("i"), 42, "ListOffsets correlation id")
        check_equal((r.take("i"), r.string(), r.take("i")), (1, topic, 1), "ListOffsets (topics, name, partitions)")
        _partition, error, _timestamp, offset = r.take("ihqq")
        check_equal((error, offset), (0, 0), "ListOffsets latest after the rejected produce (error, offset)")
    finally:
        s.close()


def test_truncated_frame():
    # 1. A complete frame whose Produce body stops inside the topic name (string length 100, 3 bytes follow).
    s = connect()
    try:
        body = string(None) + struct.pack(">hi", 1, 5000) + struct.pack(">i", 1) + struct.pack(">h", 100) + b"abc"
        s.sendall(frame(header_v1(0, 7, 51) + body))
        result = outcome(s)
        if result == "hung":
            raise AssertionError("truncated Produce body: neither answered nor closed within %d s" % IO_TIMEOUT_S)
        step("truncated Produce body: %s" % (result if result == "closed" else "answered %r" % result[1][:32]))
    finally:
        s.close()
    check_broker_answers("a truncated Produce body")
    # 2. A length prefix promising 100 bytes, 10 arrive, then EOF.
    s = connect()
    try:
        s.sendall(struct.pack(">i", 100) + header_v1(18, 0, 52)[:10])
        s.shutdown(socket.SHUT_WR)
        check_closed(s, "frame cut short by EOF")
    finally:
        s.close()
    check_broker_answers("a frame cut short by EOF")


def test_oversize_length():
    for prefix in (0x7FFFFFFF, -1):
        s = connect()
        try:
            s.sendall(struct.pack(">i", prefix) + header_v1(18, 0, 61))
            check_closed(s, "length prefix %d" % prefix)
        finally:
            s.close()
        check_broker_answers("length prefix %d" % prefix)


def test_unknown_api_key():
    s = connect()
    try:
        s.sendall(frame(header_v1(9999, 0, 71)))
        check_closed(s, "API key 9999")
    finally:
        s.close()
    check_broker_answers("API key 9999")


def test_apiversions_unsupported():
    s = connect()
    try:
        # v3+ layout (header v2, compact strings), as librdkafka sends its first ApiVersions, at version 99.
        body = compact_string("compat-raw") + compact_string("1.0") + uvarint(0)
        s.sendall(frame(header_v2(18, 99, 81) + body))
        result = outcome(s)
        if result in ("closed", "hung"):
            raise AssertionError("ApiVersions v99: expected an error-35 response, the connection was %s"
                                 % ("closed" if result == "closed" else "left without answer for %d s" % IO_TIMEOUT_S))
        data = result[1]
        r = Reader(data[4:])
        check_equal(r.take("i"), 81, "correlation id (response header v0: no tagged fields)")
        check_equal(r.take("h"), 35, "error code (35 = UNSUPPORTED_VERSION)")
        n = r.take("i")
        check(0 < n < 1000 and r.left() == 6 * n, "v0 layout: int32 count %d then %d bytes of 6-byte entries "
              "(%d bytes left)" % (n, 6 * n, r.left()))
        entries = {k: (lo, hi) for k, lo, hi in (r.take("hhh") for _ in range(n))}
        check(18 in entries and entries[18][0] == 0, "the ApiVersions entry is listed, from v0: %s" % entries)
        step("ApiVersions v99: error 35, v0 layout, ApiVersions %d-%d" % entries[18])
        versions = api_versions_v0(s, correlation_id=82)  # the client's retry on the same connection
        step("retry with v0 on the same connection answered (%d APIs)" % len(versions))
    finally:
        s.close()


if __name__ == "__main__":
    run_tests({
        "produce_invalid_acks": test_produce_invalid_acks,
        "truncated_frame": test_truncated_frame,
        "oversize_length": test_oversize_length,
        "unknown_api_key": test_unknown_api_key,
        "apiversions_unsupported": test_apiversions_unsupported,
    })
