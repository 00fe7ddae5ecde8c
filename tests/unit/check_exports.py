#!/usr/bin/env python3
"""ABI check: librill exports exactly the functions include/rill declares with RILL_API
(everything else is built with hidden visibility). Usage: check_exports.py LIBRILL_SO
INCLUDE_DIR. Exit 1 naming each symbol exported without a RILL_API declaration."""
import glob
import os
import re
import subprocess
import sys

# what the toolchain adds to every shared object
TOOLCHAIN = {"_init", "_fini", "_edata", "_end", "__bss_start"}


def main():
    lib, inc = sys.argv[1], sys.argv[2]
    out = subprocess.run(["nm", "-D", "--defined-only", lib], check=True, capture_output=True,
                         text=True).stdout
    exported = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2] not in TOOLCHAIN:
            exported.add(parts[2].split("@")[0])
    api = set()
    decl = re.compile(r"^RILL_API\b[^(]*?\b([A-Za-z_][A-Za-z0-9_]*)\s*\(", re.M)
    for h in glob.glob(os.path.join(inc, "rill", "*.h")):
        with open(h, encoding="utf-8") as fh:
            api.update(decl.findall(fh.read()))
    if not api:
        print(f"no RILL_API declaration found under {inc}/rill: wrong directory?")
        return 1
    extra = sorted(exported - api)
    if extra:
        print(f"{lib} exports {len(extra)} symbol(s) not declared with RILL_API in "
              f"{inc}/rill (mark the API there; keep the rest hidden):")
        for s in extra:
            print("  " + s)
        return 1
    print(f"{lib}: {len(exported)} exported symbols, all declared with RILL_API "
          f"({len(api - exported)} declared ones not in this build)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
