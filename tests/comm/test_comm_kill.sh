#!/bin/sh
# Runs test_comm_kill under mpirun: passes only if mpirun exits non-zero within 30 s
# and its output names the dead rank 1.
# usage: test_comm_kill.sh <mpiexec> <np> <test_comm_kill> [mpiexec flags...]
mpiexec=$1 np=$2 exe=$3
shift 3
out=$(mktemp)
start=$(date +%s)
timeout 30 "$mpiexec" "$@" -np "$np" "$exe" >"$out" 2>&1
rc=$?
elapsed=$(($(date +%s) - start))
cat "$out"
echo "test_comm_kill.sh: mpirun exited with $rc after ${elapsed} s"
if [ "$rc" -eq 124 ] || [ "$elapsed" -ge 30 ]; then
    echo "FAIL: the job did not end within 30 s after rank 1 died"
    rm -f "$out"
    exit 1
fi
if [ "$rc" -eq 0 ]; then
    echo "FAIL: mpirun exited 0 although rank 1 was killed"
    rm -f "$out"
    exit 1
fi
if ! grep -Eq "rank 1[^0-9].*(signal 9|Killed|killed)" "$out"; then
    echo "FAIL: mpirun's output does not name rank 1 as killed"
    rm -f "$out"
    exit 1
fi
rm -f "$out"
echo "PASS"
