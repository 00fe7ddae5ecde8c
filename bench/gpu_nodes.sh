#!/usr/bin/env bash
# Tiles between two nodes simulated on one machine (issue 38): 2 processes x 1 GPU, the
# ranks as 2 nodes (comm_ranks_per_node 1), every engine on the same loopback sockets.
# One tile changed in turn on the two GPUs (bench_gpu_hop: time per hop per tile size, then
# many tiles in flight), for:
#   - Rill GPU direct over UCX (comm_net ucx, comm_net_gpu direct: the managers' tagged sends
#     GPU to GPU);
#   - Rill's pipeline over UCX (comm_net_gpu auto, which is staged over TCP: chunks through
#     pinned host buffers, UCX moving host memory);
#   - Rill host-staged over UCX (comm_gpu_direct off: home, the comm thread's UCX put, back);
#   - Rill host-staged over MPI (comm_net mpi, Open MPI with its TCP transport only), through
#     the pipeline (comm_gpu_staged pipeline, the default) and the whole tile (tile);
#   - MPI alone between two host buffers (bench_hop_ref's mpi_host column), the floor of both;
# next to the floors measured in the same run: ucx_perftest tag_bw with CUDA memory (UCX's
# defaults, and UCX_RNDV_SCHEME=put_ppln), ucp_put_bw with CUDA memory, tag_bw with host
# memory, and NCCL send/recv over its socket transport (bench_hop_ref's NCCL column with
# NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1). A second table: the same machine as one node with
# comm_gpu_direct off and MPI on shared memory: the pipeline, the whole tile and MPI alone.
#   bench/gpu_nodes.sh [build dir] [hops] [max bytes]  (default build-gpu, 20, 128 MiB)
# UCX: the build's (ucx_perftest from UCX_BIN, default: next to the build's libucp).
set -uo pipefail
B=${1:-build-gpu}
hops=${2:-20}
max=${3:-134217728}
out=${OUT:-/tmp/rill-gpu}
mkdir -p "$out"
export UCX_TLS=tcp,cuda_copy,self
mpi=(mpirun --oversubscribe --bind-to none -np 2 --mca pml ob1 --mca btl self,tcp -x UCX_TLS)
# one node, MPI on shared memory (ob1's vader)
mpi_sm=(mpirun --oversubscribe --bind-to none -np 2 --mca pml ob1 --mca btl self,vader -x UCX_TLS)
[ "$(id -u)" = 0 ] && mpi+=(--allow-run-as-root) && mpi_sm+=(--allow-run-as-root)
nodes=(--mca comm_ranks_per_node 1)
modes="gpu_ucx pipe_ucx staged_ucx staged_mpi tile_mpi sm_pipe sm_tile"
for mode in $modes; do
    run=("${mpi[@]}")
    case $mode in
    gpu_ucx) mca=("${nodes[@]}" --mca comm_net ucx --mca comm_net_gpu direct) ;;
    pipe_ucx) mca=("${nodes[@]}" --mca comm_net ucx) ;;
    staged_ucx) mca=("${nodes[@]}" --mca comm_net ucx --mca comm_gpu_direct off) ;;
    staged_mpi) mca=("${nodes[@]}" --mca comm_net mpi) ;;
    tile_mpi) mca=("${nodes[@]}" --mca comm_net mpi --mca comm_gpu_staged tile) ;;
    sm_pipe) run=("${mpi_sm[@]}") mca=(--mca comm_gpu_direct off) ;;
    sm_tile) run=("${mpi_sm[@]}") mca=(--mca comm_gpu_direct off --mca comm_gpu_staged tile) ;;
    esac
    timeout 300 "${run[@]}" "$B/bench/bench_gpu_hop" "$hops" "$max" "${mca[@]}" \
        >"$out/nodes_$mode.log" 2>&1 || echo "bench_gpu_hop ($mode) failed: $(tail -3 "$out/nodes_$mode.log")"
done
NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 timeout 200 "${mpi[@]}" -x NCCL_P2P_DISABLE -x NCCL_SHM_DISABLE \
    "$B/bench/bench_hop_ref" "$hops" >"$out/nodes_nccl.log" 2>&1 ||
    echo "bench_hop_ref failed: $(tail -3 "$out/nodes_nccl.log")"
