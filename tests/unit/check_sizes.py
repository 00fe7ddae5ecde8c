#!/usr/bin/env python3
"""Size check of the library's sources: no .c or .cu file of the library's layers (base,
device, comm, runtime, gpu_manager, dsl; rillcc included) over MAX_LINES lines, and no
function in them over MAX_FUNC lines (from its opening brace to its closing one, comments
and strings blanked first). Tests, benchmarks, applications and tools are not the library.
Usage: check_sizes.py SOURCE_DIR. Exit 1 naming each file or function over its limit."""
import os
import re
import sys

LIBRARY = ["base", "device", "comm", "runtime", "gpu_manager", "dsl"]
MAX_LINES = 1500
MAX_FUNC = 150


def blank(src):
    """src with comments, string and character literals blanked (newlines kept)."""
    keep_lines = lambda m: "\n" * m.group(0).count("\n")
    src = re.sub(r"/\*.*?\*/", keep_lines, src, flags=re.S)
    src = re.sub(r"//[^\n]*", "", src)
    src = re.sub(r'"(\\.|[^"\\\n])*"', '""', src)
    return re.sub(r"'(\\.|[^'\\\n])*'", "''", src)


def functions(src):
    """(name, first line, lines) of each top-level brace block preceded by a parameter list
    (a function's body; struct, enum and initializer blocks are not)."""
    s = blank(src)
    depth, line, start, head = 0, 1, None, ""
    for i, ch in enumerate(s):
        if ch == "\n":
            line += 1
        elif ch == "{":
            if depth == 0:
                start, head = line, s[max(0, i - 300):i]
            depth += 1
        elif ch == "}" and depth > 0:
            depth -= 1
            if depth == 0 and start is not None:
                m = re.search(r"(\w+)\s*\([^;{}=]*\)\s*$", head)
                if m and m.group(1) not in ("if", "for", "while", "switch"):
                    yield m.group(1), start, line - start + 1
                start = None


def main():
    top = sys.argv[1]
    bad = []
    for layer in LIBRARY:
        for root, _, files in os.walk(os.path.join(top, layer)):
            for f in sorted(files):
                if not f.endswith((".c", ".cu")):
                    continue
                path = os.path.join(root, f)
                rel = os.path.relpath(path, top)
                with open(path, encoding="utf-8") as fh:
                    src = fh.read()
                n = src.count("\n")
                if n > MAX_LINES:
                    bad.append(f"{rel}: {n} lines, over {MAX_LINES}: split it by role")
                for name, first, lines in functions(src):
                    if lines > MAX_FUNC:
                        bad.append(f"{rel}:{first}: {name}() is {lines} lines, over {MAX_FUNC}")
    for b in bad:
        print(b)
    if not bad:
        print(f"sizes: every library file within {MAX_LINES} lines, every function within "
              f"{MAX_FUNC}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
