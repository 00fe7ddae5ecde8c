#!/usr/bin/env bash
# On a GPU machine: how dpotrf's speed per GPU changes with the matrix size and the number
# of GPUs, to tell what holds the 2-GPU figure (the per-GPU speed at that size, or what the
# second GPU adds). One GPU: cusolverDnDpotrf and Rill's dpotrf (NB 2048) at each N of
# SCALE_N (default 32768 49152 65536). With two GPUs or more, also at N = SCALE_MG_N
# (65536): cusolverMgPotrf on 2 GPUs (tile 1024), Rill on one process x 2 GPUs and on 2
# processes x 1 GPU (the skewed distribution, the testers' default there, and block-cyclic
# rows). Each Rill row with rank 0's exec streams' busy fraction. Logs under
# $OUT (default /tmp/rill-gpu); a table last.
#   scripts/gpu_scale.sh
set -uo pipefail
out=${OUT:-/tmp/rill-gpu}
mkdir -p "$out"
gen=()
[ -f build/ptg-gen/parser.c ] && gen=(-DRILLCC_GENERATED_DIR="$PWD/build/ptg-gen")
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DRILL_WERROR=ON "${gen[@]}" \
    >"$out/configure.log" 2>&1 || { tail -30 "$out/configure.log"; exit 1; }
cmake --build build-gpu -j "$(nproc)" --target testing_dpotrf bench_gpu_vendor \
    >"$out/build.log" 2>&1 || { grep -E "error" "$out/build.log" | head -30; exit 1; }
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
[ "$ngpu" -ge 1 ] || { echo "no GPU"; exit 77; }
V=build-gpu/bench/bench_gpu_vendor T=build-gpu/apps/dla
mpi=(mpirun --oversubscribe --bind-to none)
[ "$(id -u)" = 0 ] && mpi+=(--allow-run-as-root)
# the exec streams' busy time in the testers' report (timing events)
export RILL_MCA_device_cuda_timing=1
. "$(dirname "$0")/gpu_logs.sh" # best, busy, vend
# the best run's TFLOP/s and rank 0's first GPU line's busy fraction, of a tester log
rill() {
    echo "$(best "$1")|$(busy "$1" | awk 'NR == 1 { for (i = 1; i < NF; i++) if ($i == "busy") print $(i + 1) }')"
}
rows=()
for n in ${SCALE_N:-32768 49152 65536}; do
    timeout 300 "$V" potrf "$n" 3 >"$out/vendor_potrf_$n.log" 2>&1
    v=$(vend "$out/vendor_potrf_$n.log")
    rows+=("cusolverDnDpotrf|$n|1|$v|$v|-")
    log=$out/rill_potrf_${n}_1gpu.log
    timeout 300 "$T/testing_dpotrf" -N "$n" -t 2048 -g 1 --nruns 3 >"$log" 2>&1
    IFS='|' read -r t busy <<<"$(rill "$log")"
    rows+=("Rill dpotrf, 1 GPU|$n|1|$t|$t|$busy")
done
if [ "$ngpu" -ge 2 ]; then
    n=${SCALE_MG_N:-65536}
    timeout 300 "$V" mgpotrf "$n" 2 1024 3 >"$out/vendor_mgpotrf_$n.log" 2>&1
    v=$(vend "$out/vendor_mgpotrf_$n.log")
    rows+=("cusolverMgPotrf, 2 GPUs|$n|2|$v|$(awk -v v="$v" 'BEGIN { printf "%.1f", v / 2 }')|-")
    # the 2 x 1 grid with the testers' default distribution (skewed) and block-cyclic
    for how in 1x2 2x1 "2x1 block-cyclic"; do
        log=$out/rill_potrf_${n}_${how// /_}.log
        dist=(); [ "$how" = "2x1 block-cyclic" ] && dist=(--dist cyclic)
        if [ "$how" = 1x2 ]; then
            timeout 300 "$T/testing_dpotrf" -N "$n" -t 2048 -g 2 --nruns 3 >"$log" 2>&1
        else
            timeout 300 "${mpi[@]}" -np 2 "$T/testing_dpotrf" -N "$n" -t 2048 -g 1 --nruns 3 \
                "${dist[@]}" >"$log" 2>&1
        fi
        IFS='|' read -r t busy <<<"$(rill "$log")"
        rows+=("Rill dpotrf, $how|$n|2|$t|$(awk -v v="$t" 'BEGIN { printf "%.1f", v / 2 }')|$busy")
    done
fi
echo "# $(date -u +%F) on $ngpu x $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1), Rill ${RILL_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null)}"
echo "| what | N | GPUs | TFLOP/s (Rill: best of 3; vendor: median) | per GPU | rank 0's first GPU busy |"
echo "| --- | --- | --- | --- | --- | --- |"
for r in "${rows[@]}"; do echo "| ${r//|/ | } |"; done
