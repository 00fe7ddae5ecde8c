#!/usr/bin/env python3
"""Checks tools/rill_trace_merge, tools/rill_trace_plot and tools/rill_trace_timeline on the
traces in this folder (run.0.json and run.1.json: 2 ranks, 2 workers and a comm thread
each, 2 flows; critical.json: one rank's DTD tasks on a worker and two GPU streams, a
chain of four through their tiles).

usage: check_trace_tools.py merge    TOOLS_DIR OUT_DIR
       check_trace_tools.py plot     TOOLS_DIR OUT_DIR
       check_trace_tools.py timeline TOOLS_DIR OUT_DIR
Runs each tool with the interpreter that runs this script. Exit 0 when all checks pass.
"""
import json
import os
import re
import subprocess
import sys

DATA = os.path.dirname(os.path.abspath(__file__))


def run(tool, *args):
    p = subprocess.run([sys.executable, tool] + list(args), capture_output=True, text=True)
    sys.stdout.write(p.stdout + p.stderr)
    if p.returncode != 0:
        sys.exit(f"FAIL: {os.path.basename(tool)} exited {p.returncode}")
    return p.stdout


def check(cond, what):
    if not cond:
        sys.exit(f"FAIL: {what}")
    print(f"ok: {what}")


def check_merged(path):
    with open(path) as f:
        doc = json.load(f)
    events = doc["traceEvents"]
    check(isinstance(doc, dict) and isinstance(events, list), f"{path} is a trace object")
    n_in = sum(len(json.load(open(os.path.join(DATA, f"run.{r}.json")))["traceEvents"])
               for r in (0, 1))
    check(len(events) == n_in, f"all {n_in} events kept")
    check({e.get("pid") for e in events} == {0, 1}, "pids 0 and 1")
    check([o["rill_rank"] for o in doc["otherData"]["rill_ranks"]] == [0, 1],
          "otherData.rill_ranks in rank order")
    check(doc["otherData"]["rill_ranks"][1]["rill_stats"]["tasks"] == 6,
          "each rank's otherData kept")
    flows = {}
    for e in events:
        if e["ph"] in ("s", "f"):
            flows.setdefault(e["id"], {})[e["ph"]] = e["pid"]
    check(flows == {"0x10001": {"s": 0, "f": 1}, "0x20001": {"s": 1, "f": 0}},
          "both flows have their start and end, across ranks")
    names = {(e["pid"], e.get("tid")): e["args"]["name"] for e in events
             if e["ph"] == "M" and e["name"] == "thread_name"}
    check(names.get((1, 1000)) == "comm thread", "thread names kept")


