#!/usr/bin/env bash
# On the 4-GPU machine (nvidia-h200-x4). Each part fits one device call (10 minutes).
#   scripts/gpu_four.sh [check|bench|ab]       (default bench)
# check: the DLA testers with -x on ragged sizes on 4 processes x 1 GPU (a 2 x 2 grid, the
#   factorizations skewed, their default; GPU direct, host-staged with comm_gpu_direct =
#   off, and GPU direct with a landing and a put stream per GPU, device_cuda_remote_lanes 1;
#   dpotrf also on the default 4 x 1 grid and on 2 x 2 block-cyclic) and on 1 process x 4
#   GPUs, then the
#   tests labelled gpu but test_alloc_sweep_gpu (CHECK_EXCLUDE; 216 s alone on an H100), within
#   CHECK_S seconds (300): on this machine those that need 2 GPUs run too. They took 405 s
#   on 4 x H100 (2026-11-27): within the 10 minutes of a call the tester runs and the build
#   leave them less, so CHECK_S=0 skips them, for a call of their own. Exit 1 when a tester
#   run failed.
# bench: one run: dpotrf on 4 processes x 1 GPU (tiles GPU to GPU; the testers' default
#   grid, 4 x 1 skewed) at N = 65536 and 98304 next to cusolverMgPotrf on the same 4 GPUs
#   and to one process driving the 4 GPUs, and at N = 98304 on the 2 x 2 grid block-cyclic
#   and skewed; dgemm on 4 processes x 1 GPU (2 x 2, block-cyclic) at N = 65536 next to one
#   cublasDgemm per GPU (4 at once); the exec streams' busy fraction and the bytes per
#   channel of each Rill run (every rank's GPU lines of its best run), and a trace of one
#   4-process run (N = 32768): what held the tiles from other ranks and the whole hop from
#   the producer's kernel (rill_trace_timeline --landings), each manager's launch time
#   (--launches), the exec streams idle for a landing (--waits) and each rank's comm thread
#   (turns over 0.5 ms, late wake-ups). BENCH_CTEST=regex first runs the tests labelled gpu
#   that match it (after the build). The earlier runs' rows (1 lane; served once per turn;
#   the landing defaults before 35908da) are in bench/README.md.
# ab: dpotrf on 4 processes x 1 GPU (N = AB_N, 98304 by default) with each variant of
#   AB_VARIANTS (lines "name|options" or "name|options|1x4" for one process driving the 4
#   GPUs; the logs in $OUT/ab.tgz; default: the distributions (block-cyclic gives one rank
#   of a 2 x 2 grid 3% more than the average of the triangle's work and the diagonal tiles
#   to 2 of the 4 ranks; scripts/dist_balance.py): the 2 x 2 grid block-cyclic and skewed,
#   the 4 x 1 grid skewed and one process with its tiles over the GPUs skewed;
#   scripts/gpu_ab.sh gives 4 processes -P 2 -Q 2, which a variant's -P 4 -Q 1
#   overrides), AB_ROUNDS
#   rounds (2) of 2 runs each, the variants interleaved (scripts/gpu_ab.sh);
#   per variant the best and each round's best, and every rank's GPU lines of its best run.
# The table goes to standard output; every log (and the trace) is packed into $OUT/four.tgz
# ($OUT defaults to /tmp/rill-gpu).
set -uo pipefail
what=${1:-bench}
case $what in check | bench | ab) ;; *) echo "usage: $0 [check|bench|ab]" >&2; exit 2 ;; esac
out=${OUT:-/tmp/rill-gpu}
work=$(mktemp -d /tmp/rill-four.XXXXXX)
mkdir -p "$out"
pack() { tar czf "$out/four.tgz" -C "$work" . 2>/dev/null; }
trap pack EXIT
# the exec streams' busy time in the testers' report needs the GPU operations timed (off by
# default: about 2.6 us of the manager's host time per task, nothing at these tile sizes)
export RILL_MCA_device_cuda_timing=1
nvidia-smi -L
ngpu=$(nvidia-smi -L | grep -c '^GPU')
[ "$ngpu" -ge 4 ] || { echo "needs 4 GPUs, this machine has $ngpu"; exit 77; }
gen=()
[ -f build/ptg-gen/parser.c ] && gen=(-DRILLCC_GENERATED_DIR="$PWD/build/ptg-gen")
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DRILL_WERROR=ON "${gen[@]}" >"$work/configure.log" 2>&1 &&
    timeout 300 cmake --build build-gpu -j "$(nproc)" >"$work/build.log" 2>&1 ||
    { grep -E "error|Error" "$work/build.log" | head -20; exit 1; }
export RILL_MCA_runtime_watchdog_s=60 RILL_MCA_runtime_watchdog_action=abort
T=build-gpu/apps/dla
V=build-gpu/bench/bench_gpu_vendor
mpi=(mpirun --oversubscribe --bind-to none)
[ "$(id -u)" = 0 ] && mpi+=(--allow-run-as-root)

