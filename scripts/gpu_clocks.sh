#!/usr/bin/env bash
# Run a command while nvidia-smi samples GPU 0 every 20 ms; print the command's output,
# then the SM clock, power draw and throttle reasons seen while it ran (median, min, max),
# to tell whether a figure was limited by the GPU's power or clocks. Samples under $OUT.
#   scripts/gpu_clocks.sh NAME command...
set -uo pipefail
out=${OUT:-/tmp/rill-gpu}
mkdir -p "$out"
name=$1; shift
csv=$out/clocks_$name.csv
nvidia-smi -i 0 --query-gpu=timestamp,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu,clocks_event_reasons.active \
    --format=csv,noheader,nounits -lms 20 >"$csv" 2>/dev/null &
smi=$!
sleep 0.3
"$@"
rc=$?
sleep 0.1
kill "$smi" 2>/dev/null; wait "$smi" 2>/dev/null
python3 - "$csv" "$name" <<'PY'
import sys, statistics
rows = [r.split(", ") for r in open(sys.argv[1]) if r.count(",") >= 6]
busy = [r for r in rows if float(r[3]) > 150.0]  # samples while the GPU worked
if not busy:
    print(f"clocks {sys.argv[2]}: no busy sample (power > 150 W)"); sys.exit(0)
def stat(i): v = [float(r[i]) for r in busy]; return f"median {statistics.median(v):.0f} (min {min(v):.0f}, max {max(v):.0f})"
reasons = {}
for r in busy: reasons[r[6].strip()] = reasons.get(r[6].strip(), 0) + 1
print(f"clocks {sys.argv[2]}: {len(busy)} busy samples; SM MHz {stat(1)} of max {busy[0][2]}; "
      f"power W {stat(3)} of limit {busy[0][4]}; temp C {stat(5)}; throttle reasons "
      + ", ".join(f"{k}: {v}" for k, v in sorted(reasons.items(), key=lambda x: -x[1])))
PY
exit $rc