timeout 200 "${mpi_sm[@]}" "$B/bench/bench_hop_ref" "$hops" >"$out/nodes_ref_sm.log" 2>&1 ||
    echo "bench_hop_ref (shared memory) failed: $(tail -3 "$out/nodes_ref_sm.log")"
# ucx_perftest, GPU 0 -> GPU 1
ucxlib=$(ldd "$B/librill.so" | awk '/libucp.so/ { print $3 }' | xargs -r dirname)
ubin=${UCX_BIN:-$ucxlib/../bin}
pt() { # pt <name> <size> <perftest args...>
    local name=$1 size=$2
    shift 2
    CUDA_VISIBLE_DEVICES=0 LD_LIBRARY_PATH=$ucxlib timeout 60 "$ubin/ucx_perftest" -p 13337 \
        >"$out/pt_srv_$name.log" 2>&1 &
    sleep 1
    CUDA_VISIBLE_DEVICES=1 LD_LIBRARY_PATH=$ucxlib timeout 60 "$ubin/ucx_perftest" 127.0.0.1 \
        -p 13337 -s "$size" -n "$(( size > 20000000 ? 8 : 30 ))" -w 2 "$@" >"$out/pt_$name.log" 2>&1
    wait
    awk '/Final/ { printf "%.0f", $7 * 1.048576 }' "$out/pt_$name.log" # MB/s of 2^20 B
}
# us per hop of size $1 in log $2 (first table: rows start with the tile bytes)
col() { awk -v b="$1" -v c="$3" '$1 == b { print $c; exit }' "$2"; }
echo "| tile | Rill GPU direct over UCX | Rill pipeline over UCX | Rill whole tile over UCX | Rill pipeline over MPI | Rill whole tile over MPI | MPI alone | NCCL sockets | ucx_perftest tag CUDA (MB/s) | tag CUDA put_ppln | put CUDA | tag host |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
for b in 4096 65536 1048576 16777216 134217728; do
    [ "$b" -gt "$max" ] && continue
    t1="" t2="" t3="" t4=""
    if [ "$b" -ge 1048576 ]; then
        t1=$(pt tag_$b "$b" -t tag_bw -m cuda)
        t2=$(UCX_RNDV_SCHEME=put_ppln pt ppln_$b "$b" -t tag_bw -m cuda)
        t3=$(pt put_$b "$b" -t ucp_put_bw -m cuda)
        t4=$(pt host_$b "$b" -t tag_bw -m host)
    fi
    printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n" "$((b / 1024)) KiB" \
        "$(col $b "$out/nodes_gpu_ucx.log" 3)" "$(col $b "$out/nodes_pipe_ucx.log" 3)" \
        "$(col $b "$out/nodes_staged_ucx.log" 3)" \
        "$(col $b "$out/nodes_staged_mpi.log" 3)" "$(col $b "$out/nodes_tile_mpi.log" 3)" \
        "$(col $b "$out/nodes_nccl.log" 7)" "$(col $b "$out/nodes_nccl.log" 5)" \
        "$t1" "$t2" "$t3" "$t4"
done
echo
echo "One node, comm_gpu_direct off, MPI on shared memory (us per hop):"
echo "| tile | Rill pipeline | Rill whole tile | MPI alone | pipeline / MPI alone |"
echo "| --- | --- | --- | --- | --- |"
for b in 4096 65536 1048576 16777216 134217728; do
    [ "$b" -gt "$max" ] && continue
    p=$(col $b "$out/nodes_sm_pipe.log" 3) t=$(col $b "$out/nodes_sm_tile.log" 3)
    a=$(col $b "$out/nodes_ref_sm.log" 7)
    r=$(awk -v p="$p" -v a="$a" 'BEGIN { if (p != "" && a > 0) printf "%.2f", p / a }')
    printf "| %s | %s | %s | %s | %s |\n" "$((b / 1024)) KiB" "$p" "$t" "$a" "$r"
done
echo "(Rill and NCCL: us per hop, producer kernel end to consumer kernel start on the other GPU;"
echo " ucx_perftest: MB/s of 10^6 bytes, GPU 0 to GPU 1; all over loopback TCP)"
for mode in $modes; do
    echo "# tiles in flight, $mode:"
    sed -n '/in flight/,$p' "$out/nodes_$mode.log" | head -12
done
