#!/usr/bin/env bash
# kcat -P from a file with keys (-K) and headers (-H), two producer runs with different headers, then
# kcat -C -e -o beginning: partition, offset, key, value and headers match exactly, in order.
# shellcheck source=tests/compat/kcat/common.sh
source "$(dirname "$0")/common.sh"

topic="$(topic_name kcat-kh)"
mktopic "${topic}"

printf '%s\n' 'alpha:first value' 'beta:second value with spaces' 'alpha:third, same key' >"${WORK}/in1"
printf '%s\n' 'gamma:{"json": true}' 'delta:last' >"${WORK}/in2"
bounded $((20 * scale)) "${KCAT[@]}" -P -t "${topic}" -p 0 -K : -H trace=abc -H source=kcat -l "${WORK}/in1" \
  || fail "kcat -P (first file) failed"
bounded $((20 * scale)) "${KCAT[@]}" -P -t "${topic}" -p 0 -K : -H trace=def -l "${WORK}/in2" \
  || fail "kcat -P (second file) failed"

cat >"${WORK}/expected" <<'OUT'
0|0|alpha|first value|trace=abc,source=kcat
0|1|beta|second value with spaces|trace=abc,source=kcat
0|2|alpha|third, same key|trace=abc,source=kcat
0|3|gamma|{"json": true}|trace=def
0|4|delta|last|trace=def
OUT
bounded $((20 * scale)) "${KCAT[@]}" -C -t "${topic}" -p 0 -e -o beginning -f '%p|%o|%k|%s|%h\n' >"${WORK}/actual" \
  || fail "kcat -C failed"
expect_same "${WORK}/expected" "${WORK}/actual" "records read back (partition|offset|key|value|headers)"
echo "ok: 5 records with keys and headers round-tripped"
