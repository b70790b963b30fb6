#!/usr/bin/env bash
# kcat -L: the metadata listing shows the broker at its 127.0.0.1 address and a fresh 2-partition topic,
# both in the all-topics listing and when asked for that topic alone, each partition led by that broker.
# shellcheck source=tests/compat/kcat/common.sh
source "$(dirname "$0")/common.sh"

topic="$(topic_name kcat-md)"
mktopic "${topic}" 2

check_listing() {  # FILE
  "${COMPAT_PYTHON}" - "$1" "${topic}" "${SLUICE_BOOTSTRAP}" <<'PY'
import json, sys
path, topic, bootstrap = sys.argv[1:]
md = json.load(open(path))
brokers = {b["id"]: b["name"] for b in md.get("brokers", [])}
problems = []
if list(brokers.values()) != [bootstrap]:
    problems.append("brokers %r, expected exactly one at %s" % (brokers, bootstrap))
topics = {t["topic"]: t for t in md.get("topics", [])}
t = topics.get(topic)
if t is None:
    problems.append("topic %s not listed (topics: %s)" % (topic, sorted(topics)))
else:
    if t.get("error"):
        problems.append("topic error %r" % t["error"])
    parts = sorted(p["partition"] for p in t.get("partitions", []))
    if parts != [0, 1]:
        problems.append("partitions %r, expected [0, 1]" % parts)
    for p in t.get("partitions", []):
        if p.get("error") or p.get("leader") not in brokers:
            problems.append("partition %r: leader %r not a listed broker, or error" % (p["partition"], p))
if problems:
    print("metadata listing:", json.dumps(md), file=sys.stderr)
    sys.exit("FAILED: " + "; ".join(problems))
print("ok: %s with partitions 0 and 1 led by %s" % (topic, bootstrap))
PY
}

bounded $((15 * scale)) "${KCAT[@]}" -L -J -m 5 >"${WORK}/all.json" || fail "kcat -L (all topics) failed"
check_listing "${WORK}/all.json"
bounded $((15 * scale)) "${KCAT[@]}" -L -J -m 5 -t "${topic}" >"${WORK}/one.json" || fail "kcat -L -t ${topic} failed"
check_listing "${WORK}/one.json"
