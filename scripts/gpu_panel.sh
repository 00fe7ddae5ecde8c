#!/usr/bin/env bash
# On a GPU machine: dpotrf's panel solves by dtrsm against by the inverse of the diagonal
# tile (--panel trsm|inverse), next to cusolverDnDpotrf in the same run, with the tile
# kernels' own speeds (bench_gpu_vendor tiles) and, from the second of two traced runs of
# each at the largest N, NB 2048, the exec streams' time per kernel and kernels at once per
# 10 ms (rill_trace_timeline --stats --buckets) and the critical path's longest waits
# (--critical); the traces are packed in traces.tgz (a device run brings back few files);
# "check" first runs the GPU-labelled tests. Logs under $OUT; a table last.
#   scripts/gpu_panel.sh [check] [N...]        (default N: 16384 32768)
set -uo pipefail
out=${OUT:-/tmp/rill-gpu}
mkdir -p "$out"
check=0; [ "${1:-}" = check ] && { check=1; shift; }
sizes=${*:-16384 32768}
gen=(); [ -f build/ptg-gen/parser.c ] && gen=(-DRILLCC_GENERATED_DIR="$PWD/build/ptg-gen")
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DRILL_WERROR=ON "${gen[@]}" >"$out/configure.log" 2>&1 || { tail -30 "$out/configure.log"; exit 1; }
cmake --build build-gpu -j "$(nproc)" >"$out/build.log" 2>&1 || { grep -E "error" "$out/build.log" | head -30; exit 1; }
if [ $check = 1 ]; then
    (cd build-gpu && ctest -L gpu --output-on-failure --timeout 300 >"$out/ctest_gpu.log" 2>&1)
    grep -E "tests passed|Failed|\*\*\*" "$out/ctest_gpu.log" | head -20
fi
V=build-gpu/bench/bench_gpu_vendor T=build-gpu/apps/dla
# the exec streams' busy time in the testers' report (timing events: about 2.6 us of the
# manager's host time per task, nothing at these tile sizes)
export RILL_MCA_device_cuda_timing=1
for nb in 1024 2048; do
    for s in 1 8; do "$V" tiles $nb $s 2; done
done >"$out/tiles.log" 2>&1
grep '^vendor' "$out/tiles.log" | sed 's/vendor,tile_//; s/gpus=1,//; s/calls=16,//'
rows=()
for n in $sizes; do
    "$V" potrf "$n" 3 >"$out/vendor_potrf_$n.log" 2>&1
    rows+=("cusolverDnDpotrf|$n|-|-|$(sed -n 's/.*median_tflops=\([0-9.]*\).*/\1/p' "$out/vendor_potrf_$n.log")|-")
    for nb in 1024 2048; do
        for p in trsm inverse; do
            log=$out/rill_potrf_${n}_${nb}_$p.log
            "$T/testing_dpotrf" -N "$n" -t "$nb" -g 1 --nruns 3 --panel $p >"$log" 2>&1
            b=$(awk '$1 ~ /^[0-9]+$/ && $8+0 > b { b = $8 + 0 } END { printf "%.1f", b / 1000 }' "$log")
            busy=$(awk '$1 ~ /^[0-9]+$/ { g = $8 + 0; k = (g > b); if (k) b = g }
                $2 == "GPU" && k { f = $7 } END { print f }' "$log")
            rows+=("Rill dpotrf|$n|$nb|$p|$b|$busy")
        done
    done
done
nt=$(((n + 2047) / 2048))
for p in trsm inverse; do
    "$T/testing_dpotrf" -N "$n" -t 2048 -g 1 --nruns 2 --panel $p \
        --mca profile_trace "$out/trace_$p" >"$out/traced_$p.log" 2>&1
    echo "== traced dpotrf N=$n NB=2048 --panel $p, second run (from its first POTRF)"
    python3 tools/rill_trace_timeline --stats --buckets 10000 --name dpotrf --nth -$nt \
        --before 0 --after 1e9 "$out/trace_$p.0.json" | grep -A9 "exec streams"
    # the chain that ends at the last POTRF, back to that run's first POTRF
    back=$(python3 -c 'import json, sys
t = sorted(e["ts"] for e in json.load(open(sys.argv[1]))["traceEvents"]
           if e.get("ph") == "X" and e.get("name") == "dpotrf")
print(t[-1] - t[-int(sys.argv[2])])' "$out/trace_$p.0.json" "$nt")
    python3 tools/rill_trace_timeline --critical --name dpotrf --nth -1 --before "$back" \
        "$out/trace_$p.0.json" | tail -4
done
(cd "$out" && tar czf traces.tgz trace_*.json && rm -f trace_*.json)
echo
echo "| what | N | NB | panel | TFLOP/s (best of 3; vendor: median) | exec streams busy |"
echo "| --- | --- | --- | --- | --- | --- |"
for r in "${rows[@]}"; do echo "| ${r//|/ | } |"; done
