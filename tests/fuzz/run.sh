#!/usr/bin/env bash
# Fuzz one of Rill's fuzz targets with libFuzzer: params (the parameter registry: files,
# values of every type, --mca, RILL_MCA_*) or rillcc (the PTG compiler's lexer, parser and
# checks). Builds tests/fuzz/fuzz_NAME with clang (-DRILL_FUZZ=ON: ASan+UBSan and coverage)
# in its own build folder, runs it on one core, re-minimizes the committed corpus
# (tests/fuzz/NAME_corpus) with what it found, and prints a summary.
#
#   tests/fuzz/run.sh NAME [SECONDS]            NAME: params | rillcc; default 600 s
#
# Environment: BUILD (default build/fuzz), LOG (default /tmp/rill_fuzz_NAME.log),
# CC (default clang), MERGE=0 to leave the committed corpus alone.
# Files of the corpus with a hand-given name (seeds, regress_* inputs of fixed crashes)
# are kept as they are; the files named by their SHA-1 are replaced by the merge.
# A crash, leak or timeout input lands in $BUILD/fuzz_NAME_work/artifacts; once fixed,
# copy it into the corpus as regress_<what> so that CTest (fuzz_NAME_corpus) replays it.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
name=${1:-}
case "$name" in
params | rillcc) ;;
*) echo "usage: tests/fuzz/run.sh params|rillcc [SECONDS]" >&2; exit 2 ;;
esac
secs=${2:-600} # 0: no fuzzing, only the minimization of the corpus
build=${BUILD:-$top/build/fuzz}
log=${LOG:-/tmp/rill_fuzz_$name.log}
corpus=$top/tests/fuzz/${name}_corpus
work=$build/fuzz_${name}_work
dict=()
[ -f "$top/tests/fuzz/$name.dict" ] && dict=(-dict="$top/tests/fuzz/$name.dict")

echo "== build $build (${CC:-clang}, RILL_FUZZ=ON)"
cmake -S "$top" -B "$build" -DCMAKE_C_COMPILER="${CC:-clang}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DRILL_FUZZ=ON -DRILL_BUILD_BENCH=OFF >"$build.configure.log" 2>&1 ||
    { tail -20 "$build.configure.log"; exit 1; }
cmake --build "$build" -j1 --target "fuzz_$name" >"$build.build.log" 2>&1 ||
    { tail -30 "$build.build.log"; exit 1; }
bin=$build/tests/fuzz/fuzz_$name

rm -rf "$work"
mkdir -p "$work/new" "$work/artifacts"
start=$(date +%s)
rc=0
if [ "$secs" -gt 0 ]; then
    echo "== fuzz for $secs s, 1 job; log in $log"
    # -close_fd_mask=2: the registry's own messages (one per bad input) go to /dev/null;
    # libFuzzer and the sanitizers keep the real stderr. New inputs go to $work/new.
    "$bin" -max_total_time="$secs" -print_final_stats=1 -close_fd_mask=2 -timeout=10 \
        -rss_limit_mb=2048 "${dict[@]}" \
        -artifact_prefix="$work/artifacts/" "$work/new" "$corpus" >"$log" 2>&1 || rc=$?
fi
elapsed=$(($(date +%s) - start))

if [ "${MERGE:-1}" = 1 ]; then
    # -set_cover_merge=1 (libFuzzer 14+) is -merge=1 that keeps a near-minimal set of
    # inputs with the same features: about half the files
    merge=-merge=1
    case "$("$bin" -help=1 2>&1 || true)" in *set_cover_merge*) merge=-set_cover_merge=1 ;; esac
    echo "== minimize the corpus ($merge)"
    sha1_re='^[0-9a-f]{40}$'
    mkdir -p "$work/min" "$work/old"
    for f in "$corpus"/*; do
        [ -f "$f" ] || continue
        if basename "$f" | grep -Eq "$sha1_re"; then
            cp "$f" "$work/old/"
        else
            cp "$f" "$work/min/" # hand-named: kept, and counted first
        fi
    done
    "$bin" $merge -close_fd_mask=2 -timeout=10 "$work/min" "$work/old" "$work/new" \
        >"$work/merge.log" 2>&1 || { tail -20 "$work/merge.log"; exit 1; }
    find "$corpus" -maxdepth 1 -type f -regextype egrep -regex ".*/[0-9a-f]{40}" -delete
    for f in "$work/min"/*; do
        basename "$f" | grep -Eq "$sha1_re" && cp "$f" "$corpus/"
    done
fi

echo "== summary"
if [ "$secs" -gt 0 ]; then
    stat() { grep -o "stat::$1: *[0-9]*" "$log" | tail -1 | grep -o '[0-9]*$' || echo "?"; }
    last=$(grep -E '^#[0-9]+' "$log" | tail -1 || true)
    echo "command:    $bin -max_total_time=$secs -close_fd_mask=2 -timeout=10 -rss_limit_mb=2048 ${dict[*]} $work/new tests/fuzz/${name}_corpus"
    echo "compiler:   $("${CC:-clang}" --version | head -1)"
    echo "duration:   ${elapsed} s (libFuzzer exit code $rc)"
    echo "executions: $(stat number_of_executed_units) ($(stat average_exec_per_sec)/s), new units $(stat new_units_added), peak RSS $(stat peak_rss_mb) MB"
    echo "coverage:   $(echo "$last" | grep -Eo 'cov: [0-9]+ ft: [0-9]+ corp: [0-9]+/[0-9]+[a-zA-Z]*')"
    echo "last line:  $last"
    grep -E '^(==[0-9]+==ERROR|SUMMARY:|.*runtime error:|.*invariant broken)' "$log" | head -10 || true
fi
nart=$(find "$work/artifacts" -type f | wc -l)
echo "artifacts:  $nart (crashes, leaks, timeouts, OOMs) in $work/artifacts"
find "$work/artifacts" -type f | sed 's/^/  /'
if [ "${MERGE:-1}" = 1 ]; then
    echo "corpus:     $(find "$corpus" -type f | wc -l) files, $(cat "$corpus"/* | wc -c) bytes in tests/fuzz/${name}_corpus ($(grep -Eo 'MERGE-OUTER: [0-9]+ new files' "$work/merge.log" | tail -1))"
fi
[ "$nart" -eq 0 ] && [ "$rc" -eq 0 ]
