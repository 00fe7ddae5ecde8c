#!/bin/sh
# Every parameter that is not a string, given a value no type accepts ('zzz'), must stop
# rill_init: the program exits non-zero and the message names the parameter.
# usage: params_every_bad.sh RILL_INFO PROGRAM
info=$1 prog=$2
names=$("$info" --parsable | awk -F '\t' '$2 != "string" { print $1 }')
[ -n "$names" ] || { echo "FAIL: rill_info --parsable listed no parameter"; exit 1; }
n=0 bad=0
for p in $names; do
    n=$((n + 1))
    out=$("$prog" --mca "$p" zzz 2>&1)
    rc=$?
    if [ "$rc" -eq 0 ]; then
        echo "FAIL: --mca $p zzz: the program exited 0 (the bad value was not fatal)"
        bad=$((bad + 1))
    elif ! echo "$out" | grep -q "bad value 'zzz' for parameter '$p'"; then
        echo "FAIL: --mca $p zzz: exit $rc without naming the parameter:"
        echo "$out" | head -5
        bad=$((bad + 1))
    fi
done
echo "$n parameters, $bad not stopped by a bad value"
[ "$bad" -eq 0 ] && echo PASS
