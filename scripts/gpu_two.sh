#!/usr/bin/env bash
# On the 2-GPU machine: build with tests, the GPU tests, dpotrf on 2 GPUs of one process next
# to cusolverMgPotrf, then the whole suite (parallel: each process takes a small zone).
# Bounded commands, logs under $OUT.
out=${OUT:-/tmp/rill-gpu}; mkdir -p "$out"
nvidia-smi -L
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DRILL_WERROR=ON >"$out/configure.log" 2>&1 &&
    timeout 240 cmake --build build-gpu -j "$(nproc)" >"$out/build.log" 2>&1 || { grep error "$out/build.log" | head; exit 1; }
(cd build-gpu && timeout 150 ctest -L gpu --output-on-failure --timeout 100 >"$out/ctest_gpu.log" 2>&1)
grep -E "tests passed|Failed" "$out/ctest_gpu.log"
V=build-gpu/bench/bench_gpu_vendor
T=build-gpu/apps/dla/testing_dpotrf
(export RILL_MCA_runtime_watchdog_s=30 RILL_MCA_runtime_watchdog_action=abort
timeout 90 $V mgpotrf 65536 2 1024 3 2>&1 | tail -1 | tee "$out/vendor_mg.log"
timeout 120 $T -N 65536 -t 2048 -g 2 --nruns 3 >"$out/rill_potrf_65536_2048.log" 2>&1
grep -E "^ *[0-9]|GPU [01]:|error" "$out/rill_potrf_65536_2048.log" | tail -6
timeout 60 $T -N 12000 -t 1000 -g 2 -x 2>&1 | grep -E "^ *[0-9]|GPU [01]:|error" | tail -3)
(cd build-gpu && RILL_MCA_device_cuda_memory_use=3 timeout ${SUITE_S:-200} ctest -j8 --timeout 100 \
    --output-on-failure >"$out/ctest_all.log" 2>&1)
grep -E "tests passed|\*\*\*Failed|Timeout" "$out/ctest_all.log" | head -20
