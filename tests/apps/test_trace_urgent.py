#!/usr/bin/env python3
"""The tasks a Cholesky marks urgent (RILL_DTD_URGENT in DTD, URGENT in PTG), as its trace
shows them (" urgent" at the end of a task slice's arguments): every POTRF, the first
TRSM below each diagonal tile and nothing else, on the CPUs (the mark only chooses a GPU
stream). The tester runs with -t 100 on N = 700: 7 tile columns, 21 TRSM, 6 of them first.

usage: test_trace_urgent.py TESTER [args...]
"""
import collections
import json
import os
import subprocess
import sys
import tempfile


def main():
    tester = sys.argv[1:]
    with tempfile.TemporaryDirectory() as tmp:
        prefix = os.path.join(tmp, "trace")
        cmd = tester + ["-N", "700", "-t", "100", "-g", "0", "-x", "--", "profile_trace", prefix]
        run = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             timeout=240)
        print(run.stdout)
        if run.returncode != 0:
            sys.exit(f"FAIL: {' '.join(cmd)} exited {run.returncode}")
        with open(prefix + ".0.json") as f:
            events = json.load(f)["traceEvents"]
    count, urgent = collections.Counter(), collections.Counter()
    for e in events:
        if e.get("ph") == "X" and e.get("cat") == "task":
            name = e["name"].lower()  # DTD's dpotrf, PTG's POTRF: potrf
            name = name[1:] if name[1:] in ("potrf", "trsm", "syrk", "gemm") else name
            count[name] += 1
            args = str(e.get("args", {}).get("args") or "")
            urgent[name] += args == "urgent" or args.endswith(" urgent")
    print("tasks:", dict(count), "urgent:", dict(urgent))
    want = {"potrf": 7, "trsm": 6}
    got = {name: n for name, n in urgent.items() if n}
    if count["potrf"] != 7 or count["trsm"] != 21 or got != want:
        sys.exit(f"FAIL: urgent tasks {got}, expected {want} (7 potrf, 21 trsm in all; got "
                 f"{count['potrf']} and {count['trsm']})")
    print("PASS")


if __name__ == "__main__":
    main()
