#!/bin/sh
# Runs a command that must exit with one given code (e.g. 2, a usage error) within
# TIMEOUT seconds and print output matching REGEX (extended grep).
# usage: expect_exit.sh TIMEOUT CODE REGEX command [args...]
# Environment: ALSO, a second regex the output must match as well (on another line);
# FORBID, a regex that no line of the output may match.
limit=$1 code=$2 regex=$3
shift 3
out=$(mktemp)
timeout "$limit" "$@" >"$out" 2>&1
rc=$?
cat "$out"
echo "expect_exit.sh: exit code $rc (expected $code)"
fail() {
    echo "FAIL: $1"
    rm -f "$out"
    exit 1
}
[ "$rc" -eq 124 ] && fail "still running after $limit s (a hang)"
[ "$rc" -eq "$code" ] || fail "exit code $rc, expected $code"
grep -Eq "$regex" "$out" || fail "the output does not match /$regex/"
[ -z "${ALSO:-}" ] || grep -Eq "$ALSO" "$out" || fail "the output does not match /$ALSO/"
[ -z "${FORBID:-}" ] || ! grep -Eq "$FORBID" "$out" || fail "the output matches /$FORBID/"
rm -f "$out"
echo "PASS"
