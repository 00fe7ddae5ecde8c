#!/usr/bin/env bash
# Where a GPU-direct hop's host time goes: the GPU-direct tests, then bench_gpu_hop and the
# 2 x 1 GPU dpotrf with idle threads that poll runtime_gpu_spin_us (the default with GPUs)
# and with runtime_gpu_spin_us 0 (workers 50 us, comm thread 20 us, then asleep). Logs
# under $OUT.
out=${OUT:-/tmp/rill-gpu}; mkdir -p "$out"
gen=(); [ -f build/ptg-gen/parser.c ] && gen=(-DRILLCC_GENERATED_DIR="$PWD/build/ptg-gen")
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release "${gen[@]}" >"$out/configure.log" 2>&1 &&
    timeout 300 cmake --build build-gpu -j "$(nproc)" --target bench_gpu_hop testing_dpotrf \
        test_gpu_direct >"$out/build.log" 2>&1 || { grep -E "error" "$out/build.log" | head -30; exit 1; }
(cd build-gpu && timeout 200 ctest -R gpu_direct --output-on-failure --timeout 90 \
    >"$out/ctest_direct.log" 2>&1)
grep -E "tests passed|\*\*\*Failed|Timeout" "$out/ctest_direct.log" | tail -12
mpi=(mpirun --oversubscribe --bind-to none -np 2); [ "$(id -u)" = 0 ] && mpi+=(--allow-run-as-root)
T=$(find build-gpu -name testing_dpotrf -type f | head -1)
for spin in "" "--mca runtime_gpu_spin_us 0"; do
    echo "== ${spin:-runtime_gpu_spin_us as set (2000)}"
    timeout 120 "${mpi[@]}" build-gpu/bench/bench_gpu_hop 200 $spin 2>&1 | tail -6
    timeout 120 "${mpi[@]}" $T -N 32768 -t 2048 --nruns 3 -g 1 $spin 2>&1 | grep -E "^ *[0-9]"
done
timeout 60 "${mpi[@]}" $T -N 6001 -t 512 -x -g 1 2>&1 | grep -E "^ *[0-9]|error"
