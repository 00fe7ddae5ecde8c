#!/usr/bin/env python3
"""Turn the benchmarks' CSV tables into PNG figures (matplotlib, no display needed).

    bench/plot.py                        # all: bench/results/{dla,dtd,comm}.csv -> docs/figures/
    bench/plot.py dla  FILE.csv [-o OUT.png]
    bench/plot.py dtd  FILE.csv [--ref PARSEC.csv] [-o OUT.png]
    bench/plot.py comm FILE.csv [--short-limit BYTES] [-o OUT.png]

The CSV files are the ones bench/bench_dla.sh, bench_dtd --csv and bench_comm --csv write:
'#' lines are comments (the one starting '# machine:', else the first two, become the
figure's footnote), then a header row and one row per measurement. An empty or
non-numeric value (a failed run) is left out of the figure.
"""
import argparse
import csv
import os
import sys
import textwrap

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)

try:
    import matplotlib
except ImportError:
    # This python3 lacks matplotlib (a pyenv or venv interpreter first on PATH, say): run
    # again under the system's /usr/bin/python3 if that is another one (as
    # tools/rill_trace_plot does), else say what to install.
    system = "/usr/bin/python3"
    if (os.environ.get("RILL_PLOT_REEXEC") is None and os.path.exists(system)
            and sys.executable != system):
        os.environ["RILL_PLOT_REEXEC"] = "1"
        try:
            os.execv(system, [system, os.path.realpath(__file__)] + sys.argv[1:])
        except OSError:
            pass
    sys.exit(
        f"plot.py: matplotlib is missing for {sys.executable}: apt-get install "
        "python3-matplotlib (or pip install matplotlib); scripts/bootstrap.sh installs it"
    )

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FuncFormatter  # noqa: E402


class CsvError(Exception):
    pass


def read_csv(path, columns):
    """(rows as dicts, comment lines) of a benchmark CSV; columns must all be present."""
    try:
        with open(path, newline="") as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise CsvError(f"cannot read {path}: {e.strerror}")
    comments = [l[1:].strip() for l in lines if l.startswith("#")]
    body = [l for l in lines if l.strip() and not l.startswith("#")]
    if not body:
        raise CsvError(f"{path}: no header row")
    rows = list(csv.DictReader(body))
    missing = [c for c in columns if c not in (rows[0].keys() if rows else body[0].split(","))]
    if missing:
        raise CsvError(
            f"{path}: column(s) {', '.join(missing)} missing (header: {body[0]}); is it the "
            "right kind of table?"
        )
    return rows, comments


def num(s):
    """The value as a float, or None when empty or not a number ('fail')."""
    try:
        v = float(s)
    except (TypeError, ValueError):
        return None
    return v if v == v else None  # NaN: left out too


def footnote(fig, comments, width=150):
    """The '# machine:' comment (transcribed tables), else the first two (a benchmark's own:
    date, host, version)."""
    note = next((c for c in comments if c.startswith("machine:")), "; ".join(comments[:2]))
    if note:
        fig.text(0.01, 0.01, "\n".join(textwrap.wrap(note, width)), fontsize=7, color="0.35",
                 va="bottom", ha="left")


def save(fig, out):
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    fig.savefig(out, dpi=120)
    plt.close(fig)
    print(f"plot.py: wrote {out}")


def size_label(b, _pos=None):
    b = int(round(b))
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= scale and b % scale == 0:
            return f"{b // scale} {unit}"
    return f"{b} B"


# ---------------------------------------------------------------- dla


REF_NAMES = {"dpotrf": "LAPACKE_dpotrf", "dgemm": "cblas_dgemm", "dposv": "LAPACKE_dposv"}


