#!/usr/bin/env bash
# The distributed DTD stress test run for longer than CI does: cycles over 2, 3 and 4
# ranks, 1 and 2 workers per rank and both schedulers with a new seed each run, until
# SECONDS_LIMIT has passed. Every run checks its results against a sequential run; a hang
# ends the run with the watchdog's report (runtime_watchdog_action abort) and fails.
#
#   tests/stress/dtd_stress.sh BUILD_DIR [SECONDS_LIMIT (default 600)] [TASKS (default 5000)]
#
# Prints one line per run and a summary; exits non-zero at the first failure, whose log is
# kept in BUILD_DIR/dtd_stress_fail.log.
set -uo pipefail
build=${1:?usage: $0 BUILD_DIR [SECONDS_LIMIT] [TASKS]}
limit=${2:-600}
tasks=${3:-5000}
exe=$build/tests/comm/test_dtd_stress
[ -x "$exe" ] || { echo "no $exe: build the tests first" >&2; exit 2; }
flags=(--oversubscribe)
[ "$(id -u)" -eq 0 ] && flags+=(--allow-run-as-root)
start=$(date +%s)
runs=0 seed=1000
while [ $(($(date +%s) - start)) -lt "$limit" ]; do
    for np in 2 3 4; do
        for cores in 1 2; do
            for sched in lfq gpq; do
                seed=$((seed + 1))
                log=$(mktemp)
                t0=$(date +%s.%N)
                timeout 300 mpirun "${flags[@]}" -np $np "$exe" --reps 5 --tasks "$tasks" \
                    --seed $seed --mca runtime_num_cores $cores --mca sched $sched \
                    --mca runtime_watchdog_s 20 --mca runtime_watchdog_action abort >"$log" 2>&1
                rc=$?
                t1=$(date +%s.%N)
                runs=$((runs + 1))
                printf "run %4d: %d ranks x %d workers, %s, seed %d: %s (%.1f s)\n" $runs $np \
                    $cores $sched $seed "$([ $rc -eq 0 ] && echo ok || echo "FAILED rc=$rc")" \
                    "$(awk "BEGIN{print $t1 - $t0}")"
                if [ $rc -ne 0 ]; then
                    cp "$log" "$build/dtd_stress_fail.log"
                    grep -v "topo\] warning" "$log" | tail -40
                    rm -f "$log"
                    echo "dtd_stress: FAILED after $runs runs; log in $build/dtd_stress_fail.log"
                    exit 1
                fi
                rm -f "$log"
            done
        done
    done
done
echo "dtd_stress: $runs runs ($((runs * 5)) graphs of $tasks tasks) in $(($(date +%s) - start)) s: all correct, no hang"
