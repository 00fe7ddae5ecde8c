"""The suites of rill_bench: one function per subcommand, each adding its own options
(add_<suite>) and running (run_<suite>). bench/README.md says what each measures and how."""
import os
import re
import shutil
import subprocess
import time

from .core import BadArgument, Bench, BenchError, Case, LacksHardware, REPO, stop_group
from . import metg, parse

T_DLA = "apps/dla"
VENDOR = "bench/bench_gpu_vendor"
# the exec streams' busy time in the testers' report needs the GPU operations timed (about
# 2.6 us of the manager's host time per task, nothing at these tile sizes)
TIMED = {"RILL_MCA_device_cuda_timing": "1"}


def need_gpus(bench, n, what):
    if bench.gpus < n:
        raise LacksHardware(f"{what} needs {n} GPU(s); this machine has {bench.gpus}")


# -- helpers that make cases ------------------------------------------------------------------
def tester_case(config, op, size, argv, np=1, scale=1e-3, reference="", seconds=60, env=None,
                figure="TFLOP/s", timeout=300, mpi_extra=()):
    """A DLA tester run: its result rows' GFLOP/s (times scale) under (size, figure); with
    np > 1 under mpirun (with mpi_extra). The GPU lines of its best run go to the console."""
    def run(b):
        cmd = [b.exe(f"{T_DLA}/testing_{op}")] + argv
        if np > 1:
            cmd = b.mpirun(np, *mpi_extra) + cmd
        r = b.sh(f"{op}_{config}_{size}", cmd, env=env, timeout=timeout)
        vals = parse.tester_runs(r.text, scale) if r.ok else []
        for line in parse.tester_gpu_lines(r.text):
            b.say(f"    {config}, {size}: {line}")
        return {(size, figure): vals} if vals else {}
    return Case(config, run, unit=figure, reference=reference, seconds=seconds)


def vendor_case(config, size, argv, reference="", seconds=60, env=None):
    """bench_gpu_vendor OP ...: every repetition's TFLOP/s."""
    def run(b):
        r = b.sh(f"vendor_{config}_{size}", [b.exe(VENDOR)] + argv, env=env)
        vals = parse.vendor_runs(r.text) if r.ok else []
        return {(size, "TFLOP/s"): vals} if vals else {}
    return Case(config, run, unit="TFLOP/s", reference=reference, seconds=seconds)


def finish(bench, cases):
    bench.rounds(cases)
    bench.say("")
    bench.say(bench.table())


# -- dla ---------------------------------------------------------------------------------------
def add_dla(p):
    p.add_argument("--cpu", action="store_true", help="the CPU rows even on a GPU machine")
    p.add_argument("--sizes", default=None,
                   help="matrix orders (CPU default '4000 8000'; GPU default '16384 32768')")
    p.add_argument("--nbs", default=None, help="tile sizes (CPU default '192 256 384 512')")
    p.add_argument("--nruns", type=int, default=3, help="timed runs per tester call (3)")
    p.add_argument("--cores", type=int, default=2, help="CPU: cores of the 1-process rows (2)")
    p.add_argument("--no-np2", action="store_true", help="CPU: skip the 2-process rows")


def run_dla(bench, a):
    if bench.gpus and not a.cpu:
        return dla_gpu(bench, a)
    bench.build(["testing_dpotrf", "testing_dgemm"])
    cases = []
    for op, ref in (("dpotrf", "LAPACKE_dpotrf"), ("dgemm", "cblas_dgemm")):
        for n in (a.sizes or "4000 8000").split():
            size = f"N={n}"
            cases.append(tester_case(f"{ref}, {a.cores} threads", op, size,
                                     ["-N", n, "-c", a.cores, "--ref", "--nruns", a.nruns],
                                     scale=1, figure="GFLOP/s"))
            for nb in (a.nbs or "192 256 384 512").split():
                common = ["-N", n, "-t", nb, "--nruns", a.nruns]
                cases.append(tester_case(f"rill {op} NB={nb}, 1 process x {a.cores} cores", op,
                                         size, common + ["-c", a.cores], scale=1,
                                         figure="GFLOP/s",
                                         reference=f"{ref}, {a.cores} threads"))
                if not a.no_np2:
                    cases.append(tester_case(f"rill {op} NB={nb}, 2 processes x 1 core", op,
                                             size, common + ["-P", 2, "-Q", 1, "-c", 1], np=2,
                                             scale=1, figure="GFLOP/s",
                                             reference=f"{ref}, {a.cores} threads"))
    finish(bench, cases)


def add_getrf(p):
    p.add_argument("--cpu", action="store_true", help="the CPU rows even on a GPU machine")
    p.add_argument("--sizes", default=None,
                   help="matrix orders (CPU default '8000'; GPU default '16384 32768')")
    p.add_argument("--nbs", default=None,
                   help="Rill's tile sizes (CPU default '288 400', GPU '1024 2048')")
    p.add_argument("--scalapack-nbs", default="64 128", help="ScaLAPACK's block sizes ('64 128')")
    p.add_argument("--nruns", type=int, default=3, help="timed runs per call (3)")
    p.add_argument("--dsls", default=None,
                   help="Rill's front ends (CPU default 'dtd ptg'; GPU 'dtd': the PTG version "
                        "runs its panel and interchanges on the CPUs)")


def getrf_name(nb, dsl, where):
    return f"rill dgetrf{' PTG' if dsl == 'ptg' else ''} NB={nb}, {where}"


