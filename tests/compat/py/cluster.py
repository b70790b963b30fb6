#!/usr/bin/python3
"""A sluice cluster of real processes on loopback, for tests/compat/cluster_run.sh and its tests.

Its state lives in a directory (SLUICE_CLUSTER_DIR for the tests):
  cluster.json   the binary, the --peers list and each node's id, Kafka port, raft port, data dir and log
  node-N.pid     the pid of node N's running `sluice serve`
  node-N.rc      node N's exit status, written by its wrapper when it exits (128+signal when killed)
  node-N.log     its output (appended to across restarts)   node-N/  its data dir
Each node runs under a `bash -c` wrapper in a session of its own, which records the pid and the exit status;
so the runner and a test can both start (and restart) a node, and whoever stops it learns its status.

usage (by cluster_run.sh):
  cluster.py setup DIR BINARY [NODES]   pick free loopback ports, write cluster.json (3 nodes by default)
  cluster.py start DIR [ID...]          start the nodes (all by default)
  cluster.py start-missing DIR          start the nodes that do not run (a failed test may leave one down)
  cluster.py down DIR                   print the nodes that do not run, with their exit statuses
  cluster.py wait-ready DIR SECONDS     until every running node answers Metadata with every node and a controller
  cluster.py stop DIR [SECONDS]         SIGTERM every running node; 0 when each exited with status 0
  cluster.py kill DIR                   SIGKILL whatever still runs (cleanup)
"""
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import time

HOST = "127.0.0.1"


