"""rill_bench metg: Task Bench's minimum effective task granularity, METG(50%), per pattern and
system (Slaughter et al., SC20, and Task Bench's scripts/chart_metg.py).

For one system, pattern and layout (ranks x cores) the sweep runs the same graph with the
compute_bound kernel at a number of iterations per task that halves from --iter-max on. Each
run gives its FLOP/s and its time per task (elapsed / tasks x ranks x cores: the time one
core spends per task). Efficiency: a run's FLOP/s over the best FLOP/s of any system's run of
that pattern and layout in the call (the large tasks, where overhead hides: the machine's
reachable peak, as Task Bench's --peak-compute-bandwidth; --efficiency own: the system's own
sweep, which flatters a system whose large tasks are slow). METG(50%): the smallest time per task of
a run at 50% efficiency or more, interpolated towards the next, smaller, run below 50% as
chart_metg.py does. The sweep stops two runs after the efficiency fell below the threshold.
"""
import csv
import os
import re
import subprocess
import sys

from .core import BadArgument, BenchError, Case

PATTERNS = ("stencil_1d", "nearest", "fft", "tree", "all_to_all")
_OUT = {"elapsed": r"^Elapsed Time ([0-9.e+-]+) seconds$", "tasks": r"^Total Tasks ([0-9]+)$",
        "flops": r"^Total FLOPs ([0-9]+)$"}


def add_metg(p):
    p.add_argument("--system", action="append", default=[], metavar="'NAME=COMMAND'",
                   help="a Task Bench implementation to measure: its name and command (a "
                   "binary of a Task Bench build, with options; {cores} is replaced by the "
                   "cores per rank); repeatable; the first is the reference of the others. "
                   "Default: Rill DTD and Rill PTG (apps/taskbench, built with -DTASKBENCH_DIR); "
                   "apps/taskbench/peers/build.sh builds the others and prints their --system")
    p.add_argument("--layout", default="1x2,2x1", help="ranks x cores per rank, comma-"
                   "separated (1x2,2x1); more than one rank: mpirun -np ranks")
    p.add_argument("--patterns", default=",".join(PATTERNS),
                   help=f"Task Bench dependence patterns ({','.join(PATTERNS)}); nearest "
                   "runs with -radix 5")
    p.add_argument("--width", type=int, default=2, help="points per timestep (2)")
    p.add_argument("--steps", type=int, default=1000, help="timesteps (1000)")
    p.add_argument("--iter-max", type=int, default=1 << 16,
                   help="iterations of the compute_bound kernel of the sweep's first run (65536)")
    p.add_argument("--threshold", type=float, default=0.5, help="efficiency of METG (0.5)")
    p.add_argument("--efficiency", choices=("call", "own"), default="call",
                   help="a run's FLOP/s over the best of any system's run of the same pattern "
                   "and layout in the call (call: the machine's reachable peak, as Task Bench's "
                   "--peak-compute-bandwidth), or over its own sweep's best (own)")


def metg(points, threshold, peak=None):
    """METG from a sweep's runs [(time per task, FLOP/s)], in the sweep's order (largest tasks
    first), the efficiency of a run its FLOP/s over peak (default: the sweep's best): None when
    no run reached the threshold or none fell below it after."""
    best = peak or max(r for _, r in points)
    eff = [r / best for _, r in points]
    above = [i for i, e in enumerate(eff) if e >= threshold]
    if not above or all(e >= threshold for e in eff):
        return None
    i = min(above, key=lambda k: points[k][0])
    t = points[i][0]
    if i + 1 < len(points) and points[i + 1][0] < t:  # linear, between i and the next run
        (t0, e0), (t1, e1) = (points[i][0], eff[i]), (points[i + 1][0], eff[i + 1])
        t = t1 + (t0 - t1) * (threshold - e1) / (e0 - e1) if e0 != e1 else t0
    return t


def run_graph(b, system, cmd, ranks, cores, pattern, a, it):
    """One Task Bench run: (time per task in us, FLOP/s), or None when it failed."""
    argv = cmd.replace("{cores}", str(cores)).split()
    argv += ["-steps", a.steps, "-width", a.width, "-type", pattern, "-kernel", "compute_bound",
             "-iter", it]
    if pattern == "nearest":
        argv += ["-radix", 5]
    if ranks > 1:
        argv = b.mpirun(ranks) + argv
    r = b.sh(f"metg_{system}_{ranks}x{cores}_{pattern}_{it}", argv, timeout=120, quiet=True)
    got = {k: re.search(p, r.text, re.M) for k, p in _OUT.items()}
    if not r.ok or not all(got.values()):
        b.say(f"  {system}, {pattern}, -iter {it}: {r.why()}")
        return None
    elapsed, tasks, flops = (float(got[k].group(1)) for k in ("elapsed", "tasks", "flops"))
    return elapsed / tasks * ranks * cores * 1e6, flops / elapsed