def run_getrf(bench, a):
    """LU with partial pivoting on this machine's 2 cores: 1 process x 2 cores next to one
    LAPACKE_dgetrf with 2 threads; 2 processes x 1 core (grids 1 x 2 and 2 x 1, each process
    bound to its core, so Rill's other threads share it) next to ScaLAPACK's pdgetrf on the
    same grids (bench_scalapack_getrf, when ScaLAPACK was found)."""
    if bench.gpus and not a.cpu:
        return getrf_gpu(bench, a)
    BIND = ("--bind-to", "core")
    bench.build(["testing_dgetrf"])
    scalapack = True
    try:
        bench.build(["bench_scalapack_getrf"])
        bench.exe("bench/bench_scalapack_getrf")
    except BenchError as e:
        bench.say(f"  ScaLAPACK left out: {e}")
        scalapack = False
    cases = []
    for n in (a.sizes or "8000").split():
        size = f"N={n}"
        ref1 = "LAPACKE_dgetrf, 2 threads"
        cases.append(tester_case(ref1, "dgetrf", size, ["-N", n, "-c", 2, "--ref", "--nruns",
                                                         a.nruns], scale=1, figure="GFLOP/s"))
        grids = (("1 x 2", ["-P", 1, "-Q", 2], []), ("2 x 1", ["-P", 2, "-Q", 1],
                                                     ["--dist", "cyclic"]))
        refs = {}
        for grid, pq, _ in grids:
            for nb in a.scalapack_nbs.split() if scalapack else ():
                name = f"ScaLAPACK pdgetrf NB={nb}, 2 processes, grid {grid}"
                refs.setdefault(grid, name)
                argv = ["-N", n, "-t", nb, "--nruns", a.nruns] + pq

                def run(b, argv=argv, name=name):
                    r = b.sh(f"scalapack_{n}_{name}", b.mpirun(2, *BIND) + [
                        b.exe("bench/bench_scalapack_getrf")] + argv, timeout=300)
                    vals = parse.tester_runs(r.text) if r.ok else []
                    return {(size, "GFLOP/s"): vals} if vals else {}
                cases.append(Case(name, run, unit="GFLOP/s", seconds=60))
        for nb, dsl in ((nb, d) for nb in (a.nbs or "288 400").split()
                        for d in (a.dsls or "dtd ptg").split()):
            common = ["-N", n, "-t", nb, "--nruns", a.nruns, "--dsl", dsl]
            cases.append(tester_case(getrf_name(nb, dsl, "1 process x 2 cores"), "dgetrf", size,
                                     common + ["-c", 2], scale=1, figure="GFLOP/s",
                                     reference=ref1))
            for grid, pq, dist in grids:
                cases.append(tester_case(getrf_name(nb, dsl, f"2 processes, grid {grid}"),
                                         "dgetrf", size, common + pq + dist + ["-c", 1], np=2,
                                         scale=1, figure="GFLOP/s", reference=refs.get(grid, ""),
                                         mpi_extra=BIND))
    finish(bench, cases)


def getrf_gpu(bench, a):
    """dgetrf on one GPU (its panel on cuSOLVER, gathered in the stream's workspace, which
    must hold N x NB doubles) next to one cusolverDnDgetrf and cusolverMgGetrf; on 2 and 4
    GPUs next to cusolverMgGetrf."""
    bench.build(["testing_dgetrf", "bench_gpu_vendor"])
    cases, runs = [], str(a.nruns)
    for n in (a.sizes or "16384 32768").split():
        size, ref = f"N={n}", "cusolverDnDgetrf, 1 GPU"
        cases.append(vendor_case(ref, size, ["getrf", n, runs]))
        for nb, dsl in ((nb, d) for nb in (a.nbs or "1024 2048").split()
                        for d in (a.dsls or "dtd").split()):
            ws = f"{(int(n) * int(nb) * 8 >> 20) + 64}M"
            cases.append(tester_case(getrf_name(nb, dsl, "1 GPU"), "dgetrf", size,
                                     ["-N", n, "-t", nb, "-g", 1, "--nruns", runs, "--dsl", dsl,
                                      "--mca", "device_cuda_workspace", ws], reference=ref,
                                     env=TIMED))
        # cusolverMg's LU on the one GPU too: its multi-GPU reference's cost on one
        # (on an H100, cusolverMgGetrf ran T = 256 and 512, 16.9 and 18.9 TFLOP/s at N =
        # 16384, and refused 1024 with CUSOLVER_STATUS_INVALID_VALUE)
        for t in (256, 512):
            cases.append(vendor_case(f"cusolverMgGetrf, 1 GPU, T={t}", size,
                                     ["mggetrf", n, 1, t, runs]))
    # several GPUs (the figures: N = 65536 on 2, 98304 on 4); the panel of at most
    # 30 tiles is one task gathered in the workspace (N x NB doubles)
    for g, n in ((2, 65536), (4, 98304)):
        if bench.gpus < g:
            continue
        size, ref = f"N={n}", f"cusolverMgGetrf, {g} GPUs"
        for t in (512, 256):  # (the reference: T = 512, the largest tile it took)
            cases.append(vendor_case(ref if t == 512 else f"{ref}, T={t}", size,
                                     ["mggetrf", n, g, t, runs], seconds=180))
        for nb in ("2048", "4096"):
            ws = f"{(n * int(nb) * 8 >> 20) + 64}M"
            common = ["-N", n, "-t", nb, "--nruns", runs, "--mca", "device_cuda_workspace", ws]
            cases.append(tester_case(f"rill dgetrf NB={nb}, 1 process x {g} GPUs", "dgetrf", size,
                                     common + ["-g", g], reference=ref, env=TIMED, seconds=150))
            cases.append(tester_case(f"rill dgetrf NB={nb}, {g} processes x 1 GPU", "dgetrf",
                                     size, common + ["-g", 1], np=g, reference=ref,
                                     env=TIMED, seconds=150))
    finish(bench, cases)