def free_ports(count):
    """`count` distinct free loopback ports: each bound to port 0 and held until all are chosen."""
    socks = []
    try:
        for _ in range(count):
            s = socket.socket()
            s.bind((HOST, 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


# --------------------------------------------------------------------------------------------------
# Metadata v1 on a raw socket: one node's own view (brokers, controller, leaders, replicas, ISR).

def _string(data, pos):
    (n,) = struct.unpack_from(">h", data, pos)
    pos += 2
    if n < 0:
        return None, pos
    return data[pos:pos + n].decode(), pos + n


def _int32s(data, pos):
    (n,) = struct.unpack_from(">i", data, pos)
    pos += 4
    return list(struct.unpack_from(">%di" % max(n, 0), data, pos)), pos + 4 * max(n, 0)


def _request(port, api_key, version, body, timeout_s):
    """One request (header v1) on a fresh connection; returns the response after its correlation id."""
    client = b"compat-cluster"
    payload = struct.pack(">hhih", api_key, version, 7, len(client)) + client + body
    with socket.create_connection((HOST, port), timeout=timeout_s) as s:
        s.settimeout(timeout_s)
        s.sendall(struct.pack(">i", len(payload)) + payload)
        data = b""
        while len(data) < 4 or len(data) < 4 + struct.unpack_from(">i", data)[0]:
            chunk = s.recv(65536)
            if not chunk:
                raise OSError("connection closed by %s:%d" % (HOST, port))
            data += chunk
    return data[8:]


def find_coordinator(port, group, timeout_s=3.0):
    """FindCoordinator v0 for `group`: (error, node id)."""
    data = _request(port, 10, 0, struct.pack(">h", len(group.encode())) + group.encode(), timeout_s)
    return struct.unpack_from(">hi", data, 0)


def metadata(port, topics=(), timeout_s=3.0):
    """Metadata v1 from 127.0.0.1:port for `topics` (None = all). Returns
    {"brokers": {id: port}, "controller": id, "topics": {name: (error, {partition: (error, leader, replicas, isr)})}}
    or raises OSError / struct.error when the node does not answer in time."""
    if topics is None:
        body = struct.pack(">i", -1)
    else:
        body = struct.pack(">i", len(topics))
        for t in topics:
            body += struct.pack(">h", len(t.encode())) + t.encode()
    data = _request(port, 3, 1, body, timeout_s)
    pos = 0
    (count,) = struct.unpack_from(">i", data, pos)
    pos += 4
    brokers = {}
    for _ in range(count):
        (node_id,) = struct.unpack_from(">i", data, pos)
        _host, pos = _string(data, pos + 4)
        (bport,) = struct.unpack_from(">i", data, pos)
        _rack, pos = _string(data, pos + 4)
        brokers[node_id] = bport
    controller, count = struct.unpack_from(">ii", data, pos)
    pos += 8
    result = {"brokers": brokers, "controller": controller, "topics": {}}
    for _ in range(count):
        (error,) = struct.unpack_from(">h", data, pos)
        name, pos = _string(data, pos + 2)
        (partitions,) = struct.unpack_from(">i", data, pos + 1)  # after is_internal
        pos += 5
        parts = {}
        for _ in range(partitions):
            perr, pid, leader = struct.unpack_from(">hii", data, pos)
            replicas, pos = _int32s(data, pos + 10)
            isr, pos = _int32s(data, pos)
            parts[pid] = (perr, leader, replicas, isr)
        result["topics"][name] = (error, parts)
    return result


def log_end_on_disk(data_dir, topic, partition):
    """The end offset of topic-partition's segments under data_dir (record batches as on the wire, read from the
    files: what a follower has stored, flushed or not), or None when it has no segment."""
    directory = os.path.join(data_dir, "%s-%d" % (topic, partition))
    end = None
    for name in sorted(os.listdir(directory)) if os.path.isdir(directory) else []:
        if not name.endswith(".log"):
            continue
        with open(os.path.join(directory, name), "rb") as f:
            data = f.read()
        pos = 0
        while pos + 61 <= len(data):
            base, length = struct.unpack_from(">qi", data, pos)
            if length <= 0:
                break
            (last_delta,) = struct.unpack_from(">i", data, pos + 23)
            end = max(end or 0, base + last_delta + 1)
            pos += 12 + length
    return end


# --------------------------------------------------------------------------------------------------

class Cluster:
    def __init__(self, directory=None):
        self.dir = os.path.abspath(directory or os.environ["SLUICE_CLUSTER_DIR"])
        with open(os.path.join(self.dir, "cluster.json")) as f:
            conf = json.load(f)
        self.binary = conf["binary"]
        self.peers = conf["peers"]
        self.nodes = {int(k): v for k, v in conf["nodes"].items()}  # id -> {kafka, raft, data_dir, log}

    @staticmethod
    def setup(directory, binary, count=3, cluster_mode=True):
        """cluster_mode=False: one node started without --node-id/--peers (a single node, as `serve` alone)."""
        assert cluster_mode or count == 1
        directory = os.path.abspath(directory)
        os.makedirs(directory, exist_ok=True)
        ports = free_ports(2 * count)
        nodes = {}
        for i in range(1, count + 1):
            nodes[i] = {"kafka": ports[2 * i - 2], "raft": ports[2 * i - 1],
                        "data_dir": os.path.join(directory, "node-%d" % i),
                        "log": os.path.join(directory, "node-%d.log" % i)}
        peers = ",".join("%d@%s:%d" % (i, HOST, n["raft"]) for i, n in nodes.items())
        with open(os.path.join(directory, "cluster.json"), "w") as f:
            json.dump({"binary": os.path.abspath(binary), "peers": peers if cluster_mode else None, "nodes": nodes},
                      f, indent=1)
        return Cluster(directory)

    def _file(self, node, ext):
        return os.path.join(self.dir, "node-%d.%s" % (node, ext))

    def port(self, node):
        return self.nodes[node]["kafka"]

    def bootstrap(self, nodes=None):
        return ",".join("%s:%d" % (HOST, self.port(n)) for n in (nodes or sorted(self.nodes)))

    def _read_int(self, node, what):
        try:
            with open(self._file(node, what)) as f:
                return int(f.read())
        except (OSError, ValueError):
            return None

    def pid(self, node):
        return self._read_int(node, "pid")

    def alive(self, node):
        """True while node's sluice runs (its wrapper has not recorded an exit status)."""
        return self.pid(node) is not None and not os.path.exists(self._file(node, "rc"))

    def exit_status(self, node):
        return self._read_int(node, "rc")

    def start(self, node, extra_args=()):
        n = self.nodes[node]
        for ext in ("pid", "rc"):
            if os.path.exists(self._file(node, ext)):
                os.remove(self._file(node, ext))
        command = [self.binary, "serve", "--listen", "%s:%d" % (HOST, n["kafka"]), "--data-dir", n["data_dir"]]
        if self.peers:
            command += ["--node-id", str(node), "--peers", self.peers]
        command += list(extra_args)
        wrapper = ('"$@" >>"$LOG" 2>&1 </dev/null & echo $! >"$PIDF.tmp"; mv "$PIDF.tmp" "$PIDF"; '
                   'wait $!; echo $? >"$RCF.tmp"; mv "$RCF.tmp" "$RCF"')
        with open(n["log"], "a") as log:
            log.write("=== cluster.py: starting node %d at %s\n" % (node, time.strftime("%H:%M:%S")))
        subprocess.Popen(["bash", "-c", wrapper, "node-wrapper"] + command, start_new_session=True,
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         env=dict(os.environ, LOG=n["log"], PIDF=self._file(node, "pid"), RCF=self._file(node, "rc")))
        deadline = time.monotonic() + 5
        while self.pid(node) is None:
            if time.monotonic() > deadline:
                raise RuntimeError("node %d's wrapper wrote no pid within 5 s" % node)
            time.sleep(0.02)

    def signal(self, node, sig, timeout_s):
        """Send sig to node's sluice; wait up to timeout_s for its exit; return the exit status (None: still runs)."""
        pid = self.pid(node)
        if pid is None or not self.alive(node):
            return self.exit_status(node)
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass
        return self.wait_exit(node, timeout_s)

    def wait_exit(self, node, timeout_s):
        deadline = time.monotonic() + timeout_s
        while self.alive(node) and time.monotonic() < deadline:
            time.sleep(0.01)
        return self.exit_status(node)

    def kill(self, node):
        return self.signal(node, signal.SIGKILL, 10)

    def stop(self, node, timeout_s=5):
        return self.signal(node, signal.SIGTERM, timeout_s)

    def metadata(self, node, topics=(), timeout_s=3.0):
        return metadata(self.port(node), topics, timeout_s)

    def ready(self, nodes=None):
        """Every given node (default: all) runs and lists every node and a controller. Returns the reason when not,
        None when ready."""
        for node in nodes or sorted(self.nodes):
            if not self.alive(node):
                return "node %d: not running (exit status %s)" % (node, self.exit_status(node))
            try:
                md = self.metadata(node)
            except (OSError, struct.error) as e:
                return "node %d: %s" % (node, e)
            expected = sorted(self.nodes) if self.peers else sorted(md["brokers"])[:1]  # a single node: any id
            if sorted(md["brokers"]) != expected or md["controller"] < 0:
                return "node %d: brokers %s, controller %d" % (node, sorted(md["brokers"]), md["controller"])
        return None

    def live(self):
        return [n for n in sorted(self.nodes) if self.alive(n)]

    def partition(self, node, topic, partition):
        """(error, leader, replicas, isr) of topic-partition as node reports it, or None (no answer, topic error)."""
        try:
            md = self.metadata(node, [topic])
        except (OSError, struct.error):
            return None
        error, parts = md["topics"].get(topic, (-1, {}))
        return parts.get(partition) if error == 0 else None

    def agreed_leader(self, topic, partition, exclude=()):
        """The leader every live node names for the partition, when they agree on a live node outside `exclude`."""
        views = [self.partition(n, topic, partition) for n in self.live()]
        leaders = {v[1] if v and v[0] == 0 else -1 for v in views}
        if len(leaders) == 1:
            leader = leaders.pop()
            if leader in self.live() and leader not in exclude:
                return leader
        return None

    def wait_ready(self, timeout_s, nodes=None):
        deadline = time.monotonic() + timeout_s
        while True:
            reason = self.ready(nodes)
            if reason is None:
                return None
            if "not running" in reason or time.monotonic() > deadline:  # a node that exited does not come back
                return reason
            time.sleep(0.2)


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    command, directory = argv[1], argv[2]
    if command == "setup":
        c = Cluster.setup(directory, argv[3], int(argv[4]) if len(argv) > 4 else 3)
        print("cluster: peers %s, bootstrap %s" % (c.peers, c.bootstrap()))
        return 0
    c = Cluster(directory)
    if command == "start":
        for node in [int(a) for a in argv[3:]] or sorted(c.nodes):
            c.start(node)
        return 0
    if command == "start-missing":
        for node in sorted(c.nodes):
            if not c.alive(node):
                print("cluster: restarting node %d (exit status %s)" % (node, c.exit_status(node)))
                c.start(node)
        return 0
    if command == "down":
        print(", ".join("node %d (exit status %s)" % (n, c.exit_status(n)) for n in sorted(c.nodes) if not c.alive(n)))
        return 0
    if command == "wait-ready":
        reason = c.wait_ready(float(argv[3]))
        if reason:
            print("cluster not ready: %s" % reason)
            return 1
        return 0
    if command == "stop":
        timeout_s = float(argv[3]) if len(argv) > 3 else 5
        running = [n for n in sorted(c.nodes) if c.alive(n)]
        for node in running:
            os.kill(c.pid(node), signal.SIGTERM)
        failed = 0
        for node in running:
            status = c.wait_exit(node, timeout_s)
            if status is None:
                c.kill(node)
                print("node %d: still running %g s after SIGTERM (killed)" % (node, timeout_s))
                failed = 1
            elif status != 0:
                print("node %d: exit status %d after SIGTERM" % (node, status))
                failed = 1
            else:
                print("node %d: exit status 0 after SIGTERM" % node)
        return failed
    if command == "kill":
        for node in sorted(c.nodes):
            if c.alive(node):
                c.kill(node)
        return 0
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
