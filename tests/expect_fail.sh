#!/bin/sh
# Runs a command that must fail: passes only if it exits non-zero within TIMEOUT seconds
# and its output matches REGEX (extended grep).
# usage: expect_fail.sh TIMEOUT REGEX command [args...]
# With EXPECT_EACH_RANK=N, each rank 0..N-1 must have said it: a line "[rill R ..." that
# matches REGEX, for every R.
limit=$1 regex=$2
shift 2
out=$(mktemp)
start=$(date +%s)
timeout "$limit" "$@" >"$out" 2>&1
rc=$?
elapsed=$(($(date +%s) - start))
cat "$out"
echo "expect_fail.sh: exit code $rc after ${elapsed} s"
fail() {
    echo "FAIL: $1"
    rm -f "$out"
    exit 1
}
[ "$rc" -eq 124 ] && fail "still running after $limit s (a hang)"
[ "$rc" -eq 0 ] && fail "exited 0; a failure was expected"
grep -Eq "$regex" "$out" || fail "the output does not match /$regex/"
r=0
while [ "$r" -lt "${EXPECT_EACH_RANK:-0}" ]; do
    grep -E "\[rill $r " "$out" | grep -Eq "$regex" || fail "rank $r did not say /$regex/"
    r=$((r + 1))
done
rm -f "$out"
echo "PASS"