def dla_gpu(bench, a):
    """dpotrf against cusolverDnDpotrf, dgemm against cublasDgemm on one GPU; on 2 GPUs of one
    process against cusolverMgPotrf; the PTG dpotrf against the DTD one."""
    bench.build(["testing_dpotrf", "testing_dgemm", "bench_gpu_vendor", "bench_gpu_tasks"])
    cases, runs = [], str(a.nruns)
    for n in (a.sizes or "16384 32768").split():
        size = f"N={n}"
        cases.append(vendor_case("cusolverDnDpotrf", size, ["potrf", n, runs]))
        for nb in ("1024", "2048"):
            cases.append(tester_case(f"rill dpotrf NB={nb}, 1 GPU", "dpotrf", size,
                                     ["-N", n, "-t", nb, "-g", 1, "--nruns", runs],
                                     reference="cusolverDnDpotrf", env=TIMED))
        cases.append(tester_case("rill dpotrf PTG NB=2048, 1 GPU", "dpotrf", size,
                                 ["-N", n, "-t", 2048, "-g", 1, "--nruns", runs, "--dsl", "ptg"],
                                 reference="rill dpotrf NB=2048, 1 GPU", env=TIMED))
    cases.append(vendor_case("cublasDgemm", "N=32768", ["gemm", 32768, runs]))
    for nb in ("2048", "4096"):
        cases.append(tester_case(f"rill dgemm NB={nb}, 1 GPU", "dgemm", "N=32768",
                                 ["-N", 32768, "-t", nb, "-g", 1, "--nruns", runs],
                                 reference="cublasDgemm", env=TIMED))
    if bench.gpus >= 2:
        size = "N=65536"
        cases.append(vendor_case("cusolverMgPotrf, 2 GPUs", size,
                                 ["mgpotrf", 65536, 2, 1024, runs], seconds=120))
        for nb in ("1024", "2048"):
            cases.append(tester_case(f"rill dpotrf NB={nb}, 1 process x 2 GPUs", "dpotrf", size,
                                     ["-N", 65536, "-t", nb, "-g", 2, "--nruns", runs],
                                     reference="cusolverMgPotrf, 2 GPUs", env=TIMED, seconds=90))
        cases.append(tester_case("rill dpotrf PTG NB=2048, 1 process x 2 GPUs", "dpotrf", size,
                                 ["-N", 65536, "-t", 2048, "-g", 2, "--nruns", runs, "--dsl",
                                  "ptg"], reference="rill dpotrf NB=2048, 1 process x 2 GPUs",
                                 env=TIMED, seconds=90))
    finish(bench, cases)
    if bench.fits(60):  # the manager's own cost, printed (the tasks suite records it)
        tasks = bench.sh("gpu_tasks", [bench.exe("bench/bench_gpu_tasks"), 200000], timeout=60)
        bench.say(tasks.text.strip())


# -- scale -------------------------------------------------------------------------------------
def add_scale(p):
    p.add_argument("--sizes", default="32768 49152 65536", help="N of the 1-GPU rows")
    p.add_argument("--mg-n", type=int, default=65536, help="N of the 2-GPU rows (65536)")


def run_scale(bench, a):
    """dpotrf per GPU as N grows (1 GPU, cusolverDn alongside), and what a second GPU adds
    (one process x 2 GPUs, 2 processes x 1 GPU skewed and block-cyclic, cusolverMg)."""
    need_gpus(bench, 1, "scale")
    bench.build(["testing_dpotrf", "bench_gpu_vendor"])
    cases = []
    for n in a.sizes.split():
        size = f"N={n}"
        cases.append(vendor_case("cusolverDnDpotrf", size, ["potrf", n, 3], seconds=90))
        cases.append(tester_case("rill dpotrf NB=2048, 1 GPU", "dpotrf", size,
                                 ["-N", n, "-t", 2048, "-g", 1, "--nruns", 3],
                                 reference="cusolverDnDpotrf", env=TIMED, seconds=90))
    if bench.gpus >= 2:
        n, size = str(a.mg_n), f"N={a.mg_n}"
        mg = "cusolverMgPotrf, 2 GPUs"
        cases.append(vendor_case(mg, size, ["mgpotrf", n, 2, 1024, 3], seconds=120))
        base = ["-N", n, "-t", 2048, "--nruns", 3]
        cases.append(tester_case("rill dpotrf, 1 process x 2 GPUs", "dpotrf", size,
                                 base + ["-g", 2], reference=mg, env=TIMED, seconds=90))
        cases.append(tester_case("rill dpotrf, 2 processes x 1 GPU, skewed", "dpotrf", size,
                                 base + ["-g", 1], np=2, reference=mg, env=TIMED, seconds=90))
        cases.append(tester_case("rill dpotrf, 2 processes x 1 GPU, block-cyclic", "dpotrf",
                                 size, base + ["-g", 1, "--dist", "cyclic"], np=2, reference=mg,
                                 env=TIMED, seconds=90))
    finish(bench, cases)


# -- four --------------------------------------------------------------------------------------
def add_four(p):
    p.add_argument("--trace", action="store_true",
                   help="also a traced 4-process dpotrf (N = 32768): what held the tiles from "
                   "other ranks, the managers' launches, the streams idle for a landing")


