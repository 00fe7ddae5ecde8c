#!/usr/bin/env python3
"""A run's runtime report (--mca runtime_report FILE) against docs/runtime_report.schema.json.

    check_runtime_report.py SCHEMA RANKS [LAUNCHER ...] -- PROGRAM [ARGS ...]

Runs the program (under the launcher when one is given, as `mpiexec ... -np RANKS`) with one
parameter from each source: a parameter file (RILL_MCA_param_files), the environment
(RILL_MCA_*), the command line (--mca) and the report's own; then validates every rank's
report against the schema (jsonschema) and checks what it says: the rank and ranks, the
command line, each parameter's value, source and where, the statistics. Also checks
params_verbose's lines on stderr. Exit 0 when all hold, 1 otherwise, 77 (skip) without the
jsonschema module.
"""
import json
import os
import subprocess
import sys
import tempfile

try:
    import jsonschema
except ImportError:
    print("check_runtime_report: skipped: no jsonschema module for this python3 "
          "(python3-jsonschema)")
    sys.exit(77)

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print(f"FAIL: {what}")


def main(argv):
    if len(argv) < 4 or "--" not in argv:
        print(__doc__, file=sys.stderr)
        return 2
    schema = json.load(open(argv[1]))
    ranks = int(argv[2])
    sep = argv.index("--")
    launcher, command = argv[3:sep], argv[sep + 1:]
    with tempfile.TemporaryDirectory(prefix="rill_report_") as tmp:
        conf = os.path.join(tmp, "tuned.conf")
        with open(conf, "w") as f:
            f.write("# a parameter file\nruntime_idle_spin_us = 77\n")
        report = os.path.join(tmp, "run.json")
        env = dict(os.environ, RILL_MCA_param_files=conf, RILL_MCA_runtime_watchdog_s="123")
        full = launcher + command + ["--mca", "runtime_report", report,
                                     "--mca", "params_verbose", "1"]
        r = subprocess.run(full, env=env, capture_output=True, text=True, timeout=240)
        if r.returncode != 0:
            print(r.stdout, r.stderr, sep="\n")
            check(False, f"{' '.join(full)} exited {r.returncode}")
            return 1
        # params_verbose 1: every parameter not at its default, with its source, per rank
        for rank in range(ranks):
            check(f"[rill {rank} params] info:   runtime_idle_spin_us = 77 (file {conf}:2)"
                  in r.stderr, f"rank {rank}: params_verbose names the file's value and line")
            check(f"[rill {rank} params] info:   runtime_watchdog_s = 123 "
                  "(env RILL_MCA_runtime_watchdog_s)" in r.stderr,
                  f"rank {rank}: params_verbose names the environment's value")
        check(" comm_aggregate = " not in r.stderr,
              "params_verbose 1 leaves out the parameters at their default")
        validator = jsonschema.Draft202012Validator(schema)
        for rank in range(ranks):
            path = report if rank == 0 else f"{report}.{rank}"
            if not os.path.exists(path):
                check(False, f"rank {rank} wrote no report {path}")
                continue
            doc = json.load(open(path))
            for err in validator.iter_errors(doc):
                check(False, f"{path}: {'/'.join(map(str, err.absolute_path))}: {err.message}")
            check(doc.get("rank") == rank and doc.get("ranks") == ranks,
                  f"{path}: rank {doc.get('rank')} of {doc.get('ranks')}, not {rank} of {ranks}")
            check(doc.get("command") == full[len(launcher):],
                  f"{path}: the command line is {doc.get('command')}, not as it was started")
            params = {p["name"]: p for p in doc.get("parameters", [])}
            want = {
                "runtime_idle_spin_us": ("77", "file", f"{conf}:2"),
                "runtime_watchdog_s": ("123", "env", "RILL_MCA_runtime_watchdog_s"),
                "runtime_report": (report, "cmdline", "--mca"),
                "comm_aggregate": ("true", "default", None),
            }
            for name, (value, source, where) in want.items():
                p = params.get(name)
                got = p and (p["value"], p["source"], p["where"])
                check(got == (value, source, where),
                      f"{path}: {name} is {got}, not {(value, source, where)}")
            stats = doc.get("statistics") or {}
            tasks = sum(w.get("tasks", 0) for w in stats.get("workers", []))
            check(tasks > 0, f"{path}: the statistics count {tasks} tasks run")
            check(len(stats.get("peers", [])) == ranks - 1,
                  f"{path}: the statistics list {len(stats.get('peers', []))} peers")
    if failures:
        print(f"check_runtime_report: {len(failures)} failure(s)")
        return 1
    print(f"check_runtime_report: {ranks} report(s) valid and as the run was set")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
