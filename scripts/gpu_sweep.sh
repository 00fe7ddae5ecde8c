#!/usr/bin/env bash
# Exec-stream settings of dpotrf on one GPU, next to cusolverDnDpotrf in the same run.
# Every command is bounded; results are appended to $OUT/sweep.log as they come.
out=${OUT:-/tmp/rill-gpu}; mkdir -p "$out"; log=$out/sweep.log
N=${N:-32768}
[ -x build-gpu/apps/dla/testing_dpotrf ] || { cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DRILL_WERROR=ON -DRILL_BUILD_TESTS=OFF >"$out/configure.log" 2>&1 && cmake --build build-gpu -j "$(nproc)" >"$out/build.log" 2>&1 || { echo build failed; exit 1; }; }
T=build-gpu/apps/dla/testing_dpotrf
export RILL_MCA_runtime_watchdog_s=20 RILL_MCA_runtime_watchdog_action=abort
timeout 60 build-gpu/bench/bench_gpu_vendor potrf "$N" 3 | tail -1 | tee -a "$log"
for cfg in ${CFGS:-"1 8" "2 4" "4 4" "8 2"}; do
    set -- $cfg
    for nb in ${NBS:-2048}; do
        r=$(timeout 90 $T -N "$N" -t "$nb" --nruns 3 --mca device_cuda_exec_streams "$1" \
            --mca device_cuda_max_inflight "$2" 2>&1 | tee -a "$out/sweep_runs.log" |
            awk '$1 ~ /^[0-9]+$/ {if ($8>b) b=$8} END {print b/1000}')
        echo "streams $1 inflight $2 nb $nb: $r TF" | tee -a "$log"
    done
done
