"""What every suite of rill_bench shares: the machine, the build, bounded commands, rounds of
cases interleaved, best and median, and the rows appended to bench/results/<suite>.csv.

A suite is a list of cases. A case runs once per round (the cases interleaved, so that a
machine's drift falls on all of them alike) and returns measurements: values keyed by
(size, figure). Over the rounds each key gathers its values; a row holds their best and
median. A case may name another case of the same call as its reference: its rows then carry
the reference's best for the same size and figure.
"""
import csv
import datetime
import os
import shlex
import math
import shutil
import signal
import statistics
import subprocess
import threading
import time
import traceback
import zipfile

from .parse import number

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROG = "rill_bench"

# the columns of bench/results/<suite>.csv, in order (bench/README.md says what each holds)
COLUMNS = ["date", "commit", "gpu", "gpus", "cpu", "suite", "config", "size", "figure", "unit",
           "better", "best", "median", "runs", "reference", "ref_best"]


class BenchError(Exception):
    """A run that cannot go on: the message names the problem (exit 1)."""


class BadArgument(BenchError):
    """An option's value that is not allowed (exit 2)."""


class LacksHardware(BenchError):
    """The suite needs what this machine lacks, GPUs (exit 77)."""


def _capture(argv, cwd=REPO):
    """stdout of a short query command, or "" when it is missing or fails."""
    try:
        r = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return r.stdout.strip() if r.returncode == 0 else ""


def machine():
    """(GPU model, GPU count, CPU description) of this machine."""
    names = [n for n in _capture(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"])
             .splitlines() if n.strip()]
    model = ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    cpu = f"{model or 'unknown CPU'}, {os.cpu_count()} cores"
    return (names[0].strip() if names else ""), len(names), cpu


def commit():
    """The short hash of the tree measured, '+dirty' when tracked files changed;
    RILL_BENCH_COMMIT when set (a copy of the tree whose .git is not its own: the GPU
    machines' copies kept the session's first HEAD)."""
    if os.environ.get("RILL_BENCH_COMMIT"):
        return os.environ["RILL_BENCH_COMMIT"]
    head = _capture(["git", "rev-parse", "--short", "HEAD"]) or "unknown"
    dirty = _capture(["git", "status", "--porcelain", "--untracked-files=no"])
    return head + ("+dirty" if dirty else "")


def stop_group(p, grace=10):
    """End a command started in a session of its own and everything it started (mpirun's
    ranks, ctest's tests): SIGTERM to the group, as timeout(1) sends (mpirun passes it on),
    then SIGKILL after grace seconds."""
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5)):
        try:
            os.killpg(p.pid, sig)
        except ProcessLookupError:
            return
        try:
            p.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            pass


def run_bounded(argv, out, env, limit, cwd):
    """(exit status, timed out) of a command whose output goes to the file out; past limit
    seconds its whole process group is stopped (exit 124)."""
    try:
        p = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=cwd,
                             start_new_session=True)
    except OSError as err:
        out.write(f"{PROG}: cannot run {argv[0]}: {err}\n")
        return 127, False
    try:
        return p.wait(timeout=limit), False
    except subprocess.TimeoutExpired:
        stop_group(p)
        return 124, True


class Run:
    """One finished command: its exit status, its output (stdout and stderr) and its log."""

    def __init__(self, rc, text, log, timed_out):
        self.rc, self.text, self.log, self.timed_out = rc, text, log, timed_out

    @property
    def ok(self):
        return self.rc == 0

    def why(self):
        """A line saying how it ended, with the last lines of its output."""
        tail = " | ".join(self.text.strip().splitlines()[-3:])
        how = "timed out" if self.timed_out else f"exit {self.rc}"
        return f"{how} (log {self.log}): {tail}"


class Case:
    """One configuration of a suite, run once per round.

    run(bench) returns a dict {(size, figure): value or [values]}; unit and better are the
    case's (or per figure through units = {figure: (unit, better)}). reference: the config
    of another case of the call whose rows are this case's reference. seconds: the time one
    run is expected to take, to skip the case when the budget left is shorter."""

    def __init__(self, config, run, unit="", better="higher", reference="", seconds=30,
                 units=None):
        self.config, self.run, self.reference, self.seconds = config, run, reference, seconds
        self.unit, self.better, self.units = unit, better, units or {}

    def unit_of(self, figure):
        return self.units.get(figure, (self.unit, self.better))


