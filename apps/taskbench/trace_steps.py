#!/usr/bin/env python3
"""Where the time of a Task Bench run on Rill goes, step by step, from its trace.

    trace_steps.py --width W TRACE.json [TRACE.json ...]

The traces of one run of taskbench_rill_dtd or taskbench_rill_ptg with --mca profile_trace
(one file per rank; Task Bench's graph of W points per timestep, every point depending on
points of the step before, as stencil_1d, nearest, fft or all_to_all at width 2). The
tasks of a rank are its task slices ordered by task number (DTD numbers tasks in insertion
order: step by step, point by point); the Task Bench tasks are the slices of the class
with the most of them. Per rank it prints:

- the task body's time (median);
- the step: from the end of the step's last task to the end of the next step's last
  task (median), and what is not body in it;
- each task's start after the end of the last task of the step before (median and 90th
  percentile): the release of its dependency, the scheduling, the wake-up of its worker
  (and, between ranks, the message), split by whether the task ran on the worker that
  ran that last task or on another;
- per worker, its time in task bodies, in other slices (DTD's sends and receives), and
  the rest (insertion on worker 0, the main thread; looking for work and sleeping).
"""
import argparse
import json
import statistics
import sys
from collections import Counter, defaultdict


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--width", type=int, required=True, help="Task Bench's -width")
    ap.add_argument("traces", nargs="+")
    a = ap.parse_args()
    for path in a.traces:
        try:
            doc = json.load(open(path))
        except (OSError, ValueError) as e:
            sys.exit(f"trace_steps.py: {path}: {e}")
        ev = doc["traceEvents"]
        rank = doc.get("otherData", {}).get("rill_rank", "?")
        tasks = [e for e in ev if e.get("ph") == "X" and e.get("cat") == "task"]
        cls = Counter(e["name"] for e in tasks).most_common(1)
        if not cls:
            print(f"rank {rank}: no task slices in {path}")
            continue
        name = cls[0][0]
        tb = sorted((e for e in tasks if e["name"] == name), key=lambda e: e["args"]["task"]
                    if isinstance(e["args"].get("task"), int) else e["ts"])
        # the tasks of this rank, W / ranks per step, in insertion order
        nranks = doc.get("otherData", {}).get("rill_nranks", 1)
        per_step = max(1, a.width // nranks)
        steps = [tb[i:i + per_step] for i in range(0, len(tb) - per_step + 1, per_step)]
        body = [e["dur"] for e in tb]
        step_end = [max(e["ts"] + e["dur"] for e in s) for s in steps]
        step_wall = [b - a_ for a_, b in zip(step_end, step_end[1:])]
        same, other = [], []
        for prev, cur in zip(steps, steps[1:]):
            last = max(prev, key=lambda e: e["ts"] + e["dur"])
            for e in cur:
                lat = e["ts"] - (last["ts"] + last["dur"])
                (same if e["tid"] == last["tid"] else other).append(lat)
        t0 = min(e["ts"] for e in tb)
        t1 = max(e["ts"] + e["dur"] for e in tb)
        print(f"rank {rank} ({path}): {len(tb)} '{name}' tasks, {len(steps)} steps of "
              f"{per_step}, {t1 - t0:.0f} us from the first task's start to the last's end")
        print(f"  task body: median {statistics.median(body):.2f} us")
        if step_wall:
            sw = statistics.median(step_wall)
            print(f"  step: median {sw:.2f} us, of which not body "
                  f"{sw - statistics.median(body):.2f} us")
        for what, xs in (("on the worker of the step's last task", same),
                         ("on another worker", other)):
            if xs:
                print(f"  start after the step before ended, {what}: {len(xs)} tasks, "
                      f"median {statistics.median(xs):.2f} us, p90 {pct(xs, 0.9):.2f} us")
        busy = defaultdict(float)
        other_sl = defaultdict(float)
        for e in ev:
            if e.get("ph") != "X" or e.get("tid", 1000) >= 1000:
                continue
            if not (t0 <= e["ts"] <= t1):
                continue
            (busy if e.get("cat") == "task" and e["name"] == name else other_sl)[e["tid"]] += \
                e["dur"]
        for w in sorted(set(busy) | set(other_sl)):
            rest = (t1 - t0) - busy[w] - other_sl[w]
            print(f"  worker {w}: bodies {100 * busy[w] / (t1 - t0):.1f}%, other slices "
                  f"{100 * other_sl[w] / (t1 - t0):.1f}%, the rest {100 * rest / (t1 - t0):.1f}%"
                  f"{' (inserting, waiting)' if w == 0 else ' (looking, sleeping)'}")


if __name__ == "__main__":
    main()
