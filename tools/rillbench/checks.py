"""Correctness runs on a GPU machine, within a device call: `check` (the GPU tests and the DLA
testers with checks on ragged sizes) and `suite` (the whole CTest suite in parts, or one test
repeated several copies at once). They record no rows: they pass or fail."""
import os
import shutil
import subprocess
import time

from .core import BadArgument, Bench, BenchError

# every process that starts Rill opens the GPUs it finds: a small share of their memory each
# (3%: 1% is too little for the cuBLAS workspaces of the exec streams) and 2 cores, as on CI,
# so that tests at once do not crowd the cores with the threads that poll while GPUs are in use
SHARED_GPU = {"RILL_MCA_device_cuda_memory_use": "3", "RILL_MCA_runtime_num_cores": "2"}
WATCHDOG = {"RILL_MCA_runtime_watchdog_s": "60", "RILL_MCA_runtime_watchdog_action": "abort"}


def add_check(p):
    p.add_argument("--ptg", action="store_true", help="only the PTG testers")
    p.add_argument("--tests-s", type=int, default=300,
                   help="seconds for ctest -L gpu (300; 0 skips the tests)")


def testers(gpus, ptg_only):
    """(name, processes, tester and options) of the checked runs, ragged sizes."""
    one = [("dpotrf", "-N 3001 -t 512"), ("dpotrf", "-N 2500 -t 1000 --nruns 2"),
           ("dgemm", "-M 2999 -N 3001 -K 1501 -t 512"), ("dgemm", "-N 3001 -t 700 --transA T"),
           ("dposv", "-N 3001 -t 512 --nrhs 7"),
           ("dpotrf", "-N 8192 -t 512 --mca device_cuda_memory_size 1200M")]
    ptg = [("dpotrf", "-N 3001 -t 512 --dsl ptg"), ("dpotrf", "-N 8192 -t 1024 --dsl ptg"),
           ("dgemm", "-M 2999 -N 3001 -K 1501 -t 512 --dsl ptg"),
           ("dpotrf", "-N 8192 -t 1024 --dsl ptg --mca device_cuda_memory_size 600M")]
    runs = [(op, 1, o) for op, o in (ptg if ptg_only else one + ptg)]
    if gpus >= 2 and not ptg_only:  # 2 processes x 1 GPU: GPU direct, then host-staged
        for extra in ("", " --mca comm_gpu_direct off"):
            runs += [("dpotrf", 2, "-N 6001 -t 512 -g 1" + extra),
                     ("dgemm", 2, "-M 2999 -N 3001 -K 1501 -t 512 -g 1" + extra),
                     ("dposv", 2, "-N 3001 -t 512 --nrhs 7 -g 1" + extra)]
    if gpus >= 4 and not ptg_only:  # 4 processes x 1 GPU, 2 x 2 grid; one process x 4 GPUs
        for extra in ("", " --mca comm_gpu_direct off", " --mca device_cuda_remote_lanes 1"):
            runs += [("dpotrf", 4, "-N 12001 -t 1000 -P 2 -Q 2 -g 1" + extra),
                     ("dgemm", 4, "-M 6001 -N 5003 -K 4097 -t 1000 -P 2 -Q 2 -g 1" + extra),
                     ("dposv", 4, "-N 8003 -t 1000 -P 2 -Q 2 -g 1 --nrhs 9" + extra)]
        runs += [("dpotrf", 4, "-N 12001 -t 1000 -g 1"),
                 ("dpotrf", 4, "-N 12001 -t 1000 -P 2 -Q 2 -g 1 --dist cyclic"),
                 ("dpotrf", 1, "-N 12001 -t 1000 -g 4"),
                 ("dgemm", 1, "-M 6001 -N 5003 -K 4097 -t 1000 -g 4")]
    return runs


