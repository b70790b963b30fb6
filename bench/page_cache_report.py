"""Reads compare.sh's JSON lines and two page_cache_anchor.sh lines (before and after the run), and prints each B1
cell's produce figures against the page-cache anchor. Used by kafka_compare.sh; stdlib only.

  python3 bench/page_cache_report.py OUT.jsonl "ANCHOR_BEFORE" "ANCHOR_AFTER"

For a `replicated` topic every payload byte goes into the page cache as new data; the mock keeps ~5 MiB in memory
and writes nothing. So:
  - R_pagecache = broker MB/s / the anchor's fresh-page write MB/s: how close the broker gets to this machine's
    own limit for writing that much new data (dd does nothing but the copy);
  - bound on R_peer = fresh-page write MB/s / mock MB/s: what a broker that writes every byte to a file could reach
    at best, before any network, CRC or index work;
  - the anchor's CPU-s per GB beside the broker's: what the page-cache copy alone costs here. Fresh pages cost more
    than just-freed ones on a VM guest whose host takes freed memory back (the first touch is paid in that copy),
    and the broker's pages lie somewhere between the two, so the anchor is printed, not subtracted;
  - the CPU budget: at saturation the client and the broker (or mock) share the machine's 2 vCPUs, so the produce
    rates stand in the inverse ratio of the CPU-s per GB each side spends in all. "R_peer by CPU" is that ratio
    with each side's measured client and broker CPU (when it matches R_peer the run was CPU-bound). A broker must
    receive and parse what the mock receives and parses; what it spends beyond the mock's own CPU-s per GB (the
    page-cache copy, CRC, indexes) is "spent", set against the "room" the targets leave: with the client's cost
    as it is against the mock, R_peer >= 0.9 allows a ninth of the mock side's CPU-s per GB, and R_cpu <= 2
    allows the mock's own again.
"""
import json
import os
import sys


def parse_anchor(line):
    fields = dict(item.split("=", 1) for item in line.split())
    return {key: float(value) for key, value in fields.items()}


def mean(a, b):
    return (a + b) / 2


def main():
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    path, before, after = sys.argv[1], parse_anchor(sys.argv[2]), parse_anchor(sys.argv[3])
    anchor = {key: mean(before[key], after[key]) for key in before}
    print()
    print("page-cache anchor (%d MiB of new data by dd, no fdatasync; before / after the run):" % anchor["mib"])
    print("   fresh pages (after %d s quiet): %.0f / %.0f MB/s, %.3f / %.3f CPU-s per GB" % (
        anchor["gap_s"], before["fresh_mb_s"], after["fresh_mb_s"], before["fresh_cpu_s_per_gb"],
        after["fresh_cpu_s_per_gb"]))
    print("   just-freed pages:               %.0f / %.0f MB/s, %.3f / %.3f CPU-s per GB" % (
        before["reused_mb_s"], after["reused_mb_s"], before["reused_cpu_s_per_gb"], after["reused_cpu_s_per_gb"]))
    cells, count = [], 0
    if not os.path.exists(path):
        print("   (no report from compare.sh at %s)" % path)
        return 0
    with open(path) as lines:
        for line in lines:
            record = json.loads(line)
            if record.get("type") == "meta":
                count = record.get("count") or 0
            if record.get("type") == "cell" and record.get("bench") == "B1":
                cells.append(record)
    if not cells:
        print("   (no B1 cell in %s)" % path)
        return 0
    for cell in cells:
        broker, mock = cell["broker"], cell["mock"]
        if not (broker.get("mb_s") and mock.get("mb_s") and broker.get("cpu_s_per_gb") and mock.get("cpu_s_per_gb")):
            continue
        broker_mb, mock_mb = broker["mb_s"]["median"], mock["mb_s"]["median"]
        broker_cpu, mock_cpu = broker["cpu_s_per_gb"]["median"], mock["cpu_s_per_gb"]["median"]
        print("SUMMARY B1 %sB acks=%s vs page cache: R_pagecache=%.2f (broker %.0f MB/s, fresh-page write %.0f MB/s) | "
              "R_peer bound=%.2f (mock %.0f MB/s) | CPU-s per GB: broker %.3f, mock %.3f (R_cpu %.2f), "
              "page-cache copy alone %.3f fresh / %.3f just-freed" % (
                  cell["size"], cell["acks"], broker_mb / anchor["fresh_mb_s"], broker_mb, anchor["fresh_mb_s"],
                  min(1.0, anchor["fresh_mb_s"] / mock_mb), mock_mb, broker_cpu, mock_cpu, broker_cpu / mock_cpu,
                  anchor["fresh_cpu_s_per_gb"], anchor["reused_cpu_s_per_gb"]))
        budget = cpu_budget(cell, count)
        if budget:
            print("SUMMARY B1 %sB acks=%s CPU budget: R_peer by CPU=%.2f (measured %.2f) | client CPU-s per GB: %.2f "
                  "with the mock, %.2f with the broker | beyond the mock's own CPU-s per GB the broker spent %.3f; "
                  "room: %.3f for R_peer 0.9, %.3f for R_cpu 2 (the page-cache copy alone: %.3f fresh / %.3f "
                  "just-freed)" % (
                      cell["size"], cell["acks"], budget["by_cpu"], broker["msgs_s"]["median"] /
                      mock["msgs_s"]["median"], budget["client_mock"], budget["client_broker"],
                      broker_cpu - mock_cpu, budget["room_r_peer"], budget["room_r_cpu"],
                      anchor["fresh_cpu_s_per_gb"], anchor["reused_cpu_s_per_gb"]))
    return 0


def cpu_budget(cell, count):
    """Produce-rate ratios from CPU-s per GB (client + server side), or None without client CPU figures."""
    gb = cell["size"] * count / 1e9
    broker, mock = cell["broker"], cell["mock"]
    if not gb or not (broker.get("client_cpu_s") and mock.get("client_cpu_s")):
        return None
    client_mock = mock["client_cpu_s"]["median"] / gb
    client_broker = broker["client_cpu_s"]["median"] / gb
    mock_cpu = mock["cpu_s_per_gb"]["median"]
    mock_side = client_mock + mock_cpu
    return {"client_mock": client_mock, "client_broker": client_broker,
            "by_cpu": mock_side / (client_broker + broker["cpu_s_per_gb"]["median"]),
            "room_r_peer": mock_side / 0.9 - mock_side, "room_r_cpu": mock_cpu}


if __name__ == "__main__":
    sys.exit(main())
