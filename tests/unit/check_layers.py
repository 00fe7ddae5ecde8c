#!/usr/bin/env python3
"""Layering check: every internal #include "x.h" in a layer's folder must resolve to a
header of that layer or of a layer below it (base -> device -> comm -> runtime ->
gpu_manager -> dsl -> apps, tools), base must not mention higher layers' log components
or tags, and the front ends (dsl) call nothing of the comm engine (rill_comm_*): their
remote dependencies go through the core's engine (runtime/remote_dep.h). Usage: check_layers.py SOURCE_DIR. Exit 1 with the offending lines."""
import os
import re
import sys

ORDER = ["base", "device", "comm", "runtime", "gpu_manager", "dsl", "apps", "tools"]


def layer_of(path, top):
    first = os.path.relpath(path, top).split(os.sep)[0]
    return first if first in ORDER else None


def main():
    top = sys.argv[1]
    headers = {}  # header name -> layers that define it
    for layer in ORDER:
        for root, _, files in os.walk(os.path.join(top, layer)):
            for f in files:
                if f.endswith(".h") or f.endswith(".cuh"):
                    headers.setdefault(f, set()).add(layer)
    bad = []
    inc = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
    comm_call = re.compile(r"\brill_comm_[a-z0-9_]+")
    for layer in ORDER:
        rank = ORDER.index(layer)
        allowed = set(ORDER[: rank + 1])
        # apps and tools sit side by side at the top: neither may use the other
        if layer == "tools":
            allowed.discard("apps")
        for root, _, files in os.walk(os.path.join(top, layer)):
            for f in files:
                if not f.endswith((".c", ".h", ".cu", ".cuh")):
                    continue
                path = os.path.join(root, f)
                with open(path, encoding="utf-8", errors="replace") as fh:
                    for n, line in enumerate(fh, 1):
                        if layer == "dsl" and comm_call.search(line):
                            bad.append(f"{os.path.relpath(path, top)}:{n}: the front end calls "
                                       f"the comm engine ({comm_call.search(line).group(0)}): "
                                       f"go through the core (runtime/remote_dep.h, core.h)")
                        m = inc.match(line)
                        if not m:
                            continue
                        name = os.path.basename(m.group(1))
                        if m.group(1).startswith("rill/"):
                            continue  # public headers: any layer
                        owners = headers.get(name)
                        if owners and not owners & allowed:
                            bad.append(f"{os.path.relpath(path, top)}:{n}: {layer} includes "
                                       f"{m.group(1)} of {', '.join(sorted(owners))} (a higher "
                                       f"layer)")
    if bad:
        print("layering violations (order: " + " -> ".join(ORDER) + "):")
        print("\n".join(bad))
        return 1
    print("layers respected: " + " -> ".join(ORDER))
    return 0


if __name__ == "__main__":
    sys.exit(main())
