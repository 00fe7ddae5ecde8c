#!/usr/bin/env bash
# The whole test suite on a GPU machine, in parts that each fit one device call (10 minutes):
#   scripts/gpu_suite.sh [gpu|rest1|rest2|all]      (default all; logs under $OUT)
# gpu: the tests labelled gpu (they lock the GPUs between them, so they run one at a time);
# rest1, rest2: the other tests, the first and the second half by test number, several at
# once. Every process that starts Rill opens the GPUs it finds: each takes a small share of
# their memory (device_cuda_memory_use 3) and, unless the test sets its own, 2 cores
# (runtime_num_cores), as on CI, so that parallel tests do not crowd the cores with the
# threads that poll while GPUs are in use. Not the watchdog settings of the other scripts:
# the watchdog tests expect a report and then go on.
set -uo pipefail
out=${OUT:-/tmp/rill-gpu}
mkdir -p "$out"
part=${1:-all}
case $part in gpu | rest1 | rest2 | all) ;; *)
    echo "usage: $0 [gpu|rest1|rest2|all]" >&2
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
jobs=${SUITE_J:-8}
# how many tests are not labelled gpu (ctest's -I counts within the tests a label selects)
n=$(ctest -N -LE gpu | grep -c "Test *#")
half=$(((n + 1) / 2))
run() { # name, ctest arguments...
    local name=$1
    shift
    local t0=$SECONDS
    timeout "${SUITE_S:-520}" ctest --timeout 180 --output-on-failure "$@" >"$out/ctest_$name.log" 2>&1
    echo "== $name: $((SECONDS - t0)) s"
    grep -E "tests passed|\*\*\*Failed|Timeout|Exception" "$out/ctest_$name.log" | tail -20
}
if [ "$part" = gpu ] || [ "$part" = all ]; then run gpu -L gpu; fi
if [ "$n" -gt 0 ] && { [ "$part" = rest1 ] || [ "$part" = all ]; }; then
    run rest1 -j "$jobs" -LE gpu -I "1,$half"
fi
if [ "$n" -gt "$half" ] && { [ "$part" = rest2 ] || [ "$part" = all ]; }; then
    run rest2 -j "$jobs" -LE gpu -I "$((half + 1)),$n"
fi