if [ "$what" = check ]; then
    fails=0
    tester() { # name, timeout, command...
        local name=$1 limit=$2
        shift 2
        timeout "$limit" "$@" >"$work/$name.log" 2>&1
        local rc=$?
        [ $rc = 0 ] || fails=$((fails + 1))
        echo "== $name (rc $rc): $*"
        grep -E "^ *[0-9]|GPU [0-3]:|rror|FAIL" "$work/$name.log" | tail -6
    }
    for gd in auto off; do
        np4=("${mpi[@]}" -np 4 -x "RILL_MCA_comm_gpu_direct=$gd")
        tester "potrf_np4_$gd" 120 "${np4[@]}" $T/testing_dpotrf -N 12001 -t 1000 -P 2 -Q 2 -g 1 -x
        tester "gemm_np4_$gd" 120 "${np4[@]}" $T/testing_dgemm -M 6001 -N 5003 -K 4097 -t 1000 -P 2 -Q 2 -g 1 -x
        tester "posv_np4_$gd" 120 "${np4[@]}" $T/testing_dposv -N 8003 -t 1000 -P 2 -Q 2 -g 1 -x --nrhs 9
    done
    # one landing and one put stream per GPU (4 lanes by default)
    np4=("${mpi[@]}" -np 4)
    lanes=(--mca device_cuda_remote_lanes 1)
    tester potrf_np4_lanes 120 "${np4[@]}" $T/testing_dpotrf -N 12001 -t 1000 -P 2 -Q 2 -g 1 -x "${lanes[@]}"
    tester gemm_np4_lanes 120 "${np4[@]}" $T/testing_dgemm -M 6001 -N 5003 -K 4097 -t 1000 -P 2 -Q 2 -g 1 -x "${lanes[@]}"
    tester posv_np4_lanes 120 "${np4[@]}" $T/testing_dposv -N 8003 -t 1000 -P 2 -Q 2 -g 1 -x --nrhs 9 "${lanes[@]}"
    # the default 4 x 1 grid (skewed, as the 2 x 2 runs above) and the 2 x 2 grid block-cyclic
    tester potrf_np4_4x1 120 "${np4[@]}" $T/testing_dpotrf -N 12001 -t 1000 -g 1 -x
    tester potrf_np4_2x2_cyclic 120 "${np4[@]}" $T/testing_dpotrf -N 12001 -t 1000 -P 2 -Q 2 -g 1 \
        -x --dist cyclic
    tester potrf_1x4 120 $T/testing_dpotrf -N 12001 -t 1000 -g 4 -x
    tester gemm_1x4 120 $T/testing_dgemm -M 6001 -N 5003 -K 4097 -t 1000 -g 4 -x
    echo "== $fails tester run(s) failed"
    check_s=${CHECK_S:-300}
    case $check_s in '' | *[!0-9]*) echo "CHECK_S must be a number of seconds, got '$check_s'" >&2; exit 2 ;; esac
    [ "$check_s" -gt 0 ] || exit $((fails > 0))
    (cd build-gpu && RILL_MCA_device_cuda_memory_use=3 RILL_MCA_runtime_num_cores=2 \
        timeout "$check_s" ctest -L gpu -E "${CHECK_EXCLUDE:-^test_alloc_sweep_gpu$}" --timeout 150 --output-on-failure \
        >"$work/ctest_gpu.log" 2>&1)
    [ $? = 124 ] && echo "== the GPU tests cut off at CHECK_S = $check_s s, after" \
        "$(grep -cE '^ *[0-9]+/[0-9]+ Test' "$work/ctest_gpu.log") of them"
    grep -E "tests passed|\*\*\*Failed|Timeout|Exception" "$work/ctest_gpu.log" | tail -20
    exit $((fails > 0))
fi

if [ -n "${BENCH_CTEST:-}" ]; then
    (cd build-gpu && timeout 300 ctest -L gpu -R "$BENCH_CTEST" --timeout 150 --output-on-failure \
        >"$work/ctest_gpu.log" 2>&1)
    grep -E "tests passed|\*\*\*Failed|Timeout|Exception" "$work/ctest_gpu.log" | tail -20
