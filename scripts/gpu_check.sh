#!/usr/bin/env bash
# On a GPU machine: build with tests, run the GPU-labelled tests and the DLA testers on the
# GPUs with checks (ragged sizes), then (with "bench") bench/gpu_dla.sh. Logs under $OUT.
set -uo pipefail
out=${OUT:-/tmp/rill-gpu}
mkdir -p "$out"
nvidia-smi -L
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DRILL_WERROR=ON >"$out/configure.log" 2>&1 || { tail -30 "$out/configure.log"; exit 1; }
cmake --build build-gpu -j "$(nproc)" >"$out/build.log" 2>&1 || { grep -E "error" "$out/build.log" | head -30; exit 1; }
(cd build-gpu && ctest -L gpu --output-on-failure --timeout 300 >"$out/ctest_gpu.log" 2>&1)
tail -15 "$out/ctest_gpu.log"
T=build-gpu/apps/dla
for cmd in "testing_dpotrf -N 3001 -t 512 -x" "testing_dpotrf -N 2500 -t 1000 -x --nruns 2" \
    "testing_dgemm -M 2999 -N 3001 -K 1501 -t 512 -x" "testing_dgemm -N 3001 -t 700 -x --transA T" \
    "testing_dposv -N 3001 -t 512 -x --nrhs 7" \
    "testing_dpotrf -N 8192 -t 512 -x --mca device_cuda_memory_size 1200M" \
    "testing_dpotrf -N 3001 -t 512 -x --dsl ptg" "testing_dpotrf -N 8192 -t 1024 -x --dsl ptg" \
    "testing_dgemm -M 2999 -N 3001 -K 1501 -t 512 -x --dsl ptg"; do
    echo "== $cmd"
    timeout 120 $T/$cmd 2>&1 | grep -E "^ *[0-9]|error|GPU 0:" | tail -4
done
if [ "${1:-}" = bench ]; then
    bench/gpu_dla.sh build-gpu
fi
