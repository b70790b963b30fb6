#!/usr/bin/env bash
# kcat -G (librdkafka's balanced consumer): a first run in a fresh group reads the 5 records there are, commits
# and exits at the end (-e); 3 more are produced; a second run in the same group reads exactly those 3 (offsets
# 5-7), so the first run's commit was stored and found. auto.offset.reset=earliest: a lost commit would show as
# offsets 0-4 again.
# shellcheck source=tests/compat/kcat/common.sh
source "$(dirname "$0")/common.sh"

topic="$(topic_name kcat-grp)"
group="$(topic_name kcat-group)"
mktopic "${topic}"

GROUP_CONSUMER=("${KCAT[@]}" -X auto.offset.reset=earliest -X session.timeout.ms=6000 -X heartbeat.interval.ms=1000
  -X enable.auto.commit=true -X auto.commit.interval.ms=100 -e -f '%p|%o|%s\n' -G "${group}" "${topic}")

printf '%s\n' one two three four five >"${WORK}/in1"
bounded $((20 * scale)) "${KCAT[@]}" -P -t "${topic}" -p 0 -l "${WORK}/in1" || fail "kcat -P (first) failed"
printf '0|%s|%s\n' 0 one 1 two 2 three 3 four 4 five >"${WORK}/expected1"
bounded $((25 * scale)) "${GROUP_CONSUMER[@]}" >"${WORK}/actual1" || fail "kcat -G (first run) failed"
expect_same "${WORK}/expected1" "${WORK}/actual1" "first run in group ${group} (partition|offset|value)"
echo "first run: 5 records, committed on exit"

printf '%s\n' six seven eight >"${WORK}/in2"
bounded $((20 * scale)) "${KCAT[@]}" -P -t "${topic}" -p 0 -l "${WORK}/in2" || fail "kcat -P (second) failed"
printf '0|%s|%s\n' 5 six 6 seven 7 eight >"${WORK}/expected2"
bounded $((25 * scale)) "${GROUP_CONSUMER[@]}" >"${WORK}/actual2" || fail "kcat -G (second run) failed"
expect_same "${WORK}/expected2" "${WORK}/actual2" "second run in group ${group}: only what came after the commit"
echo "ok: the second run resumed at the committed offset 5"
