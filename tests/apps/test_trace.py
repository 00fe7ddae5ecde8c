#!/usr/bin/env python3
"""A traced 2-rank distributed DTD Cholesky, checked with a real JSON parser:
every task that ran appears once on a worker track (its class counts match the run's
statistics); every remote dependency has a flow that starts on the sending rank (in its
send task) and ends on the receiving rank (in its receive), never earlier after clock
alignment; the per-rank files merge into one valid file. With --dot, the graph dumps are
checked too (one per rank, bounded, remote edges marked).

usage: test_trace.py MPIEXEC_AND_FLAGS... -- TESTER [args...]
"""
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def main():
    argv = sys.argv[1:]
    if "--" not in argv:
        fail("usage: test_trace.py MPIEXEC... -- TESTER ARGS")
    cut = argv.index("--")
    launcher, tester = argv[:cut], argv[cut + 1:]
    with tempfile.TemporaryDirectory() as tmp:
        prefix = os.path.join(tmp, "trace")
        dot = os.path.join(tmp, "graph")
        cmd = launcher + ["-np", "2"] + tester + [
            "--", "profile_trace", prefix, "profile_dot", dot, "profile_dot_max_tasks", "100000"]
        print("running:", " ".join(cmd))
        run = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             timeout=240)
        print(run.stdout)
        if run.returncode != 0:
            fail(f"the traced run exited {run.returncode}")
        traces = []
        for r in range(2):
            path = f"{prefix}.{r}.json"
            try:
                with open(path) as f:
                    traces.append(json.load(f))
            except (OSError, json.JSONDecodeError) as e:
                fail(f"{path}: {e}")
        check_tasks(traces)
        check_flows(traces)
        check_merge(prefix, tmp)
        check_critical(traces, prefix)
        check_dot(dot)
    print("trace checks passed")


def check_tasks(traces):
    for r, t in enumerate(traces):
        if t["otherData"]["rill_rank"] != r:
            fail(f"file of rank {r} says rank {t['otherData']['rill_rank']}")
        stats = t["otherData"].get("rill_stats")
        if not stats:
            fail(f"rank {r}: no statistics in the trace metadata")
        # the run's parameters, each with its value and source (the tester sets its cores)
        params = {p["name"]: p for p in t["otherData"].get("rill_params", [])}
        cores = params.get("runtime_num_cores", {})
        if (cores.get("value"), cores.get("source")) != ("1", "set"):
            fail(f"rank {r}: the trace metadata's runtime_num_cores is {cores or 'missing'}, "
                 "not 1 from the program (-c 1)")
        tasks = [e for e in t["traceEvents"] if e["ph"] == "X" and e.get("cat") == "task"]
        seen = {}
        for e in tasks:
            if e["pid"] != r:
                fail(f"rank {r}: a task slice has pid {e['pid']}")
            if e["tid"] >= 1000:
                fail(f"rank {r}: task {e['name']} on track {e['tid']}, not a worker's")
            tid = e["args"].get("task")
            if tid is None:
                fail(f"rank {r}: task slice {e['name']} without its number")
            if tid in seen:
                fail(f"rank {r}: task #{tid} ({e['name']}) appears twice")
            seen[tid] = e
        counts = {}
        for e in tasks:
            counts[e["name"]] = counts.get(e["name"], 0) + 1
        expected = {c["class"]: c["count"] for c in stats["classes"]}
        if counts != expected:
            fail(f"rank {r}: task slices per class {counts} differ from the tasks that ran "
                 f"{expected}")
        workers = sum(w["tasks"] for w in stats["workers"])
        if workers != len(tasks):
            fail(f"rank {r}: {len(tasks)} task slices, the workers ran {workers} tasks")
        print(f"rank {r}: {len(tasks)} tasks, each once on a worker track")


def enclosing(events, e):
    """The slice on e's track that contains e's timestamp."""
    for s in events:
        if (s["ph"] == "X" and s["tid"] == e["tid"] and s["ts"] <= e["ts"] <= s["ts"] + s["dur"]):
            return s
    return None