def main():
    what, tools, out = sys.argv[1:4]
    os.makedirs(out, exist_ok=True)
    merge = os.path.join(tools, "rill_trace_merge")
    if what == "merge":
        # Files in any order come out by rank; a prefix finds run.<rank>.json only.
        m1 = os.path.join(out, "merged_files.json")
        run(merge, "-o", m1, os.path.join(DATA, "run.1.json"), os.path.join(DATA, "run.0.json"))
        check_merged(m1)
        m2 = os.path.join(out, "merged_prefix.json")
        run(merge, "-o", m2, "--prefix", os.path.join(DATA, "run"))
        check_merged(m2)
    elif what == "plot":
        png = os.path.join(out, "trace.png")
        if os.path.exists(png):
            os.unlink(png)
        run(os.path.join(tools, "rill_trace_plot"), "-o", png, "--title", "trace_tools test",
            os.path.join(DATA, "run.0.json"), os.path.join(DATA, "run.1.json"))
        with open(png, "rb") as f:
            head = f.read(8)
        check(head == b"\x89PNG\r\n\x1a\n", "per-rank files: a PNG image")
        check(os.path.getsize(png) > 10000, f"per-rank files: PNG of {os.path.getsize(png)} bytes")
        merged = os.path.join(out, "plot_merged.json")
        run(merge, "-o", merged, "--quiet", "--prefix", os.path.join(DATA, "run"))
        zoom = os.path.join(out, "trace_zoom.png")
        run(os.path.join(tools, "rill_trace_plot"), "-o", zoom, "--start", "400",
            "--end", "1000", merged)
        check(os.path.getsize(zoom) > 10000, "merged file, window: a PNG image")
        # --min-busy leaves out the tracks busy less than that share of the window
        tracks = {}
        for busy in ("0", "30"):
            p = subprocess.run([sys.executable, os.path.join(tools, "rill_trace_plot"), "-o",
                                os.path.join(out, f"trace_busy{busy}.png"), "--min-busy", busy,
                                merged], capture_output=True, text=True)
            sys.stdout.write(p.stdout + p.stderr)
            check(p.returncode == 0, f"--min-busy {busy}: exit status 0")
            tracks[busy] = [int(w) for w, nxt in zip(p.stderr.split(), p.stderr.split()[1:])
                            if nxt == "tracks,"]
        check(tracks["30"] and tracks["0"] and 0 < tracks["30"][0] < tracks["0"][0],
              f"--min-busy 30 keeps fewer tracks ({tracks['30']}) than all ({tracks['0']})")
        p = subprocess.run([sys.executable, os.path.join(tools, "rill_trace_plot"),
                            "--min-busy", "101", merged], capture_output=True, text=True)
        check(p.returncode == 2 and "--min-busy must be a percentage" in p.stderr,
              "--min-busy 101 is refused with a message")
    elif what == "timeline":
        timeline = os.path.join(tools, "rill_trace_timeline")
        files = [os.path.join(DATA, "run.0.json"), os.path.join(DATA, "run.1.json")]
        # around rank 1's first trsm (the third trsm slice by time): rank 0's send of the
        # panel comes before it, and the panel's flow ends where it starts
        out_text = run(timeline, "--name", "trsm", "--nth", "2", "--before", "100",
                       "--after", "10", *files)
        lines = out_text.splitlines()
        times = [float(line.split()[0]) for line in lines]
        check(times == sorted(times), "lines in time order")
        check(any("rank 0" in line and "comm thread" in line and "send" in line
                  for line in lines), "rank 0's send in the window")
        check(any("rank 1" in line and "flow ends 0x10001" in line for line in lines),
              "the flow from rank 0 ends on rank 1")
        anchor = [line for line in lines if line.split()[0] == "0.000"]
        check(len([a for a in anchor if "trsm(2,0)" in a and "->    395.000" in a]) == 1,
              "the anchor slice at 0 with its end")
        whole = run(timeline, "--start", "0", "--counters", *files).splitlines()
        n = sum(1 for f in files for e in json.load(open(f))["traceEvents"] if e["ph"] != "M")
        check(len(whole) == n, f"the whole trace with counters: {len(whole)} lines of {n}")
        # --stats: rank 0's two workers ran 6 slices, 365 us of them two at once (trsm(3,0)
        # inside trsm(1,0)), busy 1930.5 - 365 = 1565.5 us
        st = run(timeline, "--stats", *files).splitlines()
        w0 = [line for line in st if line.startswith("rank 0  workers (2 tracks)")]
        check(len(w0) == 1 and "busy 1565.500 us" in w0[0] and "2: 365.000 us" in w0[0]
              and "1: 1200.500 us" in w0[0], "rank 0's workers: busy and overlap")
        i = st.index(w0[0])
        check(st[i + 1].split()[:2] == ["potrf", "2"] and st[i + 1].split()[-2] == "800.500",
              "rank 0's potrf: 2 slices, 800.5 us, the largest first")
        # a window that cuts slices: only their part inside counts
        cut = run(timeline, "--stats", "--start", "445", "--end", "810", files[0]).splitlines()
        w = [line for line in cut if "workers" in line]
        check(len(w) == 1 and "busy 365.000 us" in w[0] and "2: 365.000 us" in w[0],
              "a window's stats clip the slices to it")
        # --buckets: the same window, both workers busy all through it: 2 at once in each
        # 300 us bucket (the second one 65 us long)
        w = [line for line in run(timeline, "--stats", "--buckets", "300", "--start", "445",
                                  "--end", "810", files[0]).splitlines()]
        i = [k for k, line in enumerate(w) if "workers" in line][0]
        check(w[i + 1].strip() == "at once, mean per 300 us from 445.000: 2.0 2.0",
              "the mean number at once per bucket")
        # the whole run in buckets of 500 us: the buckets hold rank 1's workers' 178 us at
        # one and 612 us at two, 1402 us of slices, and nothing outside the run
        w = run(timeline, "--stats", "--buckets", "500", *files).splitlines()
        i = [k for k, line in enumerate(w) if line.startswith("rank 1  workers")][0]
        means = [float(v) for v in w[i + 1].split(":")[1].split()]
        widths = [500, 500, 500, 1915 - 1500]
        area = sum(m * wd for m, wd in zip(means, widths))
        check(len(means) == 4 and abs(area - 1402) <= 0.05 * sum(widths),
              f"rank 1's buckets hold its slices: {means} ({area:.1f} us of 1402)")
        # --gap: per rank, from each FROM to the next TO before the next FROM; NAME:end is
        # a slice's end. Rank 0's recv at 1400 -> its gemm at 1480; rank 1's recv ends at
        # 600.5, its first trsm starts at 610; rank 0's recv (1400..1470) comes after its
        # trsms, so nothing pairs; no send comes after a syrk on either rank
        g = run(timeline, "--gap", "recv", "gemm", "--gap", "recv:end", "trsm", "--gap", "syrk",
                "send", *files).splitlines()
        check(g[0].startswith("rank 0  recv -> gemm: 1 of 1 paired; median 80.000 us"),
              f"a gap from a slice's start: {g[0]!r}")
        check(g[3].startswith("rank 1  recv:end -> trsm: 1 of 1 paired; median 9.500 us"),
              f"a gap from a slice's end: {g[3]!r}")
        check(g[2] == "rank 0  recv:end -> trsm: 0 of 1 paired", f"nothing after: {g[2]!r}")
        check(g[5] == "rank 1  syrk -> send: 0 of 2 paired", f"none paired: {g[5]!r}")
        # --critical on critical.json: dpotrf -> dtrsm -> dsyrk -> dpotrf through tiles 1:0,
        # 1:1, 1:2 (the CPU dgemm also wrote 1:2, earlier; the GPU dgemm is off the chain)
        crit_file = os.path.join(DATA, "critical.json")
        def task_of(line):  # (start, name) of a chain line: "start -> end  rank r  track  name"
            m = re.match(r"\s*(-?[\d.]+) ->\s*-?[\d.]+  rank \S+  .*?\s{2,}(\S+)  ", line)
            return (m.group(1), m.group(2)) if m else (None, None)

        cp = run(timeline, "--critical", crit_file).splitlines()
        steps = [(task_of(line)[1], line.split("(")[-1]) for line in cp[:4]]
        check(steps == [("dpotrf", "first)"), ("dtrsm", "waited 0.000 us)"),
                        ("dsyrk", "waited 100.000 us)"), ("dpotrf", "waited 10.000 us)")],
              f"the chain and its waits: {steps}")
        check(cp[4] == "critical path: 4 tasks over 460.000 us: 350.000 us in them, "
              "110.000 us waiting between them", f"the chain's summary: {cp[4]!r}")
        check(cp[5].strip().startswith("waited 100.000 us: dsyrk at 300.000"),
              "the longest wait first")
        anchored = run(timeline, "--critical", "--name", "dsyrk", crit_file).splitlines()
        check(len(anchored) >= 3 and task_of(anchored[2]) == ("0.000", "dsyrk"),
              "anchored on dsyrk: it ends the chain at 0")
        bounded = run(timeline, "--critical", "--start", "150", crit_file).splitlines()
        check([task_of(line)[1] for line in bounded[:2]] == ["dsyrk", "dpotrf"]
              and bounded[2].startswith("critical path: 2 tasks"),
              "the window's start ends the chain")
        # --landings: 3 ranks, rank 1 receives A (armed early, its put behind a slow
        # producer), B (landed at 150, its wait behind A's), C (armed at 900, its bytes
        # there since 650, rank 1's comm thread held 100 + 20 us meanwhile) and D (on time)
        gd = [os.path.join(DATA, f"gd.{r}.json") for r in range(3)]
        lines = run(timeline, "--landings", *gd).splitlines()
        check(lines[0] == "rank 1: 4 landings; landing end minus put end: median 130.5 us",
              f"landings: the count and median: {lines[0]!r}")
        # from the producers' kernels (A 480, B 110, C 400, D 990) to the landings' ends: A,
        # B and D were put behind their producers, C's put began 200 us after its kernel
        # (rank 0's put stream was idle when C's put began: handed over late)
        check(lines[1:4] == ["  from the producer's kernel end to the landing's end: median "
                             "224.0 us",
                             "    3 put(s) begun by then (behind the kernel on the GPU): "
                             "median 52.0 us",
                             "    1 begun later on an idle stream (handed over late): median "
                             "505.0 us, the put begun a median 200.0 us after the kernel"],
              f"landings: the whole hop, from the producer's kernel: {lines[1:4]!r}")
        check("1 more than 50 us late, behind an earlier landing: 0.356 ms in all" in lines[4]
              and "1 more than 50 us late, armed after the bytes landed: 0.255 ms in all "
              "(the comm thread held 0.120 ms of it)" in lines[5],
              f"landings: B behind A, C armed late, the comm thread held: {lines[5]!r}")
        check(lines[6].strip().startswith("356.0 us late (behind an earlier landing): landing "
                                          "403.000 -> 406.000, put 20.000 -> 50.000"),
              "landings: the latest first, with its times")
        # --launches: rank 0's manager launched two dtrmm (300 and 100 us, bodies 290 and
        # 95) and one dgemm (20 us) in the files' 942 us
        lines = run(timeline, "--launches", *gd).splitlines()
        check(lines == ["rank 0, GPU 0 manager and exec streams (test): 3 launches, 0.420 ms "
                        "of host time (44.6% of the window's 0.942 ms)",
                        "  dtrmm: 2, median 200.0 us, max 300.0 us, 0.400 ms, body median "
                        "192.5 us",
                        "  dgemm: 1, median 20.0 us, max 20.0 us, 0.020 ms, body median 15.0 us"],
              f"launches: per manager and class, longest sum first: {lines!r}")
        # the same with another put copying on rank 0's stream until just before C's began
        with open(gd[0]) as f:
            g0 = json.load(f)
        g0["traceEvents"].append({"ph": "X", "pid": 0, "tid": 3044, "ts": 560, "dur": 38,
                                  "name": "to a rank's GPU", "cat": "gpu"})
        gq = os.path.join(out, "gd_queued.0.json")
        with open(gq, "w") as f:
            json.dump(g0, f)
        lines = run(timeline, "--landings", gq, gd[1], gd[2]).splitlines()
        check(lines[3] == "    1 queued behind another put on their stream: median 505.0 us, "
              "the put begun a median 200.0 us after the kernel",
              f"landings: a put queued behind another on its stream: {lines[3]!r}")
        windowed = run(timeline, "--landings", "--start", "750", *gd).splitlines()
        check(windowed[0].startswith("rank 1: 2 landings"),
              "landings: those starting in the window (C and D: from 750 us after the first event)")
        # --waits: one GPU, three tasks. A (launched 100-110, kernel 150-200 on stream 0);
        # B (launched 120-130, its tile landing 125-400, kernel 405-450 on stream 0 behind
        # A: the stream idle for the tile from A's end, 200, to 400, with other tasks pending
        # 250-300); C (launched 500-510, its tile landed at 490: no wait, kernel 520-600 on
        # stream 1); C's launch names no task, as in older traces (paired by class and
        # priority). The streams idle from 150 to 600: stream 0 200-405 and 450-600, stream
        # 1 150-520; 50 us of each while tasks were pending
        def x(tid, ts, dur, name, **args):
            return {"ph": "X", "pid": 0, "tid": tid, "ts": ts, "dur": dur, "name": name,
                    "cat": "gpu", "args": args}

        def flow(ph, tid, ts, fid):
            return {"ph": ph, "pid": 0, "tid": tid, "ts": ts, "id": fid, "cat": "dep",
                    "name": "remote dependency"}
        tracks = {2000: "GPU 0 manager and exec streams (test)", 3000: "GPU 0 exec stream 0",
                  3001: "GPU 0 exec stream 1", 3043: "GPU 0 copies: landings from other ranks",
                  3049: "GPU 0 copies: landings from other ranks (lane 1)"}
        launch = "us: inputs 1.0, event 1.0, body 5.0, events 1.0; dgemm"
        ev = [{"ph": "M", "pid": 0, "name": "process_name", "args": {"name": "rank 0"}}]
        ev += [{"ph": "M", "pid": 0, "tid": t, "name": "thread_name", "args": {"name": n}}
               for t, n in tracks.items()]
        ev += [x(2000, 100, 10, "launch", priority=5, task=1, args=launch),
               x(2000, 120, 10, "launch", priority=6, task=2, args=launch),
               x(2000, 500, 10, "launch", priority=7, args=launch),
               x(3000, 150, 50, "dgemm", priority=5, task=1, args="stream 0"),
               x(3043, 125, 275, "landed from a rank", args="4096 bytes"),
               flow("t", 3043, 400, "0xb"),
               x(3000, 405, 45, "dgemm", priority=6, task=2, args="stream 0"),
               flow("f", 3000, 405, "0xb"),
               x(3049, 300, 190, "landed from a rank", args="4096 bytes"),
               flow("t", 3049, 490, "0xc"),
               x(3001, 520, 80, "dgemm", priority=7, task=3, args="stream 1"),
               flow("f", 3001, 520, "0xc")]
        ev += [{"ph": "C", "pid": 0, "ts": ts, "name": "GPU 0 tasks pending", "cat": "counter",
                "args": {"value": v}} for ts, v in ((100, 0), (250, 2), (300, 0))]
        with open(gd[0]) as f:
            doc = json.load(f)
        doc["traceEvents"] = ev
        doc["otherData"]["rill_nranks"] = 1
        gw = os.path.join(out, "waits.0.json")
        with open(gw, "w") as f:
            json.dump(doc, f)
        lines = run(timeline, "--waits", gw).splitlines()
        check(lines == ["rank 0, GPU 0: 3 tasks; enqueued before their kernel started: median "
                        "40.0 us, 0.325 ms in all",
                        "  exec streams idle 0.725 ms of 2 x 0.450 ms (first kernel to last), "
                        "0.100 ms of it while tasks waited for a slot",
                        "  1 at the head of their stream while a tile they read was landing: "
                        "the stream idle 0.200 ms waiting for it (median 200.0 us, max 200.0 "
                        "us); 0.050 ms of it while other tasks waited for a slot on this GPU"],
              f"waits: queued, idle for a landing, with tasks pending: {lines!r}")
        # the same with tasks set aside until their tile lands from 200 to 350: stream 0
        # idle 200-350 of them, stream 1 200-350 too
        doc["traceEvents"] = ev + [
            {"ph": "C", "pid": 0, "ts": ts, "name": "GPU 0 tasks set aside", "cat": "counter",
             "args": {"value": v}} for ts, v in ((100, 0), (200, 1), (350, 0))]
        with open(gw, "w") as f:
            json.dump(doc, f)
        lines = run(timeline, "--waits", gw).splitlines()
        check(len(lines) == 3 and lines[1] ==
              "  exec streams idle 0.725 ms of 2 x 0.450 ms (first kernel to last), 0.100 ms of "
              "it while tasks waited for a slot, 0.300 ms while tasks were set aside until "
              "their tile lands",
              f"waits: idle while tasks were set aside for their landing: {lines!r}")
    else:
        sys.exit(f"unknown check {what!r}")
    print("PASS")


if __name__ == "__main__":
    main()
