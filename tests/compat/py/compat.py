"""Shared helpers for the Python compat tests (run with Debian's /usr/bin/python3).

Environment (set by tests/compat/run.sh):
  SLUICE_BOOTSTRAP  127.0.0.1:PORT of the broker under test (required; loopback only)
  SLUICE_BINARY     the sluice binary (tests that run a broker of their own)
  SLUICE_DATA_DIR   the shared broker's data dir (optional: on-disk compression checks)
  SLUICE_WORK_DIR   a scratch dir for this test (a temporary dir when unset)
"""
import atexit
import os
import random
import shutil
import signal
import socket
import string
import struct
import subprocess
import sys
import tempfile
import time
import traceback

# Short client timeouts: a broker that does not answer must fail a test in seconds, not minutes.
# COMPAT_TIMEOUT_SCALE (an integer, default 1) stretches them for slow builds.
SCALE = int(os.environ.get("COMPAT_TIMEOUT_SCALE") or 1)
CONNECT_TIMEOUT_S = 3 * SCALE
REQUEST_TIMEOUT_S = 5 * SCALE


def bootstrap():
    value = os.environ.get("SLUICE_BOOTSTRAP")
    if not value:
        sys.exit("SLUICE_BOOTSTRAP is not set (run through tests/compat/run.sh, or export it: 127.0.0.1:PORT)")
    host, _, port = value.rpartition(":")
    if host not in ("127.0.0.1", "localhost"):
        sys.exit("SLUICE_BOOTSTRAP must be a loopback address, got %r" % value)
    return "127.0.0.1:%d" % int(port)


def host_port():
    host, _, port = bootstrap().rpartition(":")
    return host, int(port)


_work_dir = []


def work_dir():
    if not _work_dir:
        d = os.environ.get("SLUICE_WORK_DIR")
        if not d:  # run by hand: a temporary dir, removed at exit
            d = tempfile.mkdtemp(prefix="sluice-compat-")
            atexit.register(shutil.rmtree, d, True)
        os.makedirs(d, exist_ok=True)
        _work_dir.append(d)
    return _work_dir[0]


def unique_topic(prefix):
    return "%s-%s" % (prefix, "".join(random.choice(string.ascii_lowercase + string.digits) for _ in range(8)))


class TestFailure(AssertionError):
    pass


def check(condition, message):
    if not condition:
        raise TestFailure(message)


def check_equal(actual, expected, what):
    if actual != expected:
        raise TestFailure("%s:\n  expected %r\n  actual   %r" % (what, expected, actual))


def step(message):
    print("-- " + message, flush=True)


def wait_until(probe, timeout_s, what, interval_s=0.5):
    """Calls probe() until it returns a truthy value; returns it. Fails after timeout_s naming `what`."""
    deadline = time.monotonic() + timeout_s
    last = None
    while True:
        last = probe()
        if last:
            return last
        if time.monotonic() >= deadline:
            raise TestFailure("%s: not reached within %.0f s" % (what, timeout_s))
        time.sleep(interval_s)


def big_values(count, tag):
    """`count` distinct values of ~2 KB of repetitive text: any codec shrinks them a lot."""
    return [("%s-%04d " % (tag, i) + "sluice compresses repetitive text nicely. " * 48).encode()
            for i in range(count)]


def run_tests(tests):
    """Dispatch `prog NAME [ARG]` to tests[NAME](*ARGS); print the result; exit 0 on success."""
    if len(sys.argv) < 2 or sys.argv[1] not in tests:
        sys.exit("usage: %s TEST [ARG]\ntests: %s" % (sys.argv[0], " ".join(sorted(tests))))
    name = " ".join(sys.argv[1:])
    started = time.monotonic()
    try:
        tests[sys.argv[1]](*sys.argv[2:])
    except AssertionError as e:  # TestFailure and the tests' own AssertionErrors: the message says it all
        where = traceback.extract_tb(e.__traceback__)[-1]
        print("FAILED: %s: %s\n  (at %s:%d)" % (name, e, os.path.basename(where.filename), where.lineno), flush=True)
        sys.exit(1)
    except Exception as e:
        traceback.print_exc()
        hint = ""
        if type(e).__name__ in ("NoBrokersAvailable", "KafkaTimeoutError"):
            hint = " (the broker at %s did not answer within the client's %d s timeout)" % (
                os.environ.get("SLUICE_BOOTSTRAP", "?"), CONNECT_TIMEOUT_S)
        print("FAILED: %s: %s: %s%s" % (name, type(e).__name__, e, hint), flush=True)
        sys.exit(1)
    print("passed: %s (%.1f s)" % (name, time.monotonic() - started), flush=True)


