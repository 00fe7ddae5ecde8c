#!/usr/bin/env bash
# Rill's dense linear algebra on GPUs next to the vendor libraries, in one run on one
# machine: dpotrf on 1 GPU against cusolverDnDpotrf, dgemm on 1 GPU against cublasDgemm,
# dpotrf on 2 GPUs of one process against cusolverMgPotrf (when the machine has 2), the
# PTG dpotrf (apps/dla/dpotrf.rill) next to the DTD one on 1 and 2 GPUs, and the GPU
# manager's own cost. Prints a table last; logs under $OUT (default /tmp/rill-gpu).
#
#   bench/gpu_dla.sh [build-dir]      (configures and builds it when missing)
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top/build-gpu}
out=${OUT:-/tmp/rill-gpu}
# the exec streams' busy time in the testers' report needs the GPU operations timed (off by
# default: about 2.6 us of the manager's host time per task, nothing at these tile sizes)
export RILL_MCA_device_cuda_timing=1
mkdir -p "$out"
if [ ! -x "$build/apps/dla/testing_dpotrf" ]; then
    cmake -S "$top" -B "$build" -DCMAKE_BUILD_TYPE=Release -DRILL_WERROR=ON >"$out/configure.log" 2>&1 &&
        cmake --build "$build" -j "$(nproc)" >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
fi
ngpu=$(nvidia-smi -L 2>/dev/null | wc -l)
[ "$ngpu" -ge 1 ] || { echo "no GPU: nothing to measure"; exit 77; }
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
T=$build/apps/dla
V=$build/bench/bench_gpu_vendor
rows=()
best() { # best gflops among the rows of a tester log (column 8 for potrf, 10 for gemm)
    awk -v c="$2" '$1 ~ /^[0-9]+$/ && $c+0 > b { b = $c + 0 } END { printf "%.1f", b / 1000 }' "$1"
}
busy() { # exec streams' busy fraction per GPU during the best run of a tester log
    awk -v c="$2" '$1 ~ /^[0-9]+$/ { g = $c + 0; keep = (g > b); if (keep) { b = g; f = "" } }
        $2 == "GPU" && keep { f = f (f == "" ? "" : " / ") $7 } END { print f }' "$1"
}
vend() { # median TFLOP/s of a vendor log
    sed -n 's/.*median_tflops=\([0-9.]*\).*/\1/p' "$1" | tail -1
}
run_potrf() { # N NB gpus [dsl]
    local dsl=${4:-dtd} log=$out/rill_potrf_$1_$2_g$3${4:+_$4}.log
    "$T/testing_dpotrf" -N "$1" -t "$2" -g "$3" --nruns 3 --dsl "$dsl" >"$log" 2>&1
    rows+=("dpotrf${4:+ ($4)}|$1|$2|$3|$(best "$log" 8)|$(busy "$log" 8)")
}
run_gemm() { # N NB
    local log=$out/rill_gemm_$1_$2.log
    "$T/testing_dgemm" -N "$1" -t "$2" -g 1 --nruns 3 >"$log" 2>&1
    rows+=("dgemm|$1|$2|1|$(best "$log" 10)|$(busy "$log" 10)")
}
for n in 16384 32768; do
    "$V" potrf "$n" 3 >"$out/vendor_potrf_$n.log" 2>&1
    rows+=("cusolverDnDpotrf|$n|-|1|$(vend "$out/vendor_potrf_$n.log")|-")
    for nb in 1024 2048; do run_potrf "$n" "$nb" 1; done
    run_potrf "$n" 2048 1 ptg
done
"$V" gemm 32768 3 >"$out/vendor_gemm_32768.log" 2>&1
rows+=("cublasDgemm|32768|-|1|$(vend "$out/vendor_gemm_32768.log")|-")
run_gemm 32768 2048
run_gemm 32768 4096
if [ "$ngpu" -ge 2 ]; then
    "$V" mgpotrf 65536 2 1024 3 >"$out/vendor_mgpotrf_65536.log" 2>&1
    rows+=("cusolverMgPotrf|65536|1024|2|$(vend "$out/vendor_mgpotrf_65536.log")|-")
    for nb in 1024 2048; do run_potrf 65536 "$nb" 2; done
    run_potrf 65536 2048 2 ptg
fi
"$build/bench/bench_gpu_tasks" 200000 >"$out/gpu_tasks.log" 2>&1
echo "# $(date -u +%F) on $ngpu x $gpu, Rill $(git -C "$top" rev-parse --short HEAD)"
echo "# Rill timed from insertion to the end of the wait, the matrix generated in GPU memory"
echo "# by a previous taskpool and the result brought home (host memory) inside the timing;"
echo "# the vendor calls timed with events on matrices in GPU memory (bench_gpu_vendor)."
printf "%-18s %7s %6s %5s %10s %s\n" what N NB gpus TFLOP/s "exec streams busy"
for r in "${rows[@]}"; do
    IFS='|' read -r a b c d e f <<<"$r"
    printf "%-18s %7s %6s %5s %10s %s\n" "$a" "$b" "$c" "$d" "$e" "$f"
done
echo
cat "$out/gpu_tasks.log"