def run_check(bench, a):
    """The DLA testers with -x, then ctest -L gpu within --tests-s; exit 1 on any failure."""
    bench.build()
    fails, skipped = 0, 0
    for op, np, opts in testers(bench.gpus, a.ptg):
        if not bench.fits(120):
            skipped += 1
            continue
        cmd = [bench.exe(f"apps/dla/testing_{op}")] + opts.split() + ["-x"]
        if np > 1:
            cmd = bench.mpirun(np) + cmd
        r = bench.sh(f"check_{op}_np{np}", cmd, env=WATCHDOG, timeout=120)
        fails += not r.ok
        rows = [l for l in r.text.splitlines() if l.split() and l.split()[0].isdigit()]
        bench.say(f"{'ok  ' if r.ok else 'FAIL'} np {np}: testing_{op} {opts} -x"
                  + (f"  ({rows[-1].split()[-1]})" if rows else ""))
    if a.tests_s > 0 and not a.ptg:
        fails += not ctest(bench, "gpu", GPU_TESTS, a.tests_s)
    bench.say(f"== check: {fails} failure(s)"
              + (f"; {skipped} tester run(s) not run, the budget spent" if skipped else ""))
    return 1 if fails else 0


def ctest(bench, name, selection, seconds, jobs=1):
    """ctest with a selection in the build folder, within seconds; True when all passed."""
    t0 = time.monotonic()
    r = bench.sh(f"ctest_{name}", ["ctest", "--timeout", 180, "--output-on-failure", "-j", jobs]
                 + selection, env=SHARED_GPU, timeout=seconds, cwd=bench.build_dir)
    summary = [l for l in r.text.splitlines()
               if "tests passed" in l or "***" in l or "Failed" in l]
    bench.say(f"== ctest {name}: {time.monotonic() - t0:.0f} s"
              + (" (cut off: the time given ran out)" if r.timed_out else ""))
    for line in summary[-20:]:
        bench.say("  " + line.strip())
    return r.ok


def add_suite(p):
    p.add_argument("part", choices=("gpu", "gpu1", "gpu2", "rest1", "rest2", "rest3", "rest4",
                                    "all", "repeat"),
                   help="gpu: the tests labelled gpu but the GPU allocation sweep (its own: "
                   "suite repeat test_alloc_sweep_gpu), gpu1 and gpu2 their halves (a device "
                   "call each on 4 GPUs); rest1..rest4: the others in quarters by number; "
                   "repeat: one test, several copies at once")
    p.add_argument("test", nargs="?", help="repeat: the test's exact name")
    p.add_argument("--copies", type=int, default=3, help="repeat: copies at once (3)")
    p.add_argument("--times", type=int, default=6, help="repeat: rounds of copies (6)")
    p.add_argument("-j", type=int, default=3, help="tests at once (3; the GPU parts: 2)")


GPU_TESTS = ["-L", "gpu", "-E", "^test_alloc_sweep_gpu$"]


def count_tests(bench, selection):
    listing = subprocess.run(["ctest", "-N"] + selection, cwd=bench.build_dir,
                             capture_output=True, text=True).stdout
    return sum(1 for l in listing.splitlines() if "Test" in l and "#" in l)


def parts(n, k, wanted, name, everything):
    """(part name, -I lo,hi) of the parts of n tests cut in k that were asked for."""
    for q in range(1, k + 1):
        lo, hi = (q - 1) * n // k + 1, q * n // k
        if hi >= lo and wanted in (f"{name}{q}", name, everything):
            yield f"{name}{q}", ["-I", f"{lo},{hi}"]


def run_suite_part(bench, a):
    """The CTest suite in parts that each fit a device call, or one test repeated. -I numbers
    count within the selection (ctest -N with it), so the parts cover it once."""
    bench.build()
    if a.part == "repeat":
        return repeat(bench, a)
    ok = True
    for part, cut in parts(count_tests(bench, GPU_TESTS), 2, a.part, "gpu", "all"):
        ok &= ctest(bench, part, GPU_TESTS + cut, bench.left(), jobs=min(a.j, 2))
    for part, cut in parts(count_tests(bench, ["-LE", "gpu"]), 4, a.part, "rest", "all"):
        ok &= ctest(bench, part, ["-LE", "gpu"] + cut, bench.left(), jobs=a.j)
    return 0 if ok else 1


