#!/usr/bin/env bash
# On the 2-GPU machine: build, the GPU tests (channels in one process and in two), then
# bench/bench_channels on two processes. Bounded commands; logs under $OUT, a summary last.
#   scripts/gpu_channels.sh [tests|bench|hang|all]   (default all)
# hang: the one-process signal scenario 8 times in each of 3 settings (as built; lazy
# module loading off; signals by copy), each run bounded: the test's own watchdog prints
# the feeding thread's last step, the progress words and every thread's stack on a hang
out=${OUT:-/tmp/rill-gpu}; mkdir -p "$out"
what=${1:-all}
nvidia-smi -L
mpi=(mpirun --oversubscribe); [ "$(id -u)" = 0 ] && mpi+=(--allow-run-as-root)
gen=(); [ -f build/ptg-gen/parser.c ] && gen=(-DRILLCC_GENERATED_DIR="$PWD/build/ptg-gen")
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DRILL_WERROR=ON "${gen[@]}" >"$out/configure.log" 2>&1 &&
    timeout 300 cmake --build build-gpu -j "$(nproc)" >"$out/build.log" 2>&1 ||
    { grep -E "error|Error" "$out/build.log" | head -30; exit 1; }
export RILL_MCA_runtime_watchdog_s=60 RILL_MCA_runtime_watchdog_action=abort
if [ "$what" = hang ]; then
    for setting in "" "CUDA_MODULE_LOADING=EAGER" "RILL_MCA_device_proxy_signal=copy"; do
        pass=0
        for k in 1 2 3 4 5 6 7 8; do
            log=$out/hang_${setting%%=*}_$k.log
            env $setting timeout 90 build-gpu/tests/gpu/test_channels signal >"$log" 2>&1 &&
                pass=$((pass + 1))
        done
        echo "signal, one process, ${setting:-as built}: $pass of 8 passed"
        grep -h "HANG\|signal: side" "$out"/hang_${setting%%=*}_*.log | head -8
    done
    exit 0
fi
if [ "$what" != bench ]; then
    (cd build-gpu && timeout 330 ctest -L gpu --output-on-failure --timeout 100 \
        >"$out/ctest_gpu.log" 2>&1)
    grep -E "tests passed|\*\*\*Failed|Timeout|Skipped|Passed" "$out/ctest_gpu.log" | tail -40
fi
if [ "$what" != tests ]; then
    timeout 240 "${mpi[@]}" -np 2 build-gpu/bench/bench_channels >"$out/bench_channels.log" 2>&1
    echo "bench_channels exit $?"
    tail -45 "$out/bench_channels.log"
fi
