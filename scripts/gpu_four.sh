#!/usr/bin/env bash
# On the 4-GPU machine (nvidia-h200-x4), one run: dpotrf on 4 processes x 1 GPU (tiles GPU
# to GPU) at N = 65536 and 98304 next to cusolverMgPotrf on the same 4 GPUs and to one
# process driving the 4 GPUs; dgemm on 4 processes x 1 GPU at N = 65536 next to one
# cublasDgemm per GPU (4 at once); the streams' busy fraction and the bytes per channel of
# each Rill run (the testers' GPU lines), and a trace of one 4-process run under $OUT.
#   scripts/gpu_four.sh            (logs and the table under $OUT, default /tmp/rill-gpu)
set -uo pipefail
out=${OUT:-/tmp/rill-gpu}
# the exec streams' busy time in the testers' report needs the GPU operations timed (off by
# default: about 2.6 us of the manager's host time per task, nothing at these tile sizes)
export RILL_MCA_device_cuda_timing=1
mkdir -p "$out"
nvidia-smi -L
ngpu=$(nvidia-smi -L | grep -c '^GPU')
[ "$ngpu" -ge 4 ] || { echo "needs 4 GPUs, this machine has $ngpu"; exit 77; }
gen=()
[ -f build/ptg-gen/parser.c ] && gen=(-DRILLCC_GENERATED_DIR="$PWD/build/ptg-gen")
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release "${gen[@]}" >"$out/configure.log" 2>&1 &&
    timeout 300 cmake --build build-gpu -j "$(nproc)" >"$out/build.log" 2>&1 ||
    { grep -E "error" "$out/build.log" | head -20; exit 1; }
export RILL_MCA_runtime_watchdog_s=60 RILL_MCA_runtime_watchdog_action=abort
T=build-gpu/apps/dla
V=build-gpu/bench/bench_gpu_vendor
mpi=(mpirun --oversubscribe --bind-to none)
[ "$(id -u)" = 0 ] && mpi+=(--allow-run-as-root)
best() { awk -v c="$2" '$1 ~ /^[0-9]+$/ && $c+0 > b { b = $c + 0 } END { printf "%.1f", b / 1000 }' "$1"; }
vend() { sed -n 's/.*median_tflops=\([0-9.]*\).*/\1/p' "$1" | tail -1; }
rows=()
for n in 65536 98304; do
    timeout 200 "$V" mgpotrf "$n" 4 1024 3 >"$out/mgpotrf_$n.log" 2>&1
    rows+=("cusolverMgPotrf|$n|1024|1 x 4|$(vend "$out/mgpotrf_$n.log")")
    log=$out/potrf_np4_$n.log
    timeout 200 "${mpi[@]}" -np 4 $T/testing_dpotrf -N "$n" -t 2048 -P 2 -Q 2 -g 1 --nruns 3 >"$log" 2>&1
    rows+=("Rill dpotrf (GPU direct)|$n|2048|4 x 1|$(best "$log" 8)")
done
log=$out/potrf_1x4_98304.log
timeout 200 $T/testing_dpotrf -N 98304 -t 2048 -g 4 --nruns 3 >"$log" 2>&1
rows+=("Rill dpotrf (one process)|98304|2048|1 x 4|$(best "$log" 8)")
for g in 0 1 2 3; do # one cublasDgemm per GPU, all at once
    CUDA_VISIBLE_DEVICES=$g timeout 200 "$V" gemm 32768 3 >"$out/gemm_gpu$g.log" 2>&1 &
done
wait
sum=$(for g in 0 1 2 3; do vend "$out/gemm_gpu$g.log"; done | awk '{ s += $1 } END { printf "%.1f", s }')
rows+=("4 x cublasDgemm (N=32768 each)|32768|-|4 x 1|$sum")
log=$out/gemm_np4_65536.log
timeout 200 "${mpi[@]}" -np 4 $T/testing_dgemm -N 65536 -t 4096 -P 2 -Q 2 -g 1 --nruns 3 >"$log" 2>&1
rows+=("Rill dgemm (GPU direct)|65536|4096|4 x 1|$(best "$log" 10)")
# a trace of one smaller 4-process run (Perfetto JSON per rank)
timeout 120 "${mpi[@]}" -np 4 $T/testing_dpotrf -N 32768 -t 2048 -P 2 -Q 2 -g 1 \
    --mca profile_trace "$out/trace_potrf_np4" >"$out/trace_run.log" 2>&1
echo
echo "| what | N | NB | processes x GPUs | TFLOP/s |"
echo "| --- | --- | --- | --- | --- |"
for r in "${rows[@]}"; do echo "| ${r//|/ | } |"; done
echo
echo "exec streams' busy fraction and bytes per channel (rank 0's GPU) of each Rill run:"
for f in "$out"/potrf_np4_*.log "$out"/potrf_1x4_*.log "$out"/gemm_np4_*.log; do
    echo "== $(basename "$f")"
    grep -E "^#   GPU" "$f" | tail -4
done