fi
. "$(dirname "$0")/gpu_logs.sh" # best, busy, vend
if [ "$what" = ab ]; then
    AB_VARIANTS=${AB_VARIANTS:-"2 x 2 grid, block-cyclic|--dist cyclic
2 x 2 grid, skewed (defaults)|
4 x 1 grid, skewed (its default)|-P 4 -Q 1
one process, skewed (defaults)||1x4"} AB_N=${AB_N:-98304} AB_PROCS=4x1 AB_BUILD=0 \
        OUT=$out scripts/gpu_ab.sh
    exit $?
fi
rows=()
for n in 65536 98304; do
    timeout 200 "$V" mgpotrf "$n" 4 1024 3 >"$work/mgpotrf_$n.log" 2>&1
    rows+=("cusolverMgPotrf|$n|1024|1 x 4|$(vend "$work/mgpotrf_$n.log")")
    log=$work/potrf_np4_$n.log # the testers' default grid: 4 x 1, skewed
    timeout 200 "${mpi[@]}" -np 4 $T/testing_dpotrf -N "$n" -t 2048 -g 1 --nruns 3 >"$log" 2>&1
    rows+=("Rill dpotrf (GPU direct, 4 x 1 grid, skewed)|$n|2048|4 x 1|$(best "$log" 8)")
done
# the 2 x 2 grid, block-cyclic (one rank 3% more than the average of the triangle's work at
# this size, the diagonal tiles on 2 ranks of 4) and skewed (the tile rows shifted)
for dist in cyclic skewed; do
    log=$work/potrf_np4_98304_2x2_$dist.log
    timeout 200 "${mpi[@]}" -np 4 $T/testing_dpotrf -N 98304 -t 2048 -P 2 -Q 2 -g 1 --nruns 3 \
        --dist $dist >"$log" 2>&1
    rows+=("Rill dpotrf (GPU direct, 2 x 2 grid, $dist)|98304|2048|4 x 1|$(best "$log" 8)")
done
log=$work/potrf_1x4_98304.log
timeout 200 $T/testing_dpotrf -N 98304 -t 2048 -g 4 --nruns 3 >"$log" 2>&1
rows+=("Rill dpotrf (one process)|98304|2048|1 x 4|$(best "$log" 8)")
for g in 0 1 2 3; do # one cublasDgemm per GPU, all at once
    CUDA_VISIBLE_DEVICES=$g timeout 200 "$V" gemm 32768 3 >"$work/gemm_gpu$g.log" 2>&1 &
done
wait
sum=$(for g in 0 1 2 3; do vend "$work/gemm_gpu$g.log"; done | awk '{ s += $1 } END { printf "%.1f", s }')
rows+=("4 x cublasDgemm (N=32768 each)|32768|-|4 x 1|$sum")
log=$work/gemm_np4_65536.log
timeout 200 "${mpi[@]}" -np 4 $T/testing_dgemm -N 65536 -t 4096 -P 2 -Q 2 -g 1 --nruns 3 >"$log" 2>&1
rows+=("Rill dgemm (GPU direct)|65536|4096|4 x 1|$(best "$log" 10)")
# a trace of one smaller 4-process run (Perfetto JSON per rank), after the testers' warm-up
# run (the first call of each cuBLAS / cuSOLVER kernel loads its module, tens of ms); what
# held the tiles from other ranks in the timed run (from its first dpotrf, the 17th of the
# trace: 16 tile columns a run)
traced() { # name, options...
    local name=$1
    shift
    timeout 120 "${mpi[@]}" -np 4 $T/testing_dpotrf -N 32768 -t 2048 -g 1 "$@" \
        --mca profile_trace "$work/trace_$name" --mca profile_stats 1 >"$work/trace_run_$name.log" 2>&1
    python3 tools/rill_trace_timeline --landings --name dpotrf --nth 16 --before 1000 \
        --after 1000000 "$work"/trace_$name.*.json >"$work/landings_$name.txt" 2>&1
    python3 tools/rill_trace_timeline --launches --name dpotrf --nth 16 --before 1000 \
        --after 1000000 "$work"/trace_$name.*.json >"$work/launches_$name.txt" 2>&1
    python3 tools/rill_trace_timeline --waits --name dpotrf --nth 16 --before 1000 \
        --after 1000000 "$work"/trace_$name.*.json >"$work/waits_$name.txt" 2>&1
}
traced defaults
echo
echo "# $(date -u +%F) on $ngpu x $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1), Rill ${RILL_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null)}"
echo "| what | N | NB | processes x GPUs | TFLOP/s |"
echo "| --- | --- | --- | --- | --- |"
for r in "${rows[@]}"; do echo "| ${r//|/ | } |"; done
echo
echo "exec streams' busy fraction and bytes per channel (every rank's GPUs, best run) of each Rill run:"
for f in "$work"/potrf_np4_*.log "$work"/potrf_1x4_*.log "$work"/gemm_np4_*.log \
    "$work"/trace_run_*.log; do
    echo "== $(basename "$f")"
    c=8
    case $f in *gemm*) c=10 ;; esac
    busy "$f" $c
    grep -E "rror|abort" "$f" | head -3
done
echo "== tiles from other ranks, N = 32768 traced (rill_trace_timeline --landings):"
grep -E "^rank|more than" "$work/landings_defaults.txt"
grep -E "comm thread:" "$work/trace_run_defaults.log"
echo "== the GPU managers' launches, N = 32768 traced (rill_trace_timeline --launches):"
grep -E "^rank" "$work/launches_defaults.txt"
echo "== exec streams idle for a landing, N = 32768 traced (rill_trace_timeline --waits):"
cat "$work/waits_defaults.txt"
exit 0
