#!/usr/bin/env bash
# On a GPU machine: A/B runs of dpotrf within one call, the variants interleaved so that a
# machine's drift falls on all of them alike.
#   AB_VARIANTS="name|options|PxG ..." scripts/gpu_ab.sh
# AB_VARIANTS: one variant per line, "name|tester options|PxG": P processes (mpirun --bind-to
# none; a 2 x 2 grid for 4, 2 x 1 for 2) of G GPUs each (-g G); PxG defaults to AB_PROCS
# (1x1). AB_N (32768) and AB_NB (2048): the matrix and its tiles; AB_ROUNDS (2) rounds of
# AB_RUNS (2) timed runs each. Prints per variant the best TFLOP/s and each round's best,
# then every rank's GPU lines of its best run (exec streams busy, bytes per channel). The logs
# are packed into $OUT/ab.tgz ($OUT: /tmp/rill-gpu by default); exit 0, 1 when the build
# fails, 2 on a bad variant, 77 when the machine has fewer GPUs than a variant needs.
# Example, one GPU: the defaults against the inverse panel in fewer library calls:
#   AB_VARIANTS="defaults||1x1
#   fewer calls|--gpu-trmm-block 0 --gpu-trinv-leaf 1024|1x1" scripts/gpu_ab.sh
set -uo pipefail
dest=${OUT:-/tmp/rill-gpu}
mkdir -p "$dest"
out=$(mktemp -d /tmp/rill-ab.XXXXXX)
trap 'tar czf "$dest/ab.tgz" -C "$out" . 2>/dev/null; rm -rf "$out"' EXIT
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
n=${AB_N:-32768} nb=${AB_NB:-2048}
variants=${AB_VARIANTS:-"defaults||${AB_PROCS:-1x1}"}
mapfile -t vs <<<"$variants"
for v in "${vs[@]}"; do # check every variant before any run
    IFS='|' read -r name _ procs <<<"$v"
    procs=${procs:-${AB_PROCS:-1x1}}
    [[ -n $name && $procs =~ ^([124])x([1-8])$ ]] ||
        { echo "variant '$v': expected 'name|options|PxG', P 1, 2 or 4, G 1..8" >&2; exit 2; }
    need=$((BASH_REMATCH[1] * BASH_REMATCH[2]))
    [ "$need" -le "$ngpu" ] || { echo "variant '$name' needs $need GPUs, this machine has $ngpu"; exit 77; }
done
if [ "${AB_BUILD:-1}" = 1 ]; then
    gen=()
    [ -f build/ptg-gen/parser.c ] && gen=(-DRILLCC_GENERATED_DIR="$PWD/build/ptg-gen")
    cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DRILL_WERROR=ON "${gen[@]}" \
        >"$out/configure.log" 2>&1 &&
        cmake --build build-gpu -j "$(nproc)" --target testing_dpotrf >"$out/build.log" 2>&1 ||
        { grep -E "error" "$out/build.log" | head -20; exit 1; }
fi
T=build-gpu/apps/dla
mpi=(mpirun --oversubscribe --bind-to none)
[ "$(id -u)" = 0 ] && mpi+=(--allow-run-as-root)
# the exec streams' busy time in the testers' report (timing events)
export RILL_MCA_device_cuda_timing=1
for r in $(seq 1 "${AB_ROUNDS:-2}"); do
    for i in "${!vs[@]}"; do
        IFS='|' read -r _ o procs <<<"${vs[$i]}"
        procs=${procs:-${AB_PROCS:-1x1}}
        read -r -a opts <<<"$o"
        p=${procs%x*} g=${procs#*x}
        run=("$T/testing_dpotrf" -N "$n" -t "$nb" -g "$g" --nruns "${AB_RUNS:-2}")
        case $p in
        1) timeout 300 "${run[@]}" "${opts[@]}" ;;
        2) timeout 300 "${mpi[@]}" -np 2 "${run[@]}" -P 2 -Q 1 "${opts[@]}" ;;
        4) timeout 300 "${mpi[@]}" -np 4 "${run[@]}" -P 2 -Q 2 "${opts[@]}" ;;
        esac >"$out/ab_${i}_$r.log" 2>&1
    done
done
. "$(dirname "$0")/gpu_logs.sh" # best, busy
echo "# $(date -u +%F) on $ngpu x $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1), Rill ${RILL_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null)}, dpotrf N = $n NB $nb"
echo "| variant | options | processes x GPUs | best TFLOP/s | each round's best |"
echo "| --- | --- | --- | --- | --- |"
for i in "${!vs[@]}"; do
    IFS='|' read -r name o procs <<<"${vs[$i]}"
    each=$(for f in "$out"/ab_${i}_*.log; do printf "%s " "$(best "$f")"; done)
    b=$(echo "$each" | tr ' ' '\n' | sort -g | tail -1)
    echo "| $name | $o | ${procs:-${AB_PROCS:-1x1}} | $b | $each|"
done
for i in "${!vs[@]}"; do
    echo "== ${vs[$i]%%|*}"
    cat "$out"/ab_${i}_*.log | busy /dev/stdin
    grep -hE "rror|abort" "$out"/ab_${i}_*.log | head -3
done
exit 0