def plot_dla(path, out):
    rows, comments = read_csv(
        path, ["op", "N", "NB", "config", "procs", "cores_per_proc", "gflops"]
    )
    ops = list(dict.fromkeys(r["op"] for r in rows))
    if not ops:
        raise CsvError(f"{path}: no rows")
    fig, axes = plt.subplots(1, len(ops), figsize=(5.6 * len(ops), 5.6), squeeze=False)
    nbs = sorted({int(r["NB"]) for r in rows if r["config"] != "ref" and r["NB"]})
    colors = {nb: plt.cm.viridis(i / max(1, len(nbs) - 1) * 0.85) for i, nb in enumerate(nbs)}
    layouts = sorted({(int(r["procs"]), int(r["cores_per_proc"])) for r in rows
                      if r["config"] != "ref"})
    styles = [("o", "-"), ("^", "--"), ("s", ":"), ("D", "-.")]
    style = {lay: styles[i % len(styles)] for i, lay in enumerate(layouts)}
    for ax, op in zip(axes[0], ops):
        mine = [r for r in rows if r["op"] == op]
        values = []
        ref = sorted((int(r["N"]), num(r["gflops"])) for r in mine if r["config"] == "ref")
        ref = [(n, g) for n, g in ref if g is not None]
        if ref:
            threads = next(r["cores_per_proc"] for r in mine if r["config"] == "ref")
            ax.plot([n for n, _ in ref], [g for _, g in ref], color="black", ls="--", marker="x",
                    ms=8, lw=1.5, label=f"reference: one LAPACKE/CBLAS call, {threads} threads")
            ax.text(0.02, 0.02, f"reference: {REF_NAMES.get(op, op)}", transform=ax.transAxes,
                    fontsize=7, color="0.35")
            values += [g for _, g in ref]
        for lay in layouts:
            for nb in nbs:
                pts = sorted((int(r["N"]), num(r["gflops"])) for r in mine
                             if r["config"] != "ref" and r["NB"] and int(r["NB"]) == nb
                             and (int(r["procs"]), int(r["cores_per_proc"])) == lay)
                pts = [(n, g) for n, g in pts if g is not None]
                if not pts:
                    continue
                marker, ls = style[lay]
                procs = f"{lay[0]} proc{'s' if lay[0] > 1 else ''} x {lay[1]}"
                ax.plot([n for n, _ in pts], [g for _, g in pts], color=colors[nb], marker=marker,
                        ls=ls, ms=7, label=f"Rill NB {nb}, {procs}")
                values += [g for _, g in pts]
        ns = sorted({int(r["N"]) for r in mine})
        ax.set_xticks(ns)
        if len(ns) == 1:
            ax.set_xlim(ns[0] * 0.8, ns[0] * 1.2)
        else:
            span = ns[-1] - ns[0]
            ax.set_xlim(ns[0] - 0.12 * span, ns[-1] + 0.12 * span)
        if values:
            lo, hi = min(values), max(values)
            ax.set_ylim(max(0, lo - 0.25 * (hi - lo) - 5), hi + 0.15 * (hi - lo) + 3)
        ax.set_title(f"tiled {op}")
        ax.set_xlabel("N (matrix order)")
        ax.set_ylabel("GFLOP/s")
        ax.grid(True, alpha=0.3)
    # one legend for both panels, below them: the configurations are the same
    handles, labels = {}, []
    for ax in axes[0]:
        for h, l in zip(*ax.get_legend_handles_labels()):
            if l not in handles:
                handles[l] = h
                labels.append(l)
    fig.legend([handles[l] for l in labels], labels, loc="lower center", ncol=3, fontsize=8,
               bbox_to_anchor=(0.5, 0.06), frameon=False)
    footnote(fig, comments)
    fig.tight_layout(rect=(0, 0.2, 1, 1))
    save(fig, out)


# ---------------------------------------------------------------- dtd

FLOWS = [1, 2, 5, 10, 15]


def dtd_series(rows):
    """{workers: [(F, us)]} and {workers: chain us}"""
    series, chain = {}, {}
    for r in rows:
        w = int(r["workers"])
        series[w] = [(f, num(r[f"F{f}_us"])) for f in FLOWS if num(r[f"F{f}_us"]) is not None]
        if num(r.get("chain_us")) is not None:
            chain[w] = num(r["chain_us"])
    return series, chain


def plot_dtd(path, ref_path, out):
    cols = ["workers"] + [f"F{f}_us" for f in FLOWS]
    rows, comments = read_csv(path, cols)
    series, chain = dtd_series(rows)
    ref = {}
    if ref_path:
        ref, _ = dtd_series(read_csv(ref_path, cols)[0])
    fig, axes = plt.subplots(1, 2 if ref else 1, figsize=(11 if ref else 5.8, 4.6),
                             squeeze=False)
    colors = {w: c for w, c in zip(sorted(series), ["tab:blue", "tab:orange", "tab:green",
                                                    "tab:red"])}

    def draw(ax, with_ref):
        for w, pts in sorted(series.items()):
            ax.plot([f for f, _ in pts], [u for _, u in pts], marker="o", color=colors.get(w),
                    label=f"Rill, {w} worker{'s' if w > 1 else ''}")
        if with_ref:
            for w, pts in sorted(ref.items()):
                ax.plot([f for f, _ in pts], [u for _, u in pts], marker="s", mfc="none", ls="--",
                        color=colors.get(w, "0.4"),
                        label=f"PaRSEC DTD, {w} worker{'s' if w > 1 else ''}")
        ax.set_xticks(FLOWS)
        ax.set_xlabel("flows per task (F: INOUT tiles)")
        ax.set_ylabel("time per task (us)")
        ax.grid(True, which="major", alpha=0.3)

    if ref:
        ax = axes[0][0]
        draw(ax, True)
        ax.set_yscale("log")
        ax.set_title("Rill vs PaRSEC DTD (log scale)")
        ax.legend(fontsize=8)
    ax = axes[0][-1]
    draw(ax, False)
    ax.set_ylim(bottom=0)
    ax.set_title("Rill (linear scale)")
    if chain:
        text = "chain (every task INOUT on one tile): " + ", ".join(
            f"{u:g} us ({w} worker{'s' if w > 1 else ''})" for w, u in sorted(chain.items()))
        ax.text(0.03, 0.97, "\n".join(textwrap.wrap(text, 45)), transform=ax.transAxes,
                fontsize=8, va="top")
    ax.legend(fontsize=8, loc="lower right")
    fig.suptitle("DTD overhead (bench_dtd): independent tasks with F distinct INOUT tiles each, "
                 "inserted and run to completion", fontsize=11)
    footnote(fig, comments)
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    save(fig, out)


