#!/bin/sh
# The scripts that draw with matplotlib (tools/rill_bench report, tools/rill_trace_plot) run
# under a python3 that lacks it (here a venv made from /usr/bin/python3, whose packages it
# does not see; a pyenv python3 first on PATH is the same case) by running again under
# /usr/bin/python3. Exit 77 (skipped) when /usr/bin/python3 has no matplotlib either or
# no venv can be made.
# usage: python_fallback.sh SOURCE_DIR
top=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
/usr/bin/python3 -c 'import matplotlib' 2>/dev/null || { echo "SKIP: /usr/bin/python3 has no matplotlib"; exit 77; }
/usr/bin/python3 -m venv --without-pip "$tmp/venv" >/dev/null 2>&1 || { echo "SKIP: no venv"; exit 77; }
py=$tmp/venv/bin/python3
if "$py" -c 'import matplotlib' 2>/dev/null; then
    echo "SKIP: the venv sees matplotlib"
    exit 77
fi
fail=0
"$py" "$top/tools/rill_bench" report --figures "$tmp/figures" --readme "$tmp/README.md" ||
    { echo "FAIL: tools/rill_bench report under $py"; fail=1; }
[ -s "$tmp/figures/bench_dtd.png" ] ||
    { echo "FAIL: tools/rill_bench report wrote no figure"; fail=1; }
"$py" "$top/tools/rill_trace_plot" -o "$tmp/run.png" "$top/tests/unit/trace_data/run.0.json" \
    "$top/tests/unit/trace_data/run.1.json" ||
    { echo "FAIL: tools/rill_trace_plot under $py"; fail=1; }
[ -s "$tmp/run.png" ] || { echo "FAIL: tools/rill_trace_plot wrote no figure"; fail=1; }
[ $fail -eq 0 ] && echo PASS
exit $fail
