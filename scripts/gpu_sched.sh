#!/usr/bin/env bash
# On a GPU machine (16-32 cores): DTD's cost per task as the workers grow, with the GPUs
# in use and not. bench_gpu_tasks on 2 x H200 (32 cores) took 11-12 us per independent tiny
# CPU task against 1.6-2.5 us in a chain; on 2 cores bench_dtd takes 0.2-0.6 us per task.
# Whether the workers' polling while GPUs are in use (runtime_gpu_spin_us, 2 ms) or their
# stealing from the inserting thread's queue makes it is what this run tells:
#   scripts/gpu_sched.sh            (logs under $OUT; a table per setting)
set -uo pipefail
out=${OUT:-/tmp/rill-gpu}
mkdir -p "$out"
gen=(); [ -f build/ptg-gen/parser.c ] && gen=(-DRILLCC_GENERATED_DIR="$PWD/build/ptg-gen")
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DRILL_WERROR=ON "${gen[@]}" >"$out/configure.log" 2>&1 &&
    timeout 300 cmake --build build-gpu -j "$(nproc)" --target bench_dtd >"$out/build.log" 2>&1 ||
    { grep -E "error|Error" "$out/build.log" | head -30; exit 1; }
n=$(nproc) w=1 list=1
while [ $((w * 2)) -le "$n" ]; do w=$((w * 2)); list="$list,$w"; done
for setting in "" "--mca runtime_gpu_spin_us 0" "--mca device_cuda_enabled 0" "--mca sched gpq"; do
    echo "== bench_dtd --workers $list ${setting:-(defaults: GPUs in use)}"
    # shellcheck disable=SC2086 # the setting is words
    timeout 140 build-gpu/bench/bench_dtd --tasks 50000 --reps 2 --workers "$list" $setting \
        2>&1 | grep -v "^#" | tee -a "$out/sched.log"
done
