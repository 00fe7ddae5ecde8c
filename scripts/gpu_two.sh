#!/usr/bin/env bash
# On the 2-GPU machine: build with tests, the GPU tests, then dpotrf on 2 GPUs of one process
# next to cusolverMgPotrf. Bounded commands, logs under $OUT.
out=${OUT:-/tmp/rill-gpu}; mkdir -p "$out"
nvidia-smi -L
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DRILL_WERROR=ON >"$out/configure.log" 2>&1 &&
    timeout 240 cmake --build build-gpu -j "$(nproc)" >"$out/build.log" 2>&1 || { grep error "$out/build.log" | head; exit 1; }
(cd build-gpu && timeout 150 ctest -L gpu --output-on-failure --timeout 100 >"$out/ctest_gpu.log" 2>&1)
grep -E "tests passed|Failed|gpu [01]:" "$out/ctest_gpu.log"
export RILL_MCA_runtime_watchdog_s=30 RILL_MCA_runtime_watchdog_action=abort
V=build-gpu/bench/bench_gpu_vendor
T=build-gpu/apps/dla/testing_dpotrf
timeout 90 $V mgpotrf 65536 2 1024 3 2>&1 | tail -1 | tee "$out/vendor_mg.log"
for nb in 2048 1024; do
    timeout 120 $T -N 65536 -t $nb -g 2 --nruns 3 >"$out/rill_potrf_65536_$nb.log" 2>&1
    grep -E "^ *[0-9]|GPU [01]:|error" "$out/rill_potrf_65536_$nb.log" | tail -8
done
timeout 60 $T -N 20000 -t 1024 -g 2 -x 2>&1 | grep -E "^ *[0-9]|GPU [01]:|error" | tail -3
