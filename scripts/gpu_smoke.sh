#!/bin/bash
# GPU smoke run: build, run testers on GPU with checks
set -x
nvidia-smi -L
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DRILL_WERROR=ON -DRILL_BUILD_TESTS=OFF > $OUT/configure.log 2>&1 || { tail -30 $OUT/configure.log; exit 1; }
cmake --build build-gpu -j16 > $OUT/build.log 2>&1 || { grep -E "error" $OUT/build.log | head -30; exit 1; }
B=build-gpu/apps/dla
export RILL_MCA_gpu_verbose=1
timeout 60 $B/testing_dpotrf -N 3000 -t 512 -x 2>&1 | tail -12
timeout 60 $B/testing_dpotrf -N 2999 -t 500 -x --mca runtime_watchdog_s 20 2>&1 | tail -5
timeout 60 $B/testing_dgemm -N 3001 -t 512 -x 2>&1 | tail -5
timeout 60 $B/testing_dposv -N 3001 -t 512 -x 2>&1 | tail -5
timeout 120 $B/testing_dpotrf -N 16384 -t 1024 --nruns 3 2>&1 | tail -6
timeout 120 $B/testing_dpotrf -N 16384 -t 1024 --nruns 2 -x --mca device_cuda_memory_size 1G 2>&1 | tail -6
timeout 60 build-gpu/bench/bench_gpu_vendor potrf 16384 3 | tail -1