# --------------------------------------------------------------------------------------------------
# On-disk check: which codecs the stored record batches carry (Sluice keeps batches as they came on
# the wire, docs/formats.md). Returns None when no segment of the topic is found (check_stored_codec then
# fails).

def stored_codecs(topic):
    data_dir = os.environ.get("SLUICE_DATA_DIR")
    if not data_dir or not os.path.isdir(data_dir):
        return None
    codecs = set()
    found = False
    for root, _dirs, files in os.walk(data_dir):
        if not os.path.basename(root).startswith(topic + "-"):
            continue
        for f in files:
            if not f.endswith(".log"):
                continue
            found = True
            with open(os.path.join(root, f), "rb") as fh:
                data = fh.read()
            pos = 0
            while pos + 61 <= len(data):
                length = struct.unpack_from(">i", data, pos + 8)[0]
                if length <= 0:
                    break
                attributes = struct.unpack_from(">h", data, pos + 21)[0]
                codecs.add(attributes & 7)
                pos += 12 + length
    return codecs if found else None


CODEC_IDS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}


def check_stored_codec(topic, codec):
    # Finding no segment is a failure, not a skip: a check that passes when it has nothing to look at proves
    # nothing (a moved data dir or a renamed partition directory would silently turn it off).
    stored = stored_codecs(topic)
    check(stored is not None, "no segment files of %s found under SLUICE_DATA_DIR (%s): the on-disk codec check "
          "cannot run" % (topic, os.environ.get("SLUICE_DATA_DIR", "not set")))
    check(CODEC_IDS[codec] in stored,
          "the broker stored no %s batch for %s (codecs on disk: %s): the client did not compress, or the broker "
          "rewrote the batch (a Produce range not starting at v0 makes librdkafka drop gzip/snappy/lz4, KAFKA-18659)"
          % (codec, topic, sorted(stored)))
    step("on disk: batches with codecs %s" % sorted(stored))


# --------------------------------------------------------------------------------------------------
# A broker of the test's own (for restarts / SIGKILL): `sluice serve` on a free loopback port.

def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Broker:
    def __init__(self, binary=None, data_dir=None, settings=()):
        self.binary = binary or os.environ.get("SLUICE_BINARY")
        self.settings = list(settings)  # "key=value" broker settings, passed as --set
        if not self.binary:
            sys.exit("SLUICE_BINARY is not set")
        self.data_dir = data_dir or os.path.join(work_dir(), "own-broker-data")
        self.log_path = os.path.join(work_dir(), "own-broker.log")
        self.proc = None
        self.port = None

    @property
    def bootstrap(self):
        return "127.0.0.1:%d" % self.port

    def start(self, timeout_s=10):
        self.port = free_port()
        log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(
            [self.binary, "serve", "--listen", self.bootstrap, "--data-dir", self.data_dir]
            + [arg for kv in self.settings for arg in ("--set", kv)],
            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise TestFailure("own broker exited at startup (status %s); log:\n%s"
                                  % (self.proc.returncode, self.log_tail()))
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return self
            except OSError:
                time.sleep(0.1)
        self.kill()
        raise TestFailure("own broker not listening on %s after %d s" % (self.bootstrap, timeout_s))

    def kill(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()

    def stop(self, timeout_s=5):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout_s)
            except subprocess.TimeoutExpired:
                self.kill()
                raise TestFailure("own broker still running %d s after SIGTERM" % timeout_s)

    def log_tail(self, lines=20):
        try:
            with open(self.log_path, errors="replace") as f:
                return "".join(f.readlines()[-lines:])
        except OSError:
            return ""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.kill()
        if exc[0] is not None:
            print("--- own broker log (last 20 lines):\n" + self.log_tail(), flush=True)