def sweep(b, system, cmd, ranks, cores, pattern, a):
    """The runs of one sweep, largest tasks first, until two fell below the threshold."""
    points, below, it = [], 0, a.iter_max
    while it >= 1 and below < 2:
        p = run_graph(b, system, cmd, ranks, cores, pattern, a, it)
        if p is None:
            break
        points.append(p)
        best = max(r for _, r in points)
        below = below + 1 if p[1] / best < a.threshold else 0
        it //= 2
    return points


def size_of(pattern, ranks, cores, width):
    return (f"{pattern}{' r5' if pattern == 'nearest' else ''}, {ranks} rank"
            f"{'s' if ranks > 1 else ''} x {cores} core{'s' if cores > 1 else ''}, width {width}")


def sweep_case(name, cmd, ranks, cores, pattern, a, sweeps):
    """One system's sweep of one pattern and layout in a round, kept in sweeps[(name, size)]
    (the METGs come after every round, against the best FLOP/s of the call: run_metg). One
    case per sweep, so that the systems take turns pattern by pattern: a machine whose speed
    drifts over the call (a shared host) shifts every system's sweep of a pattern alike."""
    def run(b):
        points = sweep(b, name, cmd, ranks, cores, pattern, a)
        if points:
            sweeps.setdefault((name, size_of(pattern, ranks, cores, a.width)), []).append(points)
        return {}
    return Case(name, run, unit="us", better="lower", seconds=20)


def metg_rows(bench, cases, sweeps, a):
    """The rows: per system and size the METG of each round's sweep, the efficiency of a run
    against the best FLOP/s of any system's run of that size in the call (--efficiency call,
    the machine's reachable peak) or of its own sweep (--efficiency own)."""
    peak = {}
    for (_, size), runs in sweeps.items():
        rates = [r for points in runs for _, r in points]
        peak[size] = max(rates + [peak.get(size, 0.0)])
    order, values = [], {}
    figure = "METG(50%)" if a.efficiency == "call" else "METG(50%), own sweep's peak"
    firsts = {}  # each system's first case: its rows, with its reference
    for case in cases:
        firsts.setdefault(case.config, case)
    for case in firsts.values():
        for (name, size), runs in sweeps.items():
            if name != case.config:
                continue
            got = [metg(points, a.threshold, peak[size] if a.efficiency == "call" else None)
                   for points in runs]
            got = [m for m in got if m is not None]
            if not got:
                bench.say(f"  {name}, {size}: no METG from its {len(runs)} sweep(s)")
                continue
            order.append((case, size, figure))
            values[(name, size, figure)] = got
    bench.gather(order, values)
    write_sweeps(bench, sweeps, peak if a.efficiency == "call" else None)


def write_sweeps(bench, sweeps, peak):
    """Every run of every sweep to OUT/metg_sweeps.csv (system, size, round, time per task,
    FLOP/s, efficiency), and its plot, OUT/metg_efficiency.png, when matplotlib is there."""
    path = os.path.join(bench.out, "metg_sweeps.csv")
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["system", "size", "round", "us_per_task", "flops_per_s", "efficiency"])
        for (name, size), runs in sweeps.items():
            for k, points in enumerate(runs):
                best = peak[size] if peak else max(r for _, r in points)
                for t, r in points:
                    w.writerow([name, size, k + 1, f"{t:.4g}", f"{r:.4g}", f"{r / best:.4g}"])
    png = os.path.join(bench.out, "metg_efficiency.png")
    bench.say(f"sweeps: {path}" + (f", plotted in {png}" if plot(path, png) else
                                   " (no plot: matplotlib is missing)"))


