#!/usr/bin/env python3
"""tools/rill_bench on the CPU suites, for real: comm (2 ranks under mpirun), dtd and ptg at
small sizes, their rows appended to a results folder of the test's own, checked against the
column list; the references paired within the call; bad arguments refused with exit 2; a GPU
suite on a machine without GPUs exits 77.

    test_rill_bench.py SOURCE_DIR BUILD_DIR WORK_DIR
"""
import csv
import os
import shutil
import subprocess
import sys

src, build, work = sys.argv[1:4]
tool = os.path.join(src, "tools", "rill_bench")
sys.path.insert(0, os.path.join(src, "tools"))
from rillbench.core import COLUMNS  # noqa: E402

shutil.rmtree(work, ignore_errors=True)
results = os.path.join(work, "results")
fails = []


def bench(*argv):
    common = ["--build", build, "--no-build", "--out", os.path.join(work, "logs"),
              "--results", results, "--rounds", "2"]
    r = subprocess.run([sys.executable, tool] + common + list(argv), capture_output=True,
                       text=True, timeout=240)
    return r.returncode, r.stdout + r.stderr


def check(cond, what):
    if not cond:
        fails.append(what)
        print(f"FAIL: {what}")


def rows_of(suite):
    with open(os.path.join(results, f"{suite}.csv"), newline="", encoding="utf-8") as f:
        reader = csv.reader(f)
        header = next(reader)
        check(header == COLUMNS, f"{suite}.csv header {header}")
        return [dict(zip(header, r)) for r in reader]


rc, out = bench("comm", "--max-mib", "1")
check(rc == 0, f"comm exit {rc}: {out[-800:]}")
if rc == 0:
    rows = rows_of("comm")
    mpi = {r["size"]: r for r in rows if r["config"] == "MPI ping-pong"}
    rill = [r for r in rows if r["config"] == "rill remote dependency"]
    check(len(rill) == 7 and len(mpi) == 7, f"comm: 7 sizes (8 B .. 1 MiB) each, got {len(rill)}, {len(mpi)}")
    for r in rill:
        check(r["reference"] == "MPI ping-pong" and r["ref_best"] == mpi[r["size"]]["best"],
              f"comm: {r['size']} paired with the MPI row of its size")
        check(r["runs"] == "2" and float(r["best"]) <= float(r["median"]),
              f"comm: {r['size']}: 2 runs, best (lowest) <= median")
    check("| ratio |" in out, "comm printed its table")

rc, out = bench("dtd", "--tasks", "2000", "--reps", "1", "--workers", "1")
check(rc == 0, f"dtd exit {rc}: {out[-800:]}")
if rc == 0:
    rows = rows_of("dtd")
    check(len(rows) == 6 and all(float(r["best"]) > 0 for r in rows), f"dtd rows {rows}")

rc, out = bench("ptg", "-N", "600", "--nb", "100", "--tasks", "2000")
check(rc == 0, f"ptg exit {rc}: {out[-800:]}")
if rc == 0:
    rows = rows_of("ptg")
    ptg = [r for r in rows if r["config"] == "PTG" and r["figure"] == "GFLOP/s"]
    check(len(ptg) == 1 and ptg[0]["reference"] == "DTD" and ptg[0]["ref_best"],
          f"ptg: PTG's dpotrf row with DTD's as its reference: {ptg}")

# the rows of a second call go after the first's, the header not repeated
rc, out = bench("dtd", "--tasks", "2000", "--reps", "1", "--workers", "1")
check(rc == 0 and len(rows_of("dtd")) == 12, "dtd: a second call appends its 6 rows")

for argv, what in ((["ab", "--variant", "x|y|3x1"], "PxG must have P 1, 2 or 4"),
                   (["--budget", "0", "dtd"], "a positive integer"),
                   (["--rounds", "x", "dtd"], "a positive integer"),
                   (["balance", "0"], "NT must be a tile count"),
                   (["nosuch"], "invalid choice")):
    rc, out = bench(*argv)
    check(rc == 2 and what in out, f"{argv}: exit 2 naming '{what}', got {rc}: {out[-300:]}")

if shutil.which("nvidia-smi") is None:
    rc, out = bench("hop")
    check(rc == 77 and "needs 2 GPU(s)" in out, f"hop without GPUs: exit 77, got {rc}: {out}")

rc, out = bench("balance", "8", "2x2")
check(rc == 0 and "| 2 x 2 |" in out, f"balance: {out}")

print("ok" if not fails else f"{len(fails)} failure(s)")
sys.exit(1 if fails else 0)
