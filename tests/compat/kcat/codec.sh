#!/usr/bin/env bash
# usage: codec.sh gzip|snappy|lz4|zstd
# kcat -P -X compression.codec=CODEC of 20 keyed ~2 KB repetitive values (compression really applies),
# read back with kcat -C: keys and values match exactly; the stored batches carry CODEC (when the data
# dir's segments can be found).
# shellcheck source=tests/compat/kcat/common.sh
source "$(dirname "$0")/common.sh"
codec="${1:?usage: codec.sh gzip|snappy|lz4|zstd}"

topic="$(topic_name "kcat-codec-${codec}")"
mktopic "${topic}"

for i in $(seq -w 0 19); do
  printf 'key-%s:value %s ' "${i}" "${i}"
  for _ in $(seq 48); do printf 'sluice compresses repetitive text nicely. '; done
  printf '\n'
done >"${WORK}/in"
bounded $((20 * scale)) "${KCAT[@]}" -P -t "${topic}" -p 0 -K : -X compression.codec="${codec}" -X linger.ms=100 \
  -l "${WORK}/in" || fail "kcat -P with compression.codec=${codec} failed"
bounded $((20 * scale)) "${KCAT[@]}" -C -t "${topic}" -p 0 -e -o beginning -f '%k:%s\n' >"${WORK}/actual" \
  || fail "kcat -C failed"
expect_same "${WORK}/in" "${WORK}/actual" "records read back (key:value), ${codec}"
echo "ok: 20 records of $(($(wc -c <"${WORK}/in") / 20)) bytes round-tripped with ${codec}"
"${COMPAT_PYTHON}" "${COMPAT_DIR}/py/check_stored_codec.py" "${topic}" "${codec}"
