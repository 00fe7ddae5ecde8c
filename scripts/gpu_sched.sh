#!/usr/bin/env bash
# On a GPU machine (16-32 cores): DTD's cost per task as the workers grow, with the GPUs
# in use and not, under several idle policies; then bench_gpu_tasks (the GPU manager's own
# cost) with and without the limit on spinning workers. bench_gpu_tasks on 2 x H200 (32
# cores) took 13-15 us per independent tiny task with every idle worker polling (runtime_
# gpu_spin_us, 2 ms) against 3 us with them asleep; runtime_idle_spinners limits the polling.
#   scripts/gpu_sched.sh            (logs under $OUT; a table per setting)
#   SCHED_SETTINGS="|--mca runtime_idle_spinners 0" scripts/gpu_sched.sh   ('|'-separated)
set -uo pipefail
out=${OUT:-/tmp/rill-gpu}
mkdir -p "$out"
gen=(); [ -f build/ptg-gen/parser.c ] && gen=(-DRILLCC_GENERATED_DIR="$PWD/build/ptg-gen")
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DRILL_WERROR=ON "${gen[@]}" >"$out/configure.log" 2>&1 &&
    timeout 300 cmake --build build-gpu -j "$(nproc)" --target bench_dtd bench_gpu_tasks \
        >"$out/build.log" 2>&1 ||
    { grep -E "error|Error" "$out/build.log" | head -30; exit 1; }
n=$(nproc) w=1 list=1
while [ $((w * 2)) -le "$n" ]; do w=$((w * 2)); list="$list,$w"; done
default="|--mca runtime_idle_spinners 0|--mca runtime_idle_spinners 1|--mca runtime_gpu_spin_us 0"
IFS='|' read -r -a settings <<<"${SCHED_SETTINGS-$default}"
for setting in "${settings[@]}"; do
    echo "== bench_dtd --workers $list ${setting:-(defaults: GPUs in use)}"
    # shellcheck disable=SC2086 # the setting is words
    timeout 140 build-gpu/bench/bench_dtd --tasks 50000 --reps 2 --workers "$list" $setting \
        2>&1 | grep -v "^#" | tee -a "$out/sched.log"
done
for setting in "" "--mca runtime_idle_spinners 0"; do
    echo "== bench_gpu_tasks 100000 ${setting:-(defaults)}"
    # shellcheck disable=SC2086
    timeout 120 build-gpu/bench/bench_gpu_tasks 100000 $setting 2>&1 | grep "^gpu_tasks" |
        tee -a "$out/sched.log"
done
