#!/usr/bin/env bash
# Task Bench's own check of an implementation, as its test_all.sh runs it for MPI: every
# dependence pattern with every kernel, on 1, 2 and 4 ranks and with two graphs at once
# (-and), 23 timesteps (prime to 2, 3, 5). The core checks every task's inputs (an assert:
# a wrong or missing input aborts the run).
#   apps/taskbench/check.sh BUILD_DIR [quick|all] [dtd|ptg]
#       (quick: the empty kernel only; dtd: taskbench_rill_dtd (the default), ptg: taskbench_rill_ptg)
set -uo pipefail
B=${1:?usage: check.sh BUILD_DIR [quick|all] [dtd|ptg]}
dsl=${3:-dtd}
case $dsl in dtd | ptg) ;; *) echo "check.sh: the third argument is dtd or ptg, not '$dsl'"; exit 2 ;; esac
exe=$B/apps/taskbench/taskbench_rill_$dsl
[ -x "$exe" ] || { echo "no $exe: configure with -DTASKBENCH_DIR=<a task-bench checkout>"; exit 77; }
mpi=(mpirun --oversubscribe --bind-to none)
[ "$(id -u)" = 0 ] && mpi+=(--allow-run-as-root)
types=(trivial no_comm stencil_1d stencil_1d_periodic dom tree fft nearest "spread -period 2"
    random_nearest all_to_all)
kernels=("" "-kernel compute_bound -iter 1024" "-kernel memory_bound -iter 1024 -scratch 1024"
    "-kernel load_imbalance -iter 1024 -imbalance 0.1" "-kernel busy_wait -iter 64"
    "-output 1024")
[ "${2:-}" = quick ] && kernels=("")
steps=23
fails=0 runs=0
for t in "${types[@]}"; do
    for k in "${kernels[@]}"; do
        for np in 1 2 4; do
            # shellcheck disable=SC2086
            out=$("${mpi[@]}" -np $np "$exe" -steps $steps -type $t $k --mca runtime_num_cores 1 2>&1)
            rc=$?
            runs=$((runs + 1))
            if [ $rc -ne 0 ] || ! grep -q "Elapsed Time" <<<"$out"; then
                echo "FAIL (rc $rc): -np $np -type $t $k"; tail -5 <<<"$out"; fails=$((fails + 1))
            fi
        done
        # shellcheck disable=SC2086
        out=$("${mpi[@]}" -np 4 "$exe" -steps $steps -type $t $k -and -steps $steps -type $t $k \
            --mca runtime_num_cores 1 2>&1)
        rc=$?
        runs=$((runs + 1))
        if [ $rc -ne 0 ] || ! grep -q "Elapsed Time" <<<"$out"; then
            echo "FAIL (rc $rc): -np 4 -type $t $k -and (twice)"; tail -5 <<<"$out"; fails=$((fails + 1))
        fi
    done
done
echo "Task Bench on Rill ${dsl^^}: $((runs - fails)) of $runs runs passed the core's checks"
[ $fails -eq 0 ]
