#!/usr/bin/env python3
"""tools/rill_tune's tests.

    test_rill_tune.py run TUNE RILL_INFO SPACE -- COMMAND ...
        a 60-second study of COMMAND (a small dpotrf): every output is there and valid, and
        best.conf loads (rill_info --parsable gives its values with the file as source)
    test_rill_tune.py hang TUNE DATA
        the grid of tune_data/hang.toml over tune_data/hang.sh: the configuration that
        hangs is killed at its time-out and the one that fails is recorded, with their
        reasons, and neither wins
Exit 0 when all hold, 1 otherwise.
"""
import csv
import os
import subprocess
import sys
import tempfile

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print(f"FAIL: {what}")


def tune(tune_py, args):
    cmd = [sys.executable, tune_py] + args
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    print(r.stdout + r.stderr)
    return r


def study_run(tune_py, rill_info, space, command):
    with tempfile.TemporaryDirectory(prefix="rill_tune_") as out:
        r = tune(tune_py, ["--space", space, "--budget", "60", "--out", out, "--repeat", "2",
                           "--column", "gflops", "--"] + command)
        check(r.returncode == 0, f"rill_tune exited {r.returncode}")
        for name in ("best.conf", "best.command", "trials.csv", "report.md", "convergence.png",
                     "importance.png", "study.db"):
            path = os.path.join(out, name)
            check(os.path.exists(path) and os.path.getsize(path) > 0, f"no {name} in {out}")
        rows = list(csv.DictReader(open(os.path.join(out, "trials.csv"))))
        done = [r for r in rows if r["state"] == "complete"]
        check(len(done) >= 2, f"{len(done)} complete trials in 60 s")
        check(all(float(r["gflops"]) > 0 for r in done), "every complete trial has its gflops")
        report = open(os.path.join(out, "report.md")).read()
        for part in ("## Best: trial", "the defaults (the command as given)",
                     "## Top configurations"):
            check(part in report, f"report.md has no {part!r}")
        # best.conf loads as it is: each of its parameters, from the file, at its line
        conf = os.path.join(out, "best.conf")
        settings = {}
        for n, line in enumerate(open(conf), 1):
            if line.strip() and not line.startswith("#"):
                name, _, value = line.partition("=")
                settings[name.strip()] = (value.strip(), n)
        check(len(settings) > 0, "best.conf sets no parameter")
        env = dict(os.environ, RILL_MCA_param_files=conf)
        info = subprocess.run([rill_info, "--parsable"] + [a for n in settings
                                                           for a in ("--param", n)],
                              env=env, capture_output=True, text=True, timeout=60)
        shown = {f[0]: f for f in (line.split("\t") for line in info.stdout.splitlines())}
        for name, (value, n) in settings.items():
            f = shown.get(name)
            check(f is not None and f[3] == "file",
                  f"rill_info gives {name} as {f and f[2:4]}, not from best.conf")
            # a size prints in bytes: compare those that are not sizes as text
            check(f is None or f[1] == "size" or f[2] == value,
                  f"rill_info gives {name} = {f and f[2]}, best.conf {value}")
        # a second call resumes the study: more trials, the first ones kept
        r2 = tune(tune_py, ["--space", space, "--budget", "10", "--out", out, "--repeat", "2",
                            "--column", "gflops", "--"] + command)
        rows2 = list(csv.DictReader(open(os.path.join(out, "trials.csv"))))
        check(r2.returncode == 0 and len(rows2) > len(rows),
              f"the resumed study has {len(rows2)} trials, the first {len(rows)}")


def hang(tune_py, data):
    with tempfile.TemporaryDirectory(prefix="rill_tune_") as out:
        r = tune(tune_py, ["--space", os.path.join(data, "hang.toml"), "--budget", "60",
                           "--timeout", "3", "--out", out, "--repeat", "1", "--sampler", "grid",
                           "--figure", r"figure: (\d+)", "--", "sh",
                           os.path.join(data, "hang.sh")])
        check(r.returncode == 0, f"rill_tune exited {r.returncode}")
        rows = {r["-x"]: r for r in csv.DictReader(open(os.path.join(out, "trials.csv")))}
        check(set(rows) == {"1", "2", "3", "4"}, f"the grid's trials are {sorted(rows)}")
        h, f = rows.get("3", {}), rows.get("4", {})
        check(h.get("state") == "fail" and "timed out after 3 s" in h.get("reason", ""),
              f"the hanging configuration: {h.get('state')}, {h.get('reason')!r}")
        check(f.get("state") == "fail" and f.get("reason", "").startswith("exit 5"),
              f"the failing configuration: {f.get('state')}, {f.get('reason')!r}")
        check("-x 2" in open(os.path.join(out, "best.command")).read(),
              "the best is -x 2 (figure 20)")
        report = open(os.path.join(out, "report.md")).read()
        check("## Failed configurations" in report and "timed out" in report,
              "report.md lists the configuration cut off")
        check("rill_tune: trial" in r.stderr and "timed out" in r.stderr,
              "rill_tune says which trial timed out")


def main(argv):
    if len(argv) >= 6 and argv[1] == "run" and "--" in argv:
        sep = argv.index("--")
        study_run(argv[2], argv[3], argv[4], argv[sep + 1:])
    elif len(argv) == 4 and argv[1] == "hang":
        hang(argv[2], argv[3])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    if failures:
        print(f"test_rill_tune: {len(failures)} failure(s)")
        return 1
    print("test_rill_tune: passed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
