#!/usr/bin/env python3
"""rill_bench's readers of the GPU programs' outputs, on excerpts of real outputs (2 x H200,
2026-11-28): the DLA testers, bench_gpu_vendor, bench_gpu_hop and bench_hop_ref (a row whose
check failed is left out), bench_channels' markdown tables, bench_gpu_tasks' lines (a case
name with a comma) and bench_ptg. The GPU suites run on GPU machines only; these readers are
what decides their rows, so they are checked here, on every machine; and the METG of a sweep,
the help of every subcommand (argparse formats it only when asked), and the suite's parts.

    test_rill_bench_parse.py SOURCE_DIR
"""
import os
import sys

sys.path.insert(0, os.path.join(sys.argv[1], "tools"))
from rillbench import checks, cli, metg, parse, suites  # noqa: E402

fails = []


def check(cond, what):
    if not cond:
        fails.append(what)
        print(f"FAIL: {what}")


TESTER = """\
# ranks 1, grid 1 x 1 (skewed), cores per rank 30, GPUs per rank 2, seed 3872
     N    NB   P   Q cores gpus     time_s    gflops   residual status
 65536  1024   1   1    30    2     1.1937  78600.00          -      -
#   GPU 0: exec streams busy 83.0% of the run, 22924 tasks; H2D 0.0 MB
#   GPU 1: exec streams busy 85.2% of the run, 22896 tasks; H2D 0.0 MB
 65536  1024   1   1    30    2     1.1711  80115.94          -      -
#   GPU 0: exec streams busy 85.6% of the run, 22924 tasks; H2D 0.0 MB
#   GPU 1: exec streams busy 85.1% of the run, 22896 tasks; H2D 0.0 MB
"""
check([round(v, 5) for v in parse.tester_runs(TESTER, 1e-3)] == [78.6, 80.11594],
      "tester: TFLOP/s of each run")
check(parse.tester_gpu_lines(TESTER) == ["#   GPU 0: exec streams busy 85.6% of the run, 22924 "
                                         "tasks; H2D 0.0 MB", "#   GPU 1: exec streams busy "
                                         "85.1% of the run, 22896 tasks; H2D 0.0 MB"],
      "tester: the GPU lines of the best run")
GEMM = """\
     M      N      K    NB   P   Q cores gpus     time_s    gflops   residual status
  1000   1000   1000   200   1   1     2    0     0.0743     26.93          -      -
"""
check(parse.tester_runs(GEMM) == [26.93], "tester: dgemm's rows (M N K)")

VENDOR = """\
# GPU 0: NVIDIA H200, cc 9.0, 139.8 GiB
vendor,gemm,N=32768,gpus=1,tile=0,rep=1,seconds=1.324204,tflops=53.140
vendor,gemm,N=32768,gpus=1,tile=0,rep=2,seconds=1.359047,tflops=51.778
vendor,gemm,N=32768,gpus=1,tile=0,best_tflops=53.140,median_tflops=53.088
"""
check(parse.vendor_runs(VENDOR) == [53.14, 51.778], "vendor: each repetition, not the summary")

HOP = """\
# bench_gpu_hop: 50 hops per size between 2 ranks with a GPU each, GPU direct
  tile_bytes     hops   us_per_hop       GB/s  to_GPU_direct    early   behind      wait_us    by_SM
        4096       50         28.8       0.14             25       25       18            -        0
       65536       50         28.7       2.28             25       24       19            -        0  WRONG RESULT
     1048576       50         27.4      38.26             25       25       21            -        0
# many tiles in flight: k chains at once; GB/s = bytes moved
  tile_bytes    tiles        h         ms_h        ms_2h       GB/s
    16777216       16       10          6.3         10.4      658.4
"""
t = parse.tables(HOP)
check(len(t) == 2 and [r["tile_bytes"] for r in t[0]] == ["4096", "1048576"],
      f"hop: the row whose check failed is left out, not those after it: {t}")
check(t[1] == [{"tile_bytes": "16777216", "tiles": "16", "h": "10", "ms_h": "6.3",
                "ms_2h": "10.4", "GB/s": "658.4"}], "hop: the in-flight table")
REF = """\
  tile_bytes     hops       ce_sem       sm_sem         nccl        local     mpi_host    ce_GB/s  check
        4096       20        16.51        11.21        34.08         1.70         8.46       0.25  ok
"""
check(parse.tables(REF)[0][0]["mpi_host"] == "8.46", "hop_ref: a column by its name")