def plot(csv_path, png_path):
    """Efficiency against time per task, a panel per pattern and layout, a line per system
    and round; under /usr/bin/python3 when this interpreter lacks matplotlib. True: drawn."""
    try:
        import matplotlib
    except ImportError:
        system = "/usr/bin/python3"
        if sys.executable == system or not os.path.exists(system):
            return False
        tools = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        r = subprocess.run([system, "-m", "rillbench.metg", csv_path, png_path],
                           env=dict(os.environ, PYTHONPATH=tools), capture_output=True)
        return r.returncode == 0
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    with open(csv_path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    sizes = list(dict.fromkeys(r["size"] for r in rows))
    systems = list(dict.fromkeys(r["system"] for r in rows))
    if not sizes:
        return False
    cols = min(3, len(sizes))
    nrows = (len(sizes) + cols - 1) // cols
    fig, axes = plt.subplots(nrows, cols, squeeze=False, figsize=(5 * cols, 3.6 * nrows),
                             layout="constrained")
    colours = plt.get_cmap("tab10")
    for ax, size in zip(axes.flat, sizes):
        for i, system in enumerate(systems):
            mine = [r for r in rows if r["size"] == size and r["system"] == system]
            for k, rnd in enumerate(dict.fromkeys(r["round"] for r in mine)):
                pts = [r for r in mine if r["round"] == rnd]
                ax.plot([float(r["us_per_task"]) for r in pts],
                        [float(r["efficiency"]) for r in pts], marker=".", lw=1,
                        color=colours(i % 10), alpha=1.0 if k == 0 else 0.4,
                        label=system if k == 0 else None)
        ax.axhline(0.5, color="0.5", lw=0.8, ls="--")
        ax.set_xscale("log")
        ax.set_title(size, fontsize=9)
        ax.set_xlabel("time per task per core (us)")
        ax.set_ylabel("efficiency")
        ax.legend(fontsize=7)
    for ax in list(axes.flat)[len(sizes):]:
        ax.axis("off")
    fig.savefig(png_path, dpi=90)
    plt.close(fig)
    return True


if __name__ == "__main__":  # python3 -m rillbench.metg CSV PNG (plot's other interpreter)
    sys.exit(0 if plot(sys.argv[1], sys.argv[2]) else 1)


def parse_layouts(text):
    out = []
    for item in text.split(","):
        r, _, c = item.strip().partition("x")
        if not (r.isdigit() and c.isdigit() and 1 <= int(r) <= 64 and 1 <= int(c) <= 256):
            raise BadArgument(f"--layout: RANKSxCORES items, e.g. 1x2,2x1; got '{item}'")
        out.append((int(r), int(c)))
    return out


def run_metg(bench, a):
    """METG(50%) of each system, pattern and layout; in each round the systems take turns,
    pattern by pattern and layout by layout."""
    layouts = parse_layouts(a.layout)
    patterns = [p.strip() for p in a.patterns.split(",") if p.strip()]
    for p in patterns:
        if p not in PATTERNS + ("stencil_1d_periodic", "dom", "spread", "random_nearest",
                                "no_comm", "trivial"):
            raise BadArgument(f"--patterns: unknown pattern '{p}'")
    systems = []
    for spec in a.system:
        name, sep, cmd = spec.partition("=")
        if not sep or not name.strip() or not cmd.strip():
            raise BadArgument(f"--system: expected 'NAME=COMMAND', got '{spec}'")
        systems.append((name.strip(), cmd.strip()))
    if not systems:  # Rill's own: DTD, and PTG where rillcc built it
        bench.build(["taskbench_rill_dtd"])
        try:  # (a target only where rillcc is built)
            bench.build(["taskbench_rill_ptg"])
        except BenchError as e:
            bench.say(f"  Rill PTG left out: {e}")
        for dsl in ("dtd", "ptg"):
            exe = os.path.join(bench.build_dir, "apps", "taskbench", f"taskbench_rill_{dsl}")
            if os.access(exe, os.X_OK):
                systems.append((f"Rill {dsl.upper()}", f"{exe} --mca runtime_num_cores {{cores}}"))
        if not systems or systems[0][0] != "Rill DTD":
            raise BenchError("taskbench_rill_dtd is not built: configure the build with "
                             "-DTASKBENCH_DIR=<a Task Bench checkout> (apps/taskbench/README.md)")
    sweeps = {}
    cases = [sweep_case(n, c, ranks, cores, pattern, a, sweeps)
             for ranks, cores in layouts for pattern in patterns for n, c in systems]
    for case in cases:
        if case.config != systems[0][0]:
            case.reference = systems[0][0]
    bench.rounds(cases)
    metg_rows(bench, cases, sweeps, a)
    bench.say("")
    bench.say(bench.table())
