#!/bin/sh
# Runs a command that must fail: passes only if it exits non-zero within TIMEOUT seconds
# and its output matches REGEX (extended grep).
# usage: expect_fail.sh TIMEOUT REGEX command [args...]
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
rm -f "$out"
echo "PASS"