class Bench:
    """The context of one rill_bench call."""

    def __init__(self, args, suite):
        self.args, self.suite = args, suite
        self.start = time.monotonic()
        self.deadline = self.start + args.budget
        self.date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M")
        self.gpu, self.gpus, self.cpu = machine()
        self.commit = commit()
        self.out = os.path.abspath(args.out)
        os.makedirs(self.out, exist_ok=True)
        default = "build-gpu" if self.gpus else os.path.join("build", "release")
        self.build_dir = os.path.abspath(args.build or os.path.join(REPO, default))
        self.rows = []  # the call's rows, dicts keyed by COLUMNS
        self.round = 0
        self.skipped = []
        self._names = {}

    # -- time ------------------------------------------------------------------------------
    def left(self):
        return self.deadline - time.monotonic()

    def fits(self, seconds):
        return self.left() >= seconds

    # -- the build -------------------------------------------------------------------------
    def cmake_args(self):
        argv = ["-DCMAKE_BUILD_TYPE=Release", "-DRILL_WERROR=ON"]
        gen = os.path.join(REPO, "build", "ptg-gen")
        if os.path.exists(os.path.join(gen, "parser.c")) and not shutil.which("bison"):
            argv.append(f"-DRILLCC_GENERATED_DIR={gen}")  # rillcc without flex and bison
        ucx = self._ucx_dir()
        if ucx:
            argv.append(f"-Ducx_DIR={ucx}")
        return argv + list(self.args.cmake)

    def _ucx_dir(self):
        """UCX for the build: a site's own (ucx_DIR) wins, then the wheel named by --ucx-wheel
        or RILL_UCX_WHEEL (extracted next to the build), then bootstrap.sh's virtual
        environment; none: CMake looks for one itself."""
        if os.environ.get("ucx_DIR"):
            return os.environ["ucx_DIR"]
        wheel = self.args.ucx_wheel or os.environ.get("RILL_UCX_WHEEL")
        if wheel:
            dest = os.path.join(self.build_dir, "ucx-wheel")
            cmake_dir = os.path.join(dest, "libucx", "lib", "cmake", "ucx")
            if not os.path.isdir(cmake_dir):
                try:
                    with zipfile.ZipFile(wheel) as z:
                        z.extractall(dest)
                except (OSError, zipfile.BadZipFile) as err:
                    raise BenchError(f"cannot extract the UCX wheel {wheel}: {err}") from err
                bindir = os.path.join(dest, "libucx", "bin")
                for name in os.listdir(bindir) if os.path.isdir(bindir) else []:
                    os.chmod(os.path.join(bindir, name), 0o755)
            return cmake_dir
        venv = os.path.join(REPO, "build", "ucx-venv", "lib")
        if os.path.isdir(venv):
            for py in sorted(os.listdir(venv)):
                d = os.path.join(venv, py, "site-packages", "libucx", "lib", "cmake", "ucx")
                if os.path.isdir(d):
                    return d
        return ""

    def build(self, targets=()):
        """Configure the build folder once, then build the targets (all when none)."""
        if self.args.no_build:
            if not os.path.isdir(self.build_dir):
                raise BenchError(f"--no-build: the build folder {self.build_dir} does not exist")
            return
        t0 = time.monotonic()
        if not os.path.exists(os.path.join(self.build_dir, "CMakeCache.txt")) or self.args.cmake:
            r = self.sh("configure", ["cmake", "-S", REPO, "-B", self.build_dir]
                        + self.cmake_args(), timeout=300, quiet=True)
            if not r.ok:
                raise BenchError(f"configure failed: {r.why()}")
        argv = ["cmake", "--build", self.build_dir, "-j", str(os.cpu_count() or 2)]
        for t in targets:
            argv += ["--target", t]
        r = self.sh("build", argv, timeout=900, quiet=True)
        if not r.ok:
            errors = [l for l in r.text.splitlines() if "error" in l.lower()][:10]
            raise BenchError("build failed:\n  " + "\n  ".join(errors or [r.why()]))
        self.say(f"build: {time.monotonic() - t0:.0f} s ({self.build_dir})")

    def exe(self, rel):
        """The path of a program of the build folder (bench/bench_dtd, apps/dla/testing_dgemm)."""
        path = os.path.join(self.build_dir, rel)
        if not os.access(path, os.X_OK):
            raise BenchError(f"{path} is not built (build it, or drop --no-build)")
        return path

    # -- commands --------------------------------------------------------------------------
    def mpirun(self, np, *extra):
        """mpirun's prefix for np processes (not bound to cores: the GPU runs' threads poll)."""
        argv = ["mpirun", "--oversubscribe", "--bind-to", "none", "-np", str(np)]
        if os.geteuid() == 0:
            argv.append("--allow-run-as-root")
        return argv + list(extra)

    def say(self, line):
        print(line, flush=True)

    def log_name(self, name):
        """A log path under --out, unique within the call."""
        k = self._names.get(name, 0)
        self._names[name] = k + 1
        safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in name)
        return os.path.join(self.out, f"{safe}{'' if k == 0 else f'.{k}'}.log")

    def sh(self, name, argv, env=None, timeout=300, quiet=False, cwd=None):
        """Run a command, bounded by its timeout and by the budget left (the build too, less a
        margin, so that a device call ends with its logs); its output goes to a log under --out
        and comes back in the Run. env: variables set on top of this process's environment
        (the log names only those)."""
        log = self.log_name(name)
        limit = max(1, min(timeout, self.left() - (30 if name in ("configure", "build") else 0)))
        full_env = dict(os.environ)
        full_env.update({k: str(v) for k, v in (env or {}).items()})
        with open(log, "w", encoding="utf-8") as f:
            f.write(f"# {shlex.join(str(a) for a in argv)}\n")
            if env:
                f.write("# env: " + " ".join(f"{k}={v}" for k, v in env.items()) + "\n")
            f.flush()
            rc, timed_out = run_bounded([str(a) for a in argv], f, full_env, limit, cwd or REPO)
        with open(log, encoding="utf-8", errors="replace") as f:
            text = f.read()
        r = Run(rc, text, log, timed_out)
        if not r.ok and not quiet:
            self.say(f"  {name}: {r.why()}")
        return r

    # -- rounds ----------------------------------------------------------------------------
    def rounds(self, cases, rounds=None):
        """Run every case once per round, interleaved; gather the rows of the call (those of
        the cases that ran, even when one failed). self.round: the round running, for the
        cases that share one program's output within a round."""
        rounds = rounds or self.args.rounds
        values = {}  # (config, size, figure) -> [values]
        order = []
        try:
            for r in range(rounds):
                self.round = r
                for case in cases:
                    if not self.fits(case.seconds):
                        self.skipped.append(f"{case.config} (round {r + 1})")
                        continue
                    for (size, figure), v in self._run_case(case).items():
                        key = (case.config, size, figure)
                        if key not in values:
                            values[key] = []
                            order.append((case, size, figure))
                        values[key].extend(v if isinstance(v, list) else [v])
        finally:
            self.gather(order, values)

    def _run_case(self, case):
        """A case's measurements; a failure is said (with its traceback when unforeseen) and
        gives none, so that the other cases and their rows go on."""
        try:
            return case.run(self) or {}
        except BenchError as err:
            self.say(f"  {case.config}: {err}")
        except Exception:  # noqa: BLE001: one broken case must not lose the call's rows
            self.say(f"  {case.config}: failed:\n{traceback.format_exc()}")
        return {}

    def gather(self, order, values):
        """Rows from values {(config, size, figure): [values]}, in order [(case, size,
        figure)]: best, median, runs; then every row's reference's best."""
        best = {}
        for case, size, figure in order:
            vals = [float(v) for v in values[(case.config, size, figure)]]
            vals = [v for v in vals if math.isfinite(v)]  # (a program's nan or inf: no figure)
            if not vals:
                continue
            unit, better = case.unit_of(figure)
            b = max(vals) if better == "higher" else min(vals)
            best[(case.config, size, figure)] = b
            self.rows.append({"date": self.date, "commit": self.commit, "gpu": self.gpu,
                              "gpus": self.gpus, "cpu": self.cpu, "suite": self.suite,
                              "config": case.config, "size": size, "figure": figure,
                              "unit": unit, "better": better, "best": fmt(b),
                              "median": fmt(statistics.median(vals)), "runs": len(vals),
                              "reference": case.reference, "ref_best": ""})
        for row in self.rows:
            ref = best.get((row["reference"], row["size"], row["figure"]))
            if row["reference"] and ref is not None:
                row["ref_best"] = fmt(ref)
            elif row["reference"]:
                row["reference"] = ""  # the reference did not run (skipped or failed)

    # -- output ----------------------------------------------------------------------------
    def table(self):
        """The call's rows as a markdown table, the ratio to the reference last (above 1:
        Rill ahead)."""
        lines = [f"# {self.suite}: {self.date} UTC, commit {self.commit}, "
                 f"{self.gpus} x {self.gpu or 'no GPU'}, {self.cpu}",
                 "| config | size | figure | best | median | runs | reference | ref best | ratio |",
                 "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
        for row in self.rows:
            lines.append("| " + " | ".join(str(row[k]) for k in (
                "config", "size", "figure", "best", "median", "runs", "reference",
                "ref_best")) + f" | {ratio(row)} |")
        if self.skipped:
            lines.append(f"(not run, the budget spent: {', '.join(self.skipped)})")
        return "\n".join(lines)

    def record(self):
        """Append the call's rows to <results>/<suite>.csv (the header when the file is new)."""
        if self.args.no_record or not self.rows:
            return
        path = os.path.join(self.args.results, f"{self.suite}.csv")
        new = not os.path.exists(path) or os.path.getsize(path) == 0
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "a", newline="", encoding="utf-8") as f:
            w = csv.DictWriter(f, fieldnames=COLUMNS, lineterminator="\n")
            if new:
                w.writeheader()
            w.writerows(self.rows)
        self.say(f"{len(self.rows)} rows appended to {path}")


