#!/usr/bin/env bash
# On a GPU machine: build with tests, run the GPU-labelled tests and the DLA testers on the
# GPUs with checks (ragged sizes), then (with "bench") bench/gpu_dla.sh; "ptg" runs only the
# PTG testers with checks and the PTG dpotrf next to the DTD one. Logs under $OUT.
# A machine without flex and bison builds rillcc from the sources in build/ptg-gen when they
# are there (copied from a build tree's dsl/ptg/: parser.c, parser.h, lexer.c).
#   scripts/gpu_check.sh [bench|ptg]
set -uo pipefail
out=${OUT:-/tmp/rill-gpu}
mkdir -p "$out"
nvidia-smi -L
gen=(); [ -f build/ptg-gen/parser.c ] && gen=(-DRILLCC_GENERATED_DIR="$PWD/build/ptg-gen")
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DRILL_WERROR=ON "${gen[@]}" >"$out/configure.log" 2>&1 || { tail -30 "$out/configure.log"; exit 1; }
cmake --build build-gpu -j "$(nproc)" >"$out/build.log" 2>&1 || { grep -E "error" "$out/build.log" | head -30; exit 1; }
T=build-gpu/apps/dla
if [ "${1:-}" = ptg ]; then
    for cmd in "testing_dpotrf -N 3001 -t 512 -x --dsl ptg" "testing_dpotrf -N 8192 -t 1024 -x --dsl ptg" \
        "testing_dgemm -M 2999 -N 3001 -K 1501 -t 512 -x --dsl ptg" \
        "testing_dpotrf -N 8192 -t 1024 -x --dsl ptg --mca device_cuda_memory_size 600M"; do
        echo "== $cmd"
        timeout 120 $T/$cmd 2>&1 | grep -E "^ *[0-9]|error|GPU 0:" | tail -4
    done
    for n in 16384 32768; do
        for dsl in dtd ptg dtd ptg; do
            echo "== testing_dpotrf -N $n -t 2048 --nruns 3 --dsl $dsl"
            timeout 120 $T/testing_dpotrf -N $n -t 2048 --nruns 3 --dsl $dsl 2>&1 | grep -E "^ *[0-9]|error|GPU 0:"
        done
    done
    exit 0
fi
(cd build-gpu && ctest -L gpu --output-on-failure --timeout 300 >"$out/ctest_gpu.log" 2>&1)
tail -15 "$out/ctest_gpu.log"
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
