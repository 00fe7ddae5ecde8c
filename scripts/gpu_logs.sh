# Sourced by the scripts/gpu_*.sh that read the DLA testers' and bench_gpu_vendor's logs.
# best LOG [COL]: the best run's TFLOP/s (column COL of the result lines: GFLOP/s, 8 for
#   dpotrf, 10 for dgemm; 8 by default)
# busy LOG [COL]: the GPU lines ("GPU n: exec streams busy ...", "rank r, GPU n: ..." with
#   several ranks; rank 0's only before 2026-11-27 13:30 UTC) of that best run
# vend LOG: bench_gpu_vendor's median TFLOP/s (its last line)
best() {
    awk -v c="${2:-8}" '$1 ~ /^[0-9]+$/ && $c+0 > b { b = $c + 0 }
        END { printf "%.1f", b / 1000 }' "$1"
}
busy() {
    awk -v c="${2:-8}" '$1 ~ /^[0-9]+$/ { g = $c + 0; keep = (g > b); if (keep) { b = g; f = "" } }
        /^# +(rank [0-9]+, )?GPU [0-9]+:/ && keep { f = f "    " $0 "\n" } END { printf "%s", f }' "$1"
}
vend() { sed -n 's/.*median_tflops=\([0-9.]*\).*/\1/p' "$1" | tail -1; }
