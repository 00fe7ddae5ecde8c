#!/bin/sh
# Tiled dpotrf and dgemm GFLOP/s (apps/dla testers) at several N and tile sizes, on
# 1 process x 2 cores and 2 processes x 1 core, next to one LAPACKE_dpotrf / cblas_dgemm
# call with 2 OpenBLAS threads measured in the same run. Prints one table (median of the
# runs of each configuration) and writes it as CSV too (for bench/plot.py).
#
#   bench/bench_dla.sh [build_dir]
#   env: SIZES="4000 8000" NBS="192 256 384 512" NRUNS=3 OPS="dpotrf dgemm" CORES=2
#        NP2=1 (0: skip the 2-process rows) MPIEXEC=mpiexec MPIFLAGS="--oversubscribe"
#        CSV=file (default bench/results/bench_dla-HOST-DATE.csv; CSV= writes none)
set -u
build=${1:-build}
sizes=${SIZES:-"4000 8000"}
nbs=${NBS:-"192 256 384 512"}
nruns=${NRUNS:-3}
ops=${OPS:-"dpotrf dgemm"}
cores=${CORES:-2}
np2=${NP2:-1}
mpiexec=${MPIEXEC:-mpiexec}
mpiflags=${MPIFLAGS:---oversubscribe}
here=$(cd "$(dirname "$0")" && pwd)
csv=${CSV-"$here/results/bench_dla-$(uname -n)-$(date '+%Y%m%d-%H%M%S').csv"}
[ "$(id -u)" = 0 ] && mpiflags="$mpiflags --allow-run-as-root"

bin=$build/apps/dla
for op in $ops; do
    if [ ! -x "$bin/testing_$op" ]; then
        echo "bench_dla: $bin/testing_$op not found; build it first (cmake --build $build" \
            "--target testing_$op) or pass the build folder" >&2
        exit 1
    fi
done
if [ "$np2" = 1 ] && ! command -v "$mpiexec" >/dev/null 2>&1; then
    echo "bench_dla: $mpiexec not found: the 2-process rows are skipped" >&2
    np2=0
fi

# the CSV file is created before anything runs, so a bad path is refused at once
if [ -n "$csv" ]; then
    mkdir -p "$(dirname "$csv")" 2>/dev/null
    if ! (: >"$csv") 2>/dev/null; then
        echo "bench_dla: cannot write the CSV file '$csv' (set CSV=file, or CSV= for none)" >&2
        exit 2
    fi
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT

# median of the gflops column (third from the end: testing_dgemm's rows have M N K where the
# others have N) of the result rows a tester printed on stdin
median() {
    awk '$1 ~ /^[0-9]+$/ { print $(NF - 2) }' | sort -g | awk '{ v[NR] = $1 }
        END { if (NR == 0) print "fail"; else if (NR % 2) print v[(NR + 1) / 2];
              else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# run "label" command...: prints the median GFLOP/s, or "fail"
run() {
    echo "## $*" >>"$log"
    "$@" >"$log.out" 2>>"$log"
    rc=$?
    cat "$log.out" >>"$log"
    if [ $rc -ne 0 ]; then
        rm -f "$log.out"
        echo fail
        return
    fi
    median <"$log.out"
    rm -f "$log.out"
}

# the header, on stdout and in the CSV file
header() {
    printf '# bench_dla: %s, %s\n' "$(date '+%Y-%m-%d %H:%M:%S')" "$(uname -n)"
    printf '# %s\n' "$("$bin/testing_dpotrf" -N 0 -t 1 -c "$cores" 2>/dev/null | head -1 | cut -c3-)"
    printf '# median of %s runs; ref = one LAPACKE_dpotrf / cblas_dgemm call, %s OpenBLAS threads\n' \
        "$nruns" "$cores"
}
hdr=$(header)
printf '%s\n' "$hdr"
[ -n "$csv" ] && printf '%s\nop,N,NB,config,procs,cores_per_proc,gflops,ref_gflops,vs_ref\n' \
    "$hdr" >>"$csv"
printf '%-7s %6s %5s %-14s %9s %9s %7s\n' op N NB config GFLOP/s ref_GF/s vs_ref

# row op N NB procs cores_per_proc gflops ref ratio (NB "-": the reference): one table row
# and one CSV row ("-" becomes an empty field)
row() {
    if [ "$3" = - ]; then label="ref ${5}thr"; else label="$4 proc$([ "$4" = 1 ] || echo s) x $5"; fi
    printf '%-7s %6s %5s %-14s %9s %9s %7s\n' "$1" "$2" "$3" "$label" "$6" "$7" "$8"
    if [ -n "$csv" ]; then
        if [ "$3" = - ]; then config=ref; nb=; else config=rill; nb=$3; fi
        ratio=$8
        [ "$ratio" = - ] && ratio=
        echo "$1,$2,$nb,$config,$4,$5,$6,$7,$ratio" >>"$csv"
    fi
}

for op in $ops; do
    for n in $sizes; do
        ref=$(run "$bin/testing_$op" -N "$n" -c "$cores" --ref --nruns "$nruns")
        row "$op" "$n" - 1 "$cores" "$ref" "$ref" -
        for nb in $nbs; do
            gf=$(run "$bin/testing_$op" -N "$n" -t "$nb" -c "$cores" --nruns "$nruns")
            ratio=$(awk -v a="$gf" -v b="$ref" 'BEGIN { if (a + 0 > 0 && b + 0 > 0)
                printf "%.2f", a / b; else print "-" }')
            row "$op" "$n" "$nb" 1 "$cores" "$gf" "$ref" "$ratio"
            if [ "$np2" = 1 ]; then
                gf=$(run "$mpiexec" $mpiflags -np 2 "$bin/testing_$op" -N "$n" -t "$nb" -P 2 -Q 1 \
                    -c 1 --nruns "$nruns")
                ratio=$(awk -v a="$gf" -v b="$ref" 'BEGIN { if (a + 0 > 0 && b + 0 > 0)
                    printf "%.2f", a / b; else print "-" }')
                row "$op" "$n" "$nb" 2 1 "$gf" "$ref" "$ratio"
            fi
        done
    done
done
[ -n "$csv" ] && echo "# the table as CSV: $csv"
if grep -q "error" "$log"; then
    echo "# errors were reported; the testers' output:" >&2
    grep -B2 "error" "$log" | head -40 >&2
fi