def fmt(v):
    """A figure as written to the results: 4 significant digits, no exponent below 10^9."""
    if v == 0:
        return "0"
    s = f"{v:.4g}"
    if "e" in s:
        s = f"{v:.1f}"
    return s


def ratio(row):
    """best over the reference's best, inverted when lower is better: above 1, Rill ahead."""
    try:
        b, r = float(row["best"]), float(row["ref_best"])
    except (TypeError, ValueError):
        return ""
    if b <= 0 or r <= 0:
        return ""
    return f"{(b / r) if row['better'] == 'higher' else (r / b):.2f}"


class Clocks:
    """Samples GPU 0's SM clock, power and throttle reasons every 100 ms while a suite runs
    (--clocks), to tell whether a figure was held by the GPU's power or clocks."""

    def __init__(self, bench):
        self.bench, self.samples, self.stop = bench, [], threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self):
        q = ["nvidia-smi", "-i", "0", "--query-gpu=clocks.sm,power.draw,"
             "clocks_throttle_reasons.active", "--format=csv,noheader,nounits"]
        while not self.stop.wait(0.1):
            line = _capture(q)
            if line:
                self.samples.append([x.strip() for x in line.split(",")])

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()
        nums = [(float(s[0]), float(s[1]), s[2]) for s in self.samples
                if len(s) == 3 and number(s[0]) is not None and number(s[1]) is not None]
        if not nums:
            self.bench.say("clocks: no samples (nvidia-smi missing or no GPU)")
            return
        for i, what in ((0, "SM clock MHz"), (1, "power W")):
            v = sorted(n[i] for n in nums)
            self.bench.say(f"clocks: {what}: median {v[len(v) // 2]:.0f}, min {v[0]:.0f}, "
                           f"max {v[-1]:.0f} ({len(v)} samples)")
        reasons = sorted({n[2] for n in nums})
        self.bench.say(f"clocks: throttle reasons seen: {', '.join(reasons)}")
