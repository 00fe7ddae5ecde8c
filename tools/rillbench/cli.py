"""rill_bench's command line: global options, then a subcommand (a suite, check, suite,
balance or report)."""
import argparse
import os
import sys
import tarfile

from . import balance, checks, suites
from .core import PROG, REPO, BadArgument, BenchError, Bench, Clocks, LacksHardware

USAGE_END = """\
Results: every suite appends its rows to bench/results/<suite>.csv (bench/README.md says
what each column holds); `rill_bench report` regenerates bench/results/README.md and the
figures docs/figures/bench_*.png from them, `rill_bench report --check` says whether the
committed tables are current. Exit: 0 done, 1 a failed build, run or check, 2 a bad argument,
77 this machine lacks what the suite needs (GPUs)."""


def positive(text):
    try:
        v = int(text)
    except ValueError:
        v = 0
    if v < 1:
        raise argparse.ArgumentTypeError(f"a positive integer, got '{text}'")
    return v


def parser():
    p = argparse.ArgumentParser(
        prog=PROG, description="Rill's benchmarks and GPU checks, one driver.",
        epilog=USAGE_END, formatter_class=argparse.RawDescriptionHelpFormatter)
    g = p.add_argument_group("global options (before the subcommand)")
    g.add_argument("--build", metavar="DIR", help="build folder (default: build-gpu on a GPU "
                   "machine, else build/release)")
    g.add_argument("--no-build", action="store_true", help="use the build folder as it is")
    g.add_argument("--cmake", action="append", default=[], metavar="ARG",
                   help="one more cmake argument, written --cmake=-DNAME=VALUE (repeatable; reconfigures)")
    g.add_argument("--ucx-wheel", metavar="WHEEL", help="PyPI's libucx-cu13 wheel for a "
                   "machine with no package registry (default: $RILL_UCX_WHEEL)")
    g.add_argument("--out", metavar="DIR", default=os.environ.get("OUT") or "/tmp/rill-bench",
                   help="logs (default: $OUT, else /tmp/rill-bench)")
    g.add_argument("--budget", type=positive, default=540, metavar="S",
                   help="seconds for the whole call (540: a device call of 10 minutes with its "
                   "start); a case that would not fit in what is left is skipped, and said so")
    g.add_argument("--rounds", type=positive, default=2, metavar="K",
                   help="every case once per round, the cases interleaved (2)")
    g.add_argument("--results", metavar="DIR", default=os.path.join(REPO, "bench", "results"),
                   help="where the rows go (default bench/results)")
    g.add_argument("--no-record", action="store_true", help="append no rows")
    g.add_argument("--pack", action="store_true",
                   help="pack the call's logs into OUT/<subcommand>-logs.tgz (a device call "
                   "brings back few files)")
    g.add_argument("--clocks", action="store_true",
                   help="sample GPU 0's SM clock, power and throttle reasons while it runs")
    sub = p.add_subparsers(dest="cmd", metavar="SUBCOMMAND", required=True)
    for name, (add, _, helptext) in list(suites.SUITES.items()) + list(checks.CHECKS.items()):
        sp = sub.add_parser(name, help=helptext, description=helptext)
        if add:
            add(sp)
    sp = sub.add_parser("balance", help="tile distributions' balance over a grid (a count)")
    sp.add_argument("rest", nargs=argparse.REMAINDER, help="[NT] [PxQ ...]")
    sp = sub.add_parser("report", help="the tables and figures from bench/results/*.csv")
    sp.add_argument("rest", nargs=argparse.REMAINDER, help="[--check] ... (report --help)")
    return p


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    # UCX 1.22's memory hooks wait 0.4 s at each start of a program linked with it
    # (README, "Between nodes"); the programs run here start single-threaded
    os.environ.setdefault("UCX_MEM_BISTRO_GRACE_DURATION", "0")
    # report and balance take their own arguments (and need no machine or build)
    for name in ("report", "balance"):
        if argv[:1] == [name]:
            if name == "balance":
                return balance.main(argv[1:])
            from . import report
            return report.main(argv[1:])
    args, unknown = parser().parse_known_args(argv)
    if args.cmd == "balance":
        return balance.main(args.rest + unknown)
    if args.cmd == "report":
        from . import report
        return report.main(args.rest + unknown)
    if unknown:
        parser().error(f"unrecognized arguments: {' '.join(unknown)}")
    try:
        return run(args)
    except BenchError as err:
        print(f"{PROG}: error: {err}", file=sys.stderr)
        if isinstance(err, BadArgument):
            return 2
        return 77 if isinstance(err, LacksHardware) else 1
    finally:
        if args.pack:
            pack(args)


def run(args):
    if args.cmd in checks.CHECKS:
        return checks.run_check_cmd(args, args.cmd)
    if args.clocks:
        with Clocks(Bench(args, args.cmd)):
            suites.run_suite(args, args.cmd)
    else:
        suites.run_suite(args, args.cmd)
    return 0


def pack(args):
    """The logs under --out into one <subcommand>-logs.tgz there, the files themselves gone."""
    logs = [f for f in os.listdir(args.out) if f.endswith((".log", ".server", ".json", ".csv"))]
    if not logs:
        return
    path = os.path.join(args.out, f"{args.cmd}-logs.tgz")
    with tarfile.open(path, "w:gz") as tar:
        for name in sorted(logs):
            tar.add(os.path.join(args.out, name), arcname=name)
    for name in logs:
        os.remove(os.path.join(args.out, name))
    print(f"logs: {path}")
