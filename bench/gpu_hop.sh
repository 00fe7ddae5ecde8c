#!/usr/bin/env bash
# The remote-dependency table of docs (bench/README.md): one tile changed in turn on two
# processes' GPUs, time per hop, in one run: Rill's chain (bench_gpu_hop: GPU direct with
# early announcements, GPU direct without them, host-staged) next to the same chain written
# by hand with no runtime (bench_hop_ref: copy engine + semaphore, SM put + semaphore,
# NCCL send/recv, and a local kernel chain on one GPU).
#   bench/gpu_hop.sh [build dir] [hops]     (default build-gpu, 200; logs under $OUT)
set -uo pipefail
B=${1:-build-gpu}
hops=${2:-200}
out=${OUT:-/tmp/rill-gpu}
mkdir -p "$out"
mpi=(mpirun --oversubscribe --bind-to none -np 2)
[ "$(id -u)" = 0 ] && mpi+=(--allow-run-as-root)
timeout 150 "${mpi[@]}" "$B/bench/bench_hop_ref" "$hops" >"$out/hop_ref.log" 2>&1 ||
    echo "bench_hop_ref failed: $(tail -3 "$out/hop_ref.log")"
for mode in early direct staged; do
    case $mode in
    early) mca=() ;;
    direct) mca=(--mca dtd_gpu_early 0) ;;
    staged) mca=(--mca comm_gpu_direct off) ;;
    esac
    timeout 200 "${mpi[@]}" "$B/bench/bench_gpu_hop" "$hops" "${mca[@]}" >"$out/hop_$mode.log" 2>&1 ||
        echo "bench_gpu_hop ($mode) failed: $(tail -3 "$out/hop_$mode.log")"
done
# us per hop of size $1 in log $2, column $3 (rows: tile_bytes first)
col() { awk -v b="$1" -v c="$3" '$1 == b { print $c; exit }' "$2"; }
echo "| tile | Rill GPU direct, early | behind | landing wait | Rill GPU direct, by request |" \
    "Rill host-staged | by hand: copy engine + semaphore | by hand: SM put + semaphore |" \
    "NCCL send/recv | local kernel chain |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
for b in 4096 65536 1048576 16777216 134217728; do
    printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n" "$((b / 1024)) KiB" \
        "$(col $b "$out/hop_early.log" 3)" "$(col $b "$out/hop_early.log" 7)" \
        "$(col $b "$out/hop_early.log" 8)" \
        "$(col $b "$out/hop_direct.log" 3)" "$(col $b "$out/hop_staged.log" 3)" \
        "$(col $b "$out/hop_ref.log" 3)" "$(col $b "$out/hop_ref.log" 4)" \
        "$(col $b "$out/hop_ref.log" 5)" "$(col $b "$out/hop_ref.log" 6)"
done
echo "(us per hop: producer kernel end to consumer kernel start on the other GPU, the tile and"
echo " one kernel included; behind: of rank 0's puts, those enqueued behind their producer;"
echo " landing wait: rank 0's landing stream, mean us from reaching a landing's semaphore wait"
echo " to the sender's signal, measured with device_cuda_timing 1 only: - otherwise)"
echo
echo "many tiles in flight (bench_gpu_hop's second table), GPU direct with early announcements:"
sed -n '/many tiles in flight/,$p' "$out/hop_early.log"
echo "host-staged:"
sed -n '/many tiles in flight/,$p' "$out/hop_staged.log" | tail -n +3
