#!/usr/bin/env bash
# The whole test suite on a GPU machine, in parts that each fit one device call (10 minutes):
#   scripts/gpu_suite.sh [gpu|rest1|rest2|rest3|rest4|all]      (default all; logs under $OUT)
#   scripts/gpu_suite.sh repeat TEST [ROUNDS [AT_ONCE]]   (default 6 rounds of 3 at once)
# repeat: one ctest test (exact name) AT_ONCE copies at a time, ROUNDS times, with the
# watchdog's report after 8 s (not abort: at 40 s the copies still running get every
# thread's stack from gdb, when it is there, and are killed); the logs of failed copies stay,
# with the frames of a stuck GPU manager's stack (the watchdog prints it) named by addr2line
# in repeat_R_C.frames.
# gpu: the tests labelled gpu (they lock the GPUs between them, so they run one at a time;
# about 360 s on an H100, 216 of them test_alloc_sweep_gpu);
# rest1 .. rest4: the other tests, in four quarters by test number, SUITE_J (3) at once.
# Every process that starts Rill opens the GPUs it finds: each takes a small share of
# their memory (device_cuda_memory_use 3; 1 is too little for the cuBLAS workspaces of 5 exec
# streams) and, unless the test sets its own, 2 cores (runtime_num_cores), as on CI, so that
# parallel tests do not crowd the cores with the threads that poll while GPUs are in use.
# Few at once: processes sharing one GPU take turns on it (time slices between CUDA
# contexts), and a remote dependency between two of them waits for such a turn: on one H100,
# dla_dgemm_window_np2 (thousands of 1 x 1 tiles between 2 ranks) took 6 s alone, 52 s beside
# one other such test, and timed out (120 s) among 8 tests at once, where two np2-np4 PTG
# tests also found no GPU memory left for a context. Not the watchdog settings of the other
# scripts: the watchdog tests expect a report and then go on.
# repeat found the dla_dgemm_np4_2x2 hang of 2026-11-24 (tests/README.md): 3 copies of a
# 4-rank test at once on one GPU load it enough to show rare hangs.
set -uo pipefail
out=${OUT:-/tmp/rill-gpu}
mkdir -p "$out"
part=${1:-all}
case $part in gpu | rest1 | rest2 | rest3 | rest4 | all) ;;
repeat) [ -n "${2:-}" ] || { echo "usage: $0 repeat TEST [ROUNDS [AT_ONCE]]" >&2; exit 2; } ;;
*)
    echo "usage: $0 [gpu|rest1|rest2|rest3|rest4|all] | repeat TEST [ROUNDS [AT_ONCE]]" >&2
    exit 2
    ;;
esac
nvidia-smi -L
gen=(); [ -f build/ptg-gen/parser.c ] && gen=(-DRILLCC_GENERATED_DIR="$PWD/build/ptg-gen")
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DRILL_WERROR=ON "${gen[@]}" >"$out/configure.log" 2>&1 &&
    timeout 300 cmake --build build-gpu -j "$(nproc)" >"$out/build.log" 2>&1 ||
    { grep -E "error|Error" "$out/build.log" | head -30; exit 1; }
cd build-gpu || exit 1
export RILL_MCA_device_cuda_memory_use=3 RILL_MCA_runtime_num_cores=2
jobs=${SUITE_J:-3}
# how many tests are not labelled gpu (ctest's -I counts within the tests a label selects)
n=$(ctest -N -LE gpu | grep -c "Test *#")
run() { # name, ctest arguments...
    local name=$1
    shift
    local t0=$SECONDS
    timeout "${SUITE_S:-520}" ctest --timeout 180 --output-on-failure "$@" >"$out/ctest_$name.log" 2>&1
    echo "== $name: $((SECONDS - t0)) s"
    grep -E "tests passed|\*\*\*Failed|Timeout|Exception" "$out/ctest_$name.log" | tail -20
}
if [ "$part" = repeat ]; then
    test=$2 rounds=${3:-6} at_once=${4:-3}
    # the test's command line, as ctest runs it
    # (arguments without spaces: ctest quotes each one)
    cmd=$(ctest -R "^$test\$" -N -V | sed -n 's/^[0-9]*: Test command: //p' | head -1 | tr -d '"')
    [ -n "$cmd" ] || { echo "no test named $test"; exit 2; }
    # shellcheck disable=SC2086 # the command is words
    exe=$(printf '%s\n' $cmd | grep -m1 "/build-gpu/")
    export RILL_MCA_runtime_watchdog_s=8
    pass=0 fail=0
    for k in $(seq 1 "$rounds"); do
        for j in $(seq 1 "$at_once"); do
            # shellcheck disable=SC2086 # the command is words
            (timeout 60 $cmd >"$out/repeat_${k}_$j.log" 2>&1; echo $? >"$out/repeat_${k}_$j.rc") &
        done
        sleep 1
        for _ in $(seq 1 40); do # at most 40 s; then the stacks of what still runs
            [ "$(jobs -r | wc -l)" -eq 0 ] && break
            sleep 1
        done
        if [ "$(jobs -r | wc -l)" -gt 0 ]; then
            # gdb, else the CUDA toolkit's cuda-gdb
            gdb=$(command -v gdb || command -v cuda-gdb ||
                command -v "${CUDA_HOME:-/usr/local/cuda}/bin/cuda-gdb")
            if [ -n "$gdb" ]; then
                for p in $(pgrep -f "^$exe" | head -16); do
                    echo "==== pid $p: $(tr '\0' ' ' </proc/"$p"/cmdline 2>/dev/null)"
                    timeout 30 "$gdb" -p "$p" -batch -ex "thread apply all bt" 2>/dev/null |
                        grep -E "^Thread|^#"
                done >"$out/repeat_${k}_stacks.txt" 2>&1
            fi
        fi
        wait
        for j in $(seq 1 "$at_once"); do
            if [ "$(cat "$out/repeat_${k}_$j.rc")" = 0 ]; then
                pass=$((pass + 1))
                rm -f "$out/repeat_${k}_$j.log"
            else
                fail=$((fail + 1))
            fi
            rm -f "$out/repeat_${k}_$j.rc"
        done
    done
    echo "== repeat $test: $pass passed, $fail failed ($rounds rounds of $at_once at once)"
    # the frames of a stuck manager's stack (the watchdog prints them) inside Rill's library
    # or the test, named by addr2line: lib(+0xoffset) -> function at file:line
    for f in "$out"/repeat_*_*.log; do
        [ -f "$f" ] || continue
        grep -oE "[^ ]+\(\+0x[0-9a-f]+\)" "$f" | sort -u | while IFS= read -r fr; do
            lib=${fr%%(*} off=${fr##*(+}
            case $lib in
            */build-gpu/*) echo "$fr = $(addr2line -f -C -i -p -e "$lib" "${off%)}" 2>&1)" ;;
            esac
        done >"${f%.log}.frames"
    done
    exit 0
fi
if [ "$part" = gpu ] || [ "$part" = all ]; then run gpu -L gpu; fi
for q in 1 2 3 4; do # quarter q: tests (q-1) n/4 + 1 .. q n/4 of those not labelled gpu
    lo=$(((q - 1) * n / 4 + 1)) hi=$((q * n / 4))
    if [ "$hi" -ge "$lo" ] && { [ "$part" = "rest$q" ] || [ "$part" = all ]; }; then
        run "rest$q" -j "$jobs" -LE gpu -I "$lo,$hi"
    fi
done