def run_four(bench, a):
    """4 processes x 1 GPU: dpotrf (GPU direct, the testers' 4 x 1 skewed grid; DTD, and PTG
    next to it) next to cusolverMgPotrf on the 4 GPUs and one process driving them; the 2 x 2 grid block-cyclic and
    skewed; dgemm next to one cublasDgemm per GPU, all four at once."""
    need_gpus(bench, 4, "four")
    bench.build(["testing_dpotrf", "testing_dgemm", "bench_gpu_vendor"])
    env = dict(TIMED, RILL_MCA_runtime_watchdog_s="60", RILL_MCA_runtime_watchdog_action="abort")
    mg, cases = "cusolverMgPotrf, 4 GPUs", []
    for n in ("65536", "98304"):
        size = f"N={n}"
        cases.append(vendor_case(mg, size, ["mgpotrf", n, 4, 1024, 3], seconds=150))
        cases.append(tester_case("rill dpotrf, 4 x 1 grid skewed", "dpotrf", size,
                                 ["-N", n, "-t", 2048, "-g", 1, "--nruns", 3], np=4,
                                 reference=mg, env=env, seconds=120))
    size = "N=98304"
    cases.append(tester_case("rill dpotrf PTG, 4 x 1 grid skewed", "dpotrf", size,
                             ["-N", 98304, "-t", 2048, "-g", 1, "--nruns", 3, "--dsl", "ptg"],
                             np=4, reference="rill dpotrf, 4 x 1 grid skewed", env=env,
                             seconds=120))
    for dist in ("cyclic", "skewed"):
        cases.append(tester_case(f"rill dpotrf, 2 x 2 grid {dist}", "dpotrf", size,
                                 ["-N", 98304, "-t", 2048, "-P", 2, "-Q", 2, "-g", 1, "--nruns",
                                  3, "--dist", dist], np=4, reference=mg, env=env, seconds=120))
    cases.append(tester_case("rill dpotrf, 1 process x 4 GPUs", "dpotrf", size,
                             ["-N", 98304, "-t", 2048, "-g", 4, "--nruns", 3], reference=mg,
                             env=env, seconds=120))

    def gemm4(b):  # one cublasDgemm per GPU, the four at once: the sum of their medians
        exe, procs = b.exe(VENDOR), []
        try:
            for g in range(4):
                log = b.log_name(f"vendor_gemm_gpu{g}")
                f = open(log, "w", encoding="utf-8")
                procs.append((subprocess.Popen(
                    [exe, "gemm", "32768", "3"], stdout=f, stderr=subprocess.STDOUT, cwd=REPO,
                    start_new_session=True, env=dict(os.environ, CUDA_VISIBLE_DEVICES=str(g))),
                    f, log))
            limit = time.monotonic() + min(200, max(1, b.left()))
            for p, _, _ in procs:
                p.wait(timeout=max(1, limit - time.monotonic()))
        except subprocess.TimeoutExpired:
            b.say("  4 x cublasDgemm: timed out")
            return {}
        finally:  # none left running beside the next case
            for p, f, _ in procs:
                if p.poll() is None:
                    stop_group(p)
                f.close()
        total = 0.0
        for p, _, log in procs:
            with open(log, encoding="utf-8") as fh:
                v = parse.vendor_runs(fh.read())
            if p.returncode != 0 or not v:
                b.say(f"  4 x cublasDgemm: {log} has no result (exit {p.returncode})")
                return {}
            total += sorted(v)[len(v) // 2]
        return {("4 GPUs", "TFLOP/s"): total}
    cases.append(Case("4 x cublasDgemm N=32768, at once", gemm4, unit="TFLOP/s", seconds=60))
    cases.append(tester_case("rill dgemm N=65536 NB=4096, 2 x 2 grid", "dgemm", "4 GPUs",
                             ["-N", 65536, "-t", 4096, "-P", 2, "-Q", 2, "-g", 1, "--nruns", 3],
                             np=4, reference="4 x cublasDgemm N=32768, at once", env=env,
                             seconds=120))
    finish(bench, cases)
    if a.trace:
        traced_potrf(bench, 4, 32768, env)


def traced_potrf(bench, np, n, env):
    """One traced dpotrf on np processes x 1 GPU; the trace tools' views of its timed run."""
    if not bench.fits(150):
        bench.say("traced dpotrf: not run (the budget spent)")
        return
    prefix = os.path.join(bench.out, "trace")
    r = bench.sh("traced_dpotrf", bench.mpirun(np) + [
        bench.exe(f"{T_DLA}/testing_dpotrf"), "-N", n, "-t", 2048, "-g", 1, "--mca",
        "profile_trace", prefix, "--mca", "profile_stats", 1], env=env, timeout=180)
    if not r.ok:
        return
    files = [f"{prefix}.{k}.json" for k in range(np)]
    tool = os.path.join(REPO, "tools", "rill_trace_timeline")
    nth = str(n // 2048)  # the timed run's first dpotrf: the warm-up run had n / NB of them
    for view in ("--landings", "--launches", "--waits"):
        v = bench.sh(f"trace{view}", ["python3", tool, view, "--name", "dpotrf", "--nth", nth,
                                      "--before", 1000, "--after", 1000000] + files)
        bench.say(f"== {view}:\n{v.text.strip()}")


# -- ab ----------------------------------------------------------------------------------------
def add_ab(p):
    p.add_argument("--variant", action="append", default=[], metavar="'NAME|OPTIONS|PxG'",
                   help="a variant: its name, the tester's options, P processes x G GPUs "
                   "(default 1x1; P 1, 2 or 4: mpirun, a 2 x 1 grid for 2, 2 x 2 for 4, "
                   "which the options may override); repeatable; the first is the reference")
    p.add_argument("--op", choices=("dpotrf", "dgemm"), default="dpotrf")
    p.add_argument("-N", type=int, default=32768, help="matrix order (32768)")
    p.add_argument("--nb", type=int, default=2048, help="tile size (2048)")
    p.add_argument("--nruns", type=int, default=2, help="timed runs per tester call (2)")
    p.add_argument("--vendor", action="store_true",
                   help="cusolverDnDpotrf / cublasDgemm on one GPU in the same rounds, the "
                   "reference of every variant")


def parse_variant(text):
    parts = text.split("|")
    if len(parts) not in (2, 3) or not parts[0].strip():
        raise BadArgument(f"variant '{text}': expected 'NAME|OPTIONS' or 'NAME|OPTIONS|PxG'")
    procs = (parts[2] if len(parts) == 3 else "").strip() or "1x1"
    p, _, g = procs.partition("x")
    if p not in ("1", "2", "4") or not g.isdigit() or not 1 <= int(g) <= 8:
        raise BadArgument(f"variant '{text}': PxG must have P 1, 2 or 4 and G 1..8, "
                         f"got '{procs}'")
    return parts[0].strip(), parts[1].split(), int(p), int(g)


def run_ab(bench, a):
    """Variants of one tester interleaved over the rounds: best and median of each."""
    variants = [parse_variant(v) for v in (a.variant or ["defaults|"])]
    for name, _, p, g in variants:
        if p * g > max(bench.gpus, 0):
            raise LacksHardware(f"variant '{name}' needs {p * g} GPUs; this machine has "
                             f"{bench.gpus}")
    bench.build([f"testing_{a.op}", "bench_gpu_vendor"] if a.vendor else [f"testing_{a.op}"])
    size, cases = f"N={a.N} NB={a.nb}", []
    ref = ""
    if a.vendor:
        ref = "cusolverDnDpotrf" if a.op == "dpotrf" else "cublasDgemm"
        cases.append(vendor_case(ref, size, ["potrf" if a.op == "dpotrf" else "gemm", a.N, 3],
                                 seconds=90))
    for k, (name, opts, p, g) in enumerate(variants):
        grid = {2: ["-P", 2, "-Q", 1], 4: ["-P", 2, "-Q", 2]}.get(p, [])
        cases.append(tester_case(name, a.op, size, ["-N", a.N, "-t", a.nb, "-g", g,
                                                    "--nruns", a.nruns] + grid + opts, np=p,
                                 reference=ref or (variants[0][0] if k else ""), env=TIMED,
                                 seconds=120))
    finish(bench, cases)


# -- hop and nodes -----------------------------------------------------------------------------
HOP_SIZES = (4096, 65536, 1048576, 16777216, 134217728)


def hop_case(config, argv, np_extra=(), reference="", seconds=120, env=None, prefix=""):
    """bench_gpu_hop on 2 processes: us per hop per tile size (its first table), and GB/s with
    many tiles in flight (its second)."""
    def run(b):
        r = b.sh(f"hop_{config}", b.mpirun(2, *np_extra) + [b.exe("bench/bench_gpu_hop")]
                 + argv, env=env, timeout=300)
        bad = [l.strip() for l in r.text.splitlines() if l.rstrip().endswith(
            ("WRONG RESULT", "FAILED"))]
        if bad:  # a row whose check failed is not a figure
            b.say(f"  {config}: {len(bad)} row(s) failed their check, left out: {bad[0]}")
        if not r.ok:
            return {}
        got = {}
        hops = parse.tables(r.text)
        for row in hops[0] if hops else []:
            got[(prefix + parse.tile_name(row["tile_bytes"]), "us per hop")] = \
                float(row["us_per_hop"])
        for row in hops[1] if len(hops) > 1 else []:
            if float(row["GB/s"]) > 0:  # (0: the longer run took no longer, no figure)
                got[(prefix + f"{parse.tile_name(row['tile_bytes'])} x {row['tiles']} "
                     "in flight", "GB/s")] = float(row["GB/s"])
        return got
    return Case(config, run, unit="us", better="lower", reference=reference, seconds=seconds,
                units={"GB/s": ("GB/s", "higher")})


def ref_case(configs, hops, np_extra=(), env=None, prefix="", seconds=90):
    """bench_hop_ref on 2 processes: several columns, each its own config: {column: config}.
    Returns one case per column, the program run once per round by the first."""
    cache = {}

    def first(b):
        r = b.sh("hop_ref", b.mpirun(2, *np_extra) + [b.exe("bench/bench_hop_ref"), hops],
                 env=env, timeout=300)
        t = parse.tables(r.text) if r.ok else []
        cache["rows"], cache["round"] = (t[0] if t else []), b.round
        return column(b, list(configs)[0])

    def column(b, col):  # this round's run only (none when it was skipped)
        rows = cache.get("rows", []) if cache.get("round") == b.round else []
        return {(prefix + parse.tile_name(row["tile_bytes"]), "us per hop"): float(row[col])
                for row in rows if parse.number(row.get(col)) is not None}

    cases = []
    for k, (col, config) in enumerate(configs.items()):
        run = first if k == 0 else (lambda b, c=col: column(b, c))
        cases.append(Case(config, run, unit="us", better="lower",
                          seconds=seconds if k == 0 else 0))
    return cases


def add_hop(p):
    p.add_argument("--hops", type=int, default=200, help="hops per tile size (200)")


def run_hop(bench, a):
    """One tile changed in turn on two processes' GPUs: Rill's chain (GPU direct with early
    announcements, by request, host-staged) next to the same chain by hand with no runtime."""
    need_gpus(bench, 2, "hop")
    bench.build(["bench_gpu_hop", "bench_hop_ref"])
    ce = "by hand: copy engine + semaphore"
    cases = ref_case({"ce_sem": ce, "sm_sem": "by hand: SM put + semaphore",
                      "nccl": "NCCL send/recv", "local": "local kernel chain (one GPU)"}, a.hops)
    cases += [hop_case("rill GPU direct, early", [a.hops], reference=ce),
              hop_case("rill GPU direct, by request", [a.hops, "--mca", "dtd_gpu_early", 0],
                       reference=ce),
              hop_case("rill host-staged", [a.hops, "--mca", "comm_gpu_direct", "off"],
                       reference=ce)]
    finish(bench, cases)


def add_nodes(p):
    p.add_argument("--hops", type=int, default=20, help="hops per tile size (20)")
    p.add_argument("--max", type=int, default=134217728, help="largest tile, bytes (128 MiB)")
    p.add_argument("--dpotrf", type=int, default=0, metavar="N",
                   help="also dpotrf at this N (NB 2048) over UCX (auto and direct) and through "
                   "the pipeline over MPI")
    p.add_argument("--no-perftest", action="store_true", help="skip ucx_perftest's floors")


def run_nodes(bench, a):
    """2 processes x 1 GPU as 2 simulated nodes, every engine on the same loopback sockets;
    then one node with MPI on shared memory."""
    need_gpus(bench, 2, "nodes")
    bench.build(["bench_gpu_hop", "bench_hop_ref", "testing_dpotrf"])
    env = {"UCX_TLS": "tcp,cuda_copy,self"}
    tcp = ("--mca", "pml", "ob1", "--mca", "btl", "self,tcp", "-x", "UCX_TLS")
    shm = ("--mca", "pml", "ob1", "--mca", "btl", "self,vader", "-x", "UCX_TLS")
    nodes = ["--mca", "comm_ranks_per_node", 1]
    mpi_alone, hop = "MPI alone (host buffers)", [a.hops, a.max]
    cases = ref_case({"mpi_host": mpi_alone, "nccl": "NCCL sockets"}, a.hops,
                     tcp + ("-x", "NCCL_P2P_DISABLE", "-x", "NCCL_SHM_DISABLE"),
                     env=dict(env, NCCL_P2P_DISABLE="1", NCCL_SHM_DISABLE="1"))
    for config, mca in (
            ("rill GPU direct over UCX", ["--mca", "comm_net", "ucx", "--mca", "comm_net_gpu",
                                          "direct"]),
            ("rill pipeline over UCX", ["--mca", "comm_net", "ucx"]),
            ("rill whole tile over UCX", ["--mca", "comm_net", "ucx", "--mca",
                                          "comm_gpu_direct", "off"]),
            ("rill pipeline over MPI", ["--mca", "comm_net", "mpi"]),
            ("rill whole tile over MPI", ["--mca", "comm_net", "mpi", "--mca",
                                          "comm_gpu_staged", "tile"])):
        cases.append(hop_case(config, hop + nodes + mca, tcp, reference=mpi_alone, env=env))
    sm_alone = "shared memory: MPI alone (host buffers)"
    cases += ref_case({"mpi_host": sm_alone}, a.hops, shm, env=env, prefix="shm ")
    for config, mca in (("shared memory: rill pipeline", ["--mca", "comm_gpu_direct", "off"]),
                        ("shared memory: rill whole tile", ["--mca", "comm_gpu_direct", "off",
                                                            "--mca", "comm_gpu_staged",
                                                            "tile"])):
        cases.append(hop_case(config, hop + mca, shm, reference=sm_alone, env=env,
                              prefix="shm "))
    if not a.no_perftest:
        cases += perftest_cases(a.max)
    if a.dpotrf:
        n, ref = a.dpotrf, "rill dpotrf pipeline over MPI"
        base = ["-N", n, "-t", 2048, "-P", 1, "-Q", 2, "-g", 1, "--nruns", 2] + nodes
        for config, mca in ((ref, ["--mca", "comm_net", "mpi"]),
                            ("rill dpotrf over UCX (auto)", ["--mca", "comm_net", "ucx"]),
                            ("rill dpotrf GPU direct over UCX", ["--mca", "comm_net", "ucx",
                                                                 "--mca", "comm_net_gpu",
                                                                 "direct"])):
            cases.append(tester_case(config, "dpotrf", f"N={n}", base + mca, np=2, env=env,
                                     mpi_extra=tcp, timeout=200, seconds=120,
                                     reference="" if config == ref else ref))
    finish(bench, cases)


def perftest_cases(max_bytes):
    """ucx_perftest between GPU 0 and GPU 1 over loopback TCP: the engine's own floors."""
    tests = (("ucx_perftest tag_bw CUDA", ["-t", "tag_bw", "-m", "cuda"], {}),
             ("ucx_perftest tag_bw CUDA, put_ppln", ["-t", "tag_bw", "-m", "cuda"],
              {"UCX_RNDV_SCHEME": "put_ppln"}),
             ("ucx_perftest ucp_put_bw CUDA", ["-t", "ucp_put_bw", "-m", "cuda"], {}),
             ("ucx_perftest tag_bw host", ["-t", "tag_bw", "-m", "host"], {}))
    return [Case(name, (lambda b, t=t, e=e: perftest(b, t, e, max_bytes)), unit="MB/s",
                 seconds=40) for name, t, e in tests]


def perftest(b, test, env, max_bytes):
    lib = ucx_libdir(b)
    if not lib:
        raise BenchError("no libucp linked into librill.so: ucx_perftest skipped")
    exe = os.path.normpath(os.path.join(lib, "..", "bin", "ucx_perftest"))
    if not os.access(exe, os.X_OK):
        exe = shutil.which("ucx_perftest") or ""
    if not exe:
        raise BenchError(f"no ucx_perftest next to {lib} nor on PATH: its floors skipped")
    got = {}
    for size in (s for s in HOP_SIZES if 1048576 <= s <= max_bytes):
        mine = dict(env, UCX_TLS="tcp,cuda_copy,self", LD_LIBRARY_PATH=lib)
        log = b.log_name(f"perftest_{test[1]}_{size}")
        with open(log + ".server", "w", encoding="utf-8") as srv_out:
            srv = subprocess.Popen([exe, "-p", "13337"], stdout=srv_out, stderr=srv_out,
                                   start_new_session=True,
                                   env=dict(os.environ, CUDA_VISIBLE_DEVICES="0", **mine))
            try:
                time.sleep(1)
                r = b.sh(f"perftest_{test[1]}_{size}",
                         [exe, "127.0.0.1", "-p", 13337, "-s", size, "-n",
                          8 if size > 20000000 else 30, "-w", 2] + test,
                         env=dict(mine, CUDA_VISIBLE_DEVICES="1"), timeout=60)
                srv.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
            finally:  # the server never outlives its client
                if srv.poll() is None:
                    stop_group(srv, grace=2)
        for line in r.text.splitlines():
            f = line.split()
            if "Final" in line and len(f) > 6 and parse.number(f[6]) is not None:
                # column 7: MB/s of 2^20 bytes; recorded as MB/s of 10^6 bytes
                got[(parse.tile_name(size), "MB/s")] = float(f[6]) * 1.048576
    return got


def ucx_libdir(b):
    out = b.sh("ldd_librill", ["ldd", os.path.join(b.build_dir, "librill.so")], quiet=True)
    for line in out.text.splitlines():
        if "libucp.so" in line and "=>" in line:
            return os.path.dirname(line.split("=>")[1].split()[0])
    return ""


# -- channels, tasks ---------------------------------------------------------------------------
def run_channels(bench, a):
    """bench_channels on 2 processes: GB/s per size and path (port channel from host and device,
    memory channel, copy engine, NCCL), and the latencies."""
    need_gpus(bench, 2, "channels")
    bench.build(["bench_channels"])

    def run(b):
        r = b.sh("bench_channels", b.mpirun(2) + [b.exe("bench/bench_channels")], timeout=300)
        if not r.ok:  # (it exits 1 when a path moved wrong bytes)
            return {}
        got = {}
        for head, rows in parse.markdown_tables(r.text).items():
            if not head.startswith("GB/s"):
                continue
            checked = next((x for x in rows if x.get("size") == "check"), {})
            for row in rows:
                for col, cell in row.items():
                    if col in ("size", "n") or row["size"] == "check" or \
                            checked.get(col) != "ok":  # a path whose bytes were wrong: none
                        continue
                    if parse.number(cell) is not None:
                        got[(f"{row['size']} {col}", "GB/s")] = float(cell)
        for line in r.text.splitlines():
            if ":" in line and ("ping-pong" in line or "round trip" in line):
                name, _, rest = line.partition(":")
                v = parse.number(rest.split()[0]) if rest.split() else None
                if v is not None:
                    got[(name.strip(), "us")] = v
        return got
    finish(bench, [Case("bench_channels", run, unit="GB/s", seconds=240,
                        units={"us": ("us", "lower")})])


def add_tasks(p):
    p.add_argument("--tasks", type=int, default=200000, help="tasks per case (200000)")
    p.add_argument("--setting", action="append", default=[], metavar="'--mca NAME VALUE ...'",
                   help="a setting to compare (repeatable; default: the defaults, and idle "
                   "workers that do not poll: --mca runtime_idle_spinners 0)")


def gpu_tasks_rows(text):
    """bench_gpu_tasks' lines, gpu_tasks,<cuda|cpu>,<case, may hold commas>,tasks_per_s=X,
    us_per_task=Y: {(class and case, "us per task"): Y}."""
    return {(f"{m.group(1)} {m.group(2)}", "us per task"): float(m.group(3))
            for m in re.finditer(r"^gpu_tasks,(\w+),(.*),tasks_per_s=[0-9.]+,"
                                 r"us_per_task=([0-9.]+)$", text, re.M)}


def run_tasks(bench, a):
    """bench_gpu_tasks: the GPU manager's cost per tiny task (GPU and CPU classes), per
    setting."""
    need_gpus(bench, 1, "tasks")
    bench.build(["bench_gpu_tasks"])
    settings = a.setting or ["", "--mca runtime_idle_spinners 0"]

    def case(setting):
        def run(b):
            r = b.sh(f"gpu_tasks_{setting}", [b.exe("bench/bench_gpu_tasks"), a.tasks]
                     + setting.split(), timeout=200)
            return gpu_tasks_rows(r.text)
        return Case(f"rill {setting or 'defaults'}", run, unit="us", better="lower",
                    seconds=60, reference="" if setting == settings[0] else
                    f"rill {settings[0] or 'defaults'}")
    finish(bench, [case(s) for s in settings])


# -- the CPU suites ----------------------------------------------------------------------------
def add_dtd(p):
    p.add_argument("--tasks", type=int, default=100000, help="independent tasks per run")
    p.add_argument("--reps", type=int, default=5, help="runs per case in one call, best kept")
    p.add_argument("--workers", default="1,2", help="worker counts (1,2)")


def run_dtd(bench, a):
    """bench_dtd: DTD's cost per task, from the first insertion to the end of the wait."""
    bench.build(["bench_dtd"])

    def run(b):
        csv_path = os.path.join(b.out, "bench_dtd.csv")
        r = b.sh("bench_dtd", [b.exe("bench/bench_dtd"), "--tasks", a.tasks, "--reps", a.reps,
                               "--workers", a.workers, "--csv", csv_path], timeout=300)
        if not r.ok:
            return {}
        with open(csv_path, encoding="utf-8") as f:
            rows = parse.csv_rows(f.read())
        got = {}
        for row in rows:
            w = row["workers"]
            for col, v in row.items():
                if col.endswith("_us") and parse.number(v) is not None:
                    shape = "chain" if col == "chain_us" else col[:-3].replace("F", "F=")
                    got[(f"{a.tasks} tasks {shape}, {w} worker{'s' if w != '1' else ''}",
                         "us per task")] = float(v)
        return got
    finish(bench, [Case("rill DTD", run, unit="us", better="lower", seconds=60)])


def add_comm(p):
    p.add_argument("--max-mib", type=int, default=64, help="largest tile, MiB (64)")


def run_comm(bench, a):
    """bench_comm on 2 ranks: a remote dependency's hop per tile size next to an MPI ping-pong
    of the same bytes."""
    bench.build(["bench_comm"])
    cache = {}

    def rill(b):
        csv_path = os.path.join(b.out, "bench_comm.csv")
        r = b.sh("bench_comm", b.mpirun(2) + [b.exe("bench/bench_comm"), "--max-mib",
                                              a.max_mib, "--csv", csv_path], timeout=300)
        rows = []
        if r.ok:
            with open(csv_path, encoding="utf-8") as f:
                rows = parse.csv_rows(f.read())
        cache["rows"], cache["round"] = rows, b.round
        return {(parse.tile_name(x["bytes"]), "us per hop"): float(x["rill_us_per_hop"])
                for x in rows}

    def mpi(b):  # this round's run only
        rows = cache.get("rows", []) if cache.get("round") == b.round else []
        return {(parse.tile_name(x["bytes"]), "us per hop"): float(x["mpi_us_per_msg"])
                for x in rows}
    finish(bench, [Case("rill remote dependency", rill, unit="us", better="lower",
                        reference="MPI ping-pong", seconds=60),
                   Case("MPI ping-pong", mpi, unit="us", better="lower", seconds=0)])


def add_ptg(p):
    p.add_argument("-N", type=int, default=8000, help="dpotrf's order (8000)")
    p.add_argument("--nb", type=int, default=256, help="tile size (256)")
    p.add_argument("--tasks", type=int, default=100000, help="tasks of the per-task graphs")


def ptg_output(text):
    """bench_ptg's two tables: {what: GFLOP/s} of the dpotrf rows, {shape: (DTD, PTG) us per
    task} of the per-task rows (the name is every field but the last two)."""
    potrf, shapes, section = {}, {}, None
    for line in text.splitlines():
        f = line.split()
        if not f or line.startswith("#"):
            continue
        if f[0] in ("what", "shape"):
            section = f[0]
        elif len(f) >= 3 and parse.number(f[-1]) is not None and parse.number(f[-2]) is not None:
            name = " ".join(f[:-2])
            if section == "what":
                potrf[name.split()[0]] = float(f[-1])
            elif section == "shape":
                shapes[name] = (float(f[-2]), float(f[-1]))
    return potrf, shapes


def run_ptg(bench, a):
    """bench_ptg: PTG's dpotrf and per-task cost next to DTD's, LAPACKE_dpotrf alongside."""
    bench.build(["bench_ptg"])
    size, out, b_round = f"N={a.N} NB={a.nb}", {}, [0]

    def pick(who, b=None):
        if b is not None:  # the first case of a round runs the program
            r = b.sh("bench_ptg", [b.exe("bench/bench_ptg"), a.N, a.nb, 3, a.tasks],
                     timeout=300)
            out["potrf"], out["shapes"] = ptg_output(r.text) if r.ok else ({}, {})
            out["round"] = b.round
        elif out.get("round") != b_round[0]:
            return {}  # this round's run was skipped
        got = {}
        if who in out.get("potrf", {}):
            got[(size, "GFLOP/s")] = out["potrf"][who]
        for shape, (dtd, ptg) in out.get("shapes", {}).items() if who != "LAPACKE_dpotrf" else ():
            got[(f"{a.tasks} tasks, {shape}", "us per task")] = dtd if who == "DTD" else ptg
        return got
    def later(who):
        def run(b):
            b_round[0] = b.round
            return pick(who)
        return run
    units = {"us per task": ("us", "lower")}
    finish(bench, [Case("LAPACKE_dpotrf", lambda b: pick("LAPACKE_dpotrf", b), unit="GFLOP/s",
                        seconds=120),
                   Case("DTD", later("DTD"), unit="GFLOP/s", seconds=0, units=units,
                        reference="LAPACKE_dpotrf"),
                   Case("PTG", later("PTG"), unit="GFLOP/s", seconds=0, units=units,
                        reference="DTD")])


SUITES = {
    "dla": (add_dla, run_dla, "dense linear algebra next to LAPACK / cuSOLVER / cuBLAS"),
    "getrf": (add_getrf, run_getrf, "LU with partial pivoting next to LAPACKE and ScaLAPACK (CPU), "
              "cuSOLVER (GPU)"),
    "scale": (add_scale, run_scale, "dpotrf per GPU as N and the GPUs grow"),
    "four": (add_four, run_four, "4 processes x 1 GPU: dpotrf and dgemm next to cusolverMg"),
    "ab": (add_ab, run_ab, "variants of a tester interleaved (A/B)"),
    "hop": (add_hop, run_hop, "one tile between 2 GPUs: Rill next to the chain by hand"),
    "nodes": (add_nodes, run_nodes, "2 simulated nodes over loopback TCP: UCX, MPI, NCCL"),
    "channels": (None, run_channels, "port and memory channels next to NCCL (2 processes)"),
    "tasks": (add_tasks, run_tasks, "the GPU manager's cost per task"),
    "dtd": (add_dtd, run_dtd, "DTD's cost per task (CPU)"),
    "comm": (add_comm, run_comm, "a remote dependency's hop next to MPI (CPU, 2 ranks)"),
    "ptg": (add_ptg, run_ptg, "PTG next to DTD: dpotrf and per-task cost (CPU)"),
    "metg": (metg.add_metg, metg.run_metg, "Task Bench's METG(50%%) per pattern and system"),
}


def run_suite(args, name):
    """Run a suite; the rows it gathered are appended even when a later step fails."""
    bench = Bench(args, name)
    try:
        SUITES[name][1](bench, args)
    finally:
        bench.record()