def check_flows(traces):
    starts, ends = {}, {}
    for r, t in enumerate(traces):
        for e in t["traceEvents"]:
            if e["ph"] == "s":
                starts.setdefault(e["id"], []).append((r, e))
            elif e["ph"] == "f":
                ends.setdefault(e["id"], []).append((r, e))
    remote = 0
    for fid, ss in starts.items():
        for r, s in ss:
            slice_ = enclosing(traces[r]["traceEvents"], s)
            if slice_ is None:
                fail(f"flow {fid} starts on rank {r} outside any slice")
            if slice_["name"] != "send":
                continue
            # a version sent: its end must be on another rank, in a receive, not earlier
            es = ends.get(fid, [])
            if len(es) != 1:
                fail(f"flow {fid} from rank {r}'s send has {len(es)} ends")
            er, e = es[0]
            if er == r:
                fail(f"flow {fid} from rank {r}'s send ends on the same rank")
            end_slice = enclosing(traces[er]["traceEvents"], e)
            if end_slice is None or end_slice["name"] != "recv":
                fail(f"flow {fid} ends on rank {er} outside a receive")
            if e["ts"] < s["ts"]:
                fail(f"flow {fid}: ends at {e['ts']} us on rank {er}, before it starts at "
                     f"{s['ts']} us on rank {r}")
            remote += 1
    # every flow that starts ends somewhere (a datum brought home at the end, with no
    # reader, once left its local flow open)
    unended = [fid for fid in starts if fid not in ends]
    if unended:
        fail(f"{len(unended)} flow(s) start and never end, e.g. id {unended[0]}")
    sends = sum(c["count"] for t in traces for c in t["otherData"]["rill_stats"]["classes"]
                if c["class"] == "send")
    recvs = sum(c["count"] for t in traces for c in t["otherData"]["rill_stats"]["classes"]
                if c["class"] == "recv")
    if remote != sends or sends != recvs or sends == 0:
        fail(f"{remote} remote flows for {sends} sends and {recvs} receives")
    print(f"{remote} remote dependencies: each a flow from the sender to the receiver, in order")


def check_merge(prefix, tmp):
    out = os.path.join(tmp, "merged.json")
    tool = os.path.join(TOP, "tools", "rill_trace_merge")
    run = subprocess.run([sys.executable, tool, "-o", out, f"{prefix}.0.json", f"{prefix}.1.json"],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    print(run.stdout)
    if run.returncode != 0:
        fail("rill_trace_merge failed")
    with open(out) as f:
        merged = json.load(f)
    pids = {e["pid"] for e in merged["traceEvents"] if "pid" in e}
    if pids != {0, 1}:
        fail(f"merged file has processes {pids}")
    print("merged file is valid JSON with both ranks")


def check_critical(traces, prefix):
    """Task slices name whole tiles only; rill_trace_timeline --critical follows the
    factorization's chain back from its last POTRF, across both ranks."""
    token = re.compile(r"^((INPUT|OUTPUT|INOUT) (\d+:\d+|private))( (INPUT|OUTPUT|INOUT) "
                       r"(\d+:\d+|private))*( \.\.\.)?( urgent)?$")
    for r, t in enumerate(traces):
        for e in t["traceEvents"]:
            text = e.get("args", {}).get("args") if e["ph"] == "X" and e.get("cat") == "task" \
                else None
            if text and not token.match(text):
                fail(f"rank {r}: task {e['name']}'s tiles {text!r} are not whole tokens")
    tool = os.path.join(TOP, "tools", "rill_trace_timeline")
    run = subprocess.run([sys.executable, tool, "--critical", "--name", "dpotrf", "--nth", "-1",
                          f"{prefix}.0.json", f"{prefix}.1.json"],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    print(run.stdout[-2000:])
    if run.returncode != 0:
        fail("rill_trace_timeline --critical failed")
    lines = run.stdout.splitlines()
    chain = [line for line in lines if " -> " in line]
    spans = [(float(line.split()[0]), float(line.split()[2])) for line in chain]
    if len(chain) < 3 or "dpotrf" not in chain[-1] or spans[-1][0] != 0.0:
        fail(f"the chain does not end at the last dpotrf (at 0): {chain[-1:]}")
    if any(spans[i][1] > spans[i + 1][0] + 1e-3 for i in range(len(spans) - 1)):
        fail("a task of the chain starts before its predecessor ends")
    if not all(any(f"rank {r}" in line for line in chain) for r in range(2)):
        fail("the chain of a 2 x 1 grid's Cholesky stays on one rank")
    if not any(line.startswith("critical path:") for line in lines):
        fail("no summary line")
    print(f"critical path: {len(chain)} tasks, both ranks")


def check_dot(dot):
    for r in range(2):
        path = f"{dot}.{r}.dot"
        try:
            text = open(path).read()
        except OSError as e:
            fail(f"{path}: {e}")
        if not text.startswith("digraph"):
            fail(f"{path} is not a DOT digraph")
        if "style=dashed" not in text:
            fail(f"{path}: no remote edge marked")
        nodes = sum(1 for line in text.splitlines() if "[label=" in line and "->" not in line)
        print(f"{path}: {nodes} nodes")


if __name__ == "__main__":
    main()