CHANNELS = """\
## GB/s (1e9 B/s), rank 0 -> rank 1 unless (sum); best of 5 trials of n

|     size |     n |  PC host 1-way |     NCCL 1-way |
|      --- |   --- |            --- |            --- |
|    4 KiB |  2000 |           0.51 |            n/a |
|    check |       |             ok |            n/a |

## latency, us (1000 round trips after 100 of warm-up; GPU-timed unless noted)

port channel put(8 B)+signal ping-pong, half round trip :     3.21
"""
md = parse.markdown_tables(CHANNELS)
rows = md.get("GB/s (1e9 B/s), rank 0 -> rank 1 unless (sum); best of 5 trials of n", [])
check(len(rows) == 2 and rows[0]["PC host 1-way"] == "0.51" and
      parse.number(rows[0]["NCCL 1-way"]) is None, f"channels: the GB/s table: {md}")

TASKS = """\
gpu_tasks,cuda,independent, no data,tasks_per_s=474231,us_per_task=2.109
gpu_tasks,cpu,chain on 1 tile,tasks_per_s=819664,us_per_task=1.220
"""
got = suites.gpu_tasks_rows(TASKS)
check(got == {("cuda independent, no data", "us per task"): 2.109,
              ("cpu chain on 1 tile", "us per task"): 1.22}, f"tasks: {got}")

PTG = """\
# bench_ptg: Rill 0.1.0 (git 34cda2433f75), 1 rank x 2 workers, dpotrf N=1000 NB=100, best of 1
what                             time_s    GFLOP/s
LAPACKE_dpotrf                    0.025       13.5
DTD dpotrf (rill_dla)             0.014       23.8
PTG dpotrf (dpotrf.rill)          0.014       23.4

# 10000 tasks with empty bodies, from the first insertion (DTD) or the creation
shape                         DTD us/task  PTG us/task
chain on one tile                   0.633        0.267
"""
potrf, shapes = suites.ptg_output(PTG)
check(potrf == {"LAPACKE_dpotrf": 13.5, "DTD": 23.8, "PTG": 23.4}, f"ptg: dpotrf {potrf}")
check(shapes == {"chain on one tile": (0.633, 0.267)}, f"ptg: shapes {shapes}")

check(parse.tile_name(4096) == "4 KiB" and parse.tile_name(134217728) == "128 MiB" and
      parse.tile_name(8) == "8 B", "tile names")

# METG: the smallest time per task at 50% efficiency or more, interpolated towards the next,
# smaller, run below it (efficiencies 1, 1, 0.9, 0.4, 0.2 here: between 25 and 12 us)
m = metg.metg([(100, 10.0), (50, 10.0), (25, 9.0), (12, 4.0), (6, 2.0)], 0.5)
check(m is not None and abs(m - 14.6) < 1e-9, f"metg: interpolated 14.6, got {m}")
check(metg.metg([(100, 10.0), (50, 9.0)], 0.5) is None, "metg: none below the threshold: none")
# against a peak of 20 (another system's best) only the first two runs reach 50%: 50 us
m = metg.metg([(100, 10.0), (50, 10.0), (25, 9.0), (12, 4.0)], 0.5, peak=20.0)
check(m is not None and abs(m - 50) < 1e-9, f"metg against the call's peak: 50, got {m}")

# every subcommand's --help formats (a bare % in a help string fails only then)
top = cli.parser()
for action in top._subparsers._group_actions:
    for name, sub in action.choices.items():
        try:
            sub.format_help()
        except (ValueError, TypeError) as e:
            check(False, f"rill_bench {name} --help: {e}")
try:
    top.format_help()
except (ValueError, TypeError) as e:
    check(False, f"rill_bench --help: {e}")

# the suite's parts cover the selection once: 65 GPU tests in 2, 7 others in 4
halves = list(checks.parts(65, 2, "gpu", "gpu", "all"))
check(halves == [("gpu1", ["-I", "1,32"]), ("gpu2", ["-I", "33,65"])], f"gpu halves {halves}")
check(list(checks.parts(65, 2, "gpu2", "gpu", "all")) == [("gpu2", ["-I", "33,65"])], "gpu2")
check(list(checks.parts(7, 4, "gpu", "rest", "all")) == [], "gpu asks for no rest part")
quarters = [cut[1] for _, cut in checks.parts(7, 4, "all", "rest", "all")]
check(quarters == ["1,1", "2,3", "4,5", "6,7"], f"rest quarters {quarters}")

print("ok" if not fails else f"{len(fails)} failure(s)")
sys.exit(1 if fails else 0)