# ---------------------------------------------------------------- comm


def plot_comm(path, out, short_limit=8192):
    rows, comments = read_csv(
        path, ["bytes", "rill_us_per_hop", "rill_GBps", "mpi_us_per_msg", "mpi_GBps"]
    )
    fig, (lat, bw) = plt.subplots(1, 2, figsize=(11, 4.6))

    def series(col):
        pts = sorted((int(r["bytes"]), num(r[col])) for r in rows)
        return [b for b, v in pts if v is not None], [v for b, v in pts if v is not None]

    for ax, (rill_col, mpi_col, ylabel, title) in (
        (lat, ("rill_us_per_hop", "mpi_us_per_msg", "one-way time (us)",
               "latency: Rill hop vs MPI message")),
        (bw, ("rill_GBps", "mpi_GBps", "GB/s", "bandwidth")),
    ):
        x, y = series(rill_col)
        ax.plot(x, y, marker="o", color="tab:blue", label="Rill: task -> remote task (hop)")
        x, y = series(mpi_col)
        ax.plot(x, y, marker="s", mfc="none", ls="--", color="black",
                label="MPI_Send/MPI_Recv ping-pong")
        ax.set_xscale("log", base=2)
        if ax is lat:
            ax.set_yscale("log")
        else:
            ax.set_ylim(bottom=0)
        ax.xaxis.set_major_formatter(FuncFormatter(size_label))
        sizes = sorted({int(r["bytes"]) for r in rows})
        ax.set_xticks(sizes)
        ax.tick_params(axis="x", labelrotation=30, labelsize=8)
        ax.axvline(short_limit, color="0.5", ls=":", lw=1)
        ax.text(short_limit * 1.15, 0.97,
                f"comm_short_limit ({size_label(short_limit)}):\nabove, a rendezvous",
                transform=ax.get_xaxis_transform(), fontsize=7, color="0.35", va="top")
        ax.set_xlabel("tile size")
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        ax.grid(True, which="major", alpha=0.3)
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(0.0, 0.85))
    fig.suptitle("Remote dependencies between 2 ranks (1 core each)", fontsize=11)
    footnote(fig, comments)
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    save(fig, out)


# ---------------------------------------------------------------- command line


def main(argv):
    p = argparse.ArgumentParser(
        prog="bench/plot.py",
        description="Plot the benchmarks' CSV tables as PNG figures (default: 'all').")
    sub = p.add_subparsers(dest="kind")
    a = sub.add_parser("all", help="bench/results/{dla,dtd,comm}.csv -> docs/figures/*.png")
    a.add_argument("--results", default=os.path.join(HERE, "results"),
                   help="folder of dla.csv, dtd.csv, dtd_parsec.csv, comm.csv")
    a.add_argument("--out", default=os.path.join(TOP, "docs", "figures"), help="output folder")
    for kind, helptext in (("dla", "bench_dla.sh's table: GFLOP/s against N"),
                           ("dtd", "bench_dtd's table: time per task against flows"),
                           ("comm", "bench_comm's table: hop time and bandwidth against size")):
        s = sub.add_parser(kind, help=helptext)
        s.add_argument("csv")
        s.add_argument("-o", "--out", help="output PNG (default: the CSV's name with .png)")
        if kind == "comm":
            s.add_argument("--short-limit", type=int, default=8192,
                           help="comm_short_limit of the run, in bytes (default 8192)")
        if kind == "dtd":
            s.add_argument("--ref", help="PaRSEC's figures in the same columns "
                           "(e.g. bench/results/dtd_parsec.csv)")
    args = p.parse_args(argv)
    try:
        if args.kind in (None, "all"):
            results = getattr(args, "results", os.path.join(HERE, "results"))
            out = getattr(args, "out", os.path.join(TOP, "docs", "figures"))
            plot_dla(os.path.join(results, "dla.csv"), os.path.join(out, "dla.png"))
            parsec = os.path.join(results, "dtd_parsec.csv")
            plot_dtd(os.path.join(results, "dtd.csv"), parsec if os.path.exists(parsec) else None,
                     os.path.join(out, "dtd.png"))
            plot_comm(os.path.join(results, "comm.csv"), os.path.join(out, "comm.png"))
            return 0
        out = args.out or os.path.splitext(args.csv)[0] + ".png"
        if args.kind == "dla":
            plot_dla(args.csv, out)
        elif args.kind == "dtd":
            plot_dtd(args.csv, args.ref, out)
        else:
            plot_comm(args.csv, out, args.short_limit)
    except CsvError as e:
        print(f"plot.py: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