def repeat(bench, a):
    """--copies copies of one test at a time, --times rounds, each copy bounded to 60 s with
    the watchdog's report after 8 s; the stacks (gdb) of copies still running at 40 s; the
    logs of failed copies stay under --out."""
    if not a.test:
        raise BadArgument("suite repeat needs the test's name: suite repeat TEST")
    out = subprocess.run(["ctest", "-R", f"^{a.test}$", "-N", "-V"], cwd=bench.build_dir,
                         capture_output=True, text=True).stdout
    cmd = next((l.split("Test command: ", 1)[1] for l in out.splitlines()
                if "Test command: " in l), None)
    if not cmd:
        raise BadArgument(f"no test named {a.test} in {bench.build_dir} (ctest -N lists them)")
    argv = [w.strip('"') for w in cmd.split()]
    env = dict(os.environ, RILL_MCA_runtime_watchdog_s="8", **SHARED_GPU)
    passed = failed = 0
    for k in range(a.times):
        if not bench.fits(60):
            bench.say(f"repeat: the budget spent after {k} rounds")
            break
        procs = []
        for j in range(a.copies):
            log = os.path.join(bench.out, f"repeat_{k}_{j}.log")
            f = open(log, "w", encoding="utf-8")
            procs.append((subprocess.Popen(["timeout", "-k", "10", "60"] + argv, stdout=f,
                                           stderr=subprocess.STDOUT, env=env, cwd=bench.build_dir),
                          f, log))
        deadline = time.monotonic() + 40
        while time.monotonic() < deadline and any(p.poll() is None for p, _, _ in procs):
            time.sleep(0.5)
        stacks(bench, [p for p, _, _ in procs if p.poll() is None], k)
        for p, f, log in procs:
            try:
                p.wait(timeout=90)  # (timeout(1) kills it at 70 s)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
            f.close()
            if p.returncode == 0:
                passed += 1
                os.remove(log)
            else:
                failed += 1
    bench.say(f"== repeat {a.test}: {passed} passed, {failed} failed "
              f"({a.copies} at once); failed copies' logs: {bench.out}/repeat_*.log")
    return 1 if failed else 0


def descendants(pid):
    """The processes under pid (mpirun's ranks, timeout's child), from /proc."""
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue  # (gone meanwhile)
        children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def stacks(bench, procs, k):
    """Every thread's stack (gdb, else cuda-gdb) of the copies still running: the test's own
    processes (an MPI test's ranks), not timeout(1) or mpirun."""
    gdb = shutil.which("gdb") or shutil.which("cuda-gdb")
    if not procs or not gdb:
        return
    launchers = ("timeout", "mpirun", "mpiexec", "orterun", "prterun", "orted", "prted")
    with open(os.path.join(bench.out, f"repeat_{k}_stacks.txt"), "w", encoding="utf-8") as f:
        for p in procs:
            for pid in descendants(p.pid):
                try:
                    with open(f"/proc/{pid}/comm", encoding="utf-8") as c:
                        if c.read().strip() in launchers:
                            continue
                    r = subprocess.run([gdb, "-p", str(pid), "-batch", "-ex",
                                        "thread apply all bt"], capture_output=True, text=True,
                                       timeout=30)
                except (OSError, subprocess.TimeoutExpired) as err:
                    f.write(f"==== pid {pid}: no stack ({err})\n")
                    continue
                f.write(f"==== pid {pid}\n")
                f.writelines(l + "\n" for l in r.stdout.splitlines()
                             if l.startswith(("Thread", "#")))


CHECKS = {
    "check": (add_check, run_check, "correctness on a GPU machine: testers -x, GPU tests"),
    "suite": (add_suite, run_suite_part, "the CTest suite in parts, or one test repeated"),
}


def run_check_cmd(args, name):
    bench = Bench(args, name)
    return CHECKS[name][1](bench, args)
