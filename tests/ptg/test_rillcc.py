#!/usr/bin/env python3
"""rillcc on the corpus: every file of good/ compiles (exit 0); every file of bad/ fails
(exit 1) with the message its first line expects ("// expect: LINE:COL: text") at that
place; inputs that are not a file's content (devices, directories, FIFOs, an oversized
file) are refused with exit 2, and generated ones (an expression of 200,000 terms, deep
parentheses) are reported, not a crash; and rillcc never crashes: every prefix of the good files and seeded random byte
mutations of them end with exit 0 or 1 and a message, never a signal or a hang.

With a C compiler and include directories after them, the C that rillcc writes for a
program in a directory named 'c*' and a file named 'o"q.rill' compiles (-Werror): the path
is escaped in the generated comments and #line directives.

usage: test_rillcc.py RILLCC CORPUS_DIR [CC INCLUDE_DIR...]
"""
import os
import random
import subprocess
import sys
import tempfile


def run(rillcc, path, env):
    p = subprocess.run([rillcc, path], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, errors="replace", timeout=20, env=env)
    return p.returncode, p.stderr


def expect(rillcc, path, env, rc_want, text, fails, what):
    """rillcc on path ends with rc_want and text in its messages; returns fails + 0 or 1."""
    try:
        rc, err = run(rillcc, path, env)
    except subprocess.TimeoutExpired:
        print(f"FAIL {what}: rillcc did not end within 20 s")
        return fails + 1
    if rc != rc_want or text not in err:
        print(f"FAIL {what}: exit {rc}, wanted {rc_want} and '{text}'; got:\n{err[-2000:]}")
        return fails + 1
    return fails


def special_inputs(rillcc, env, tmp):
    """Inputs that no file of bad/ can hold: what is not a regular file, what is too big
    (16 MiB at most), and expressions too long or too deep for a committed file."""
    fails = 0
    # not a regular file: refused before reading (/dev/zero would be read forever)
    if os.path.exists("/dev/zero"):
        fails = expect(rillcc, "/dev/zero", env, 2, "is a device, not a regular file",
                       fails, "/dev/zero")
    fails = expect(rillcc, tmp, env, 2, "is a directory, not a regular file", fails,
                   "a directory")
    fifo = os.path.join(tmp, "pipe.rill")
    if hasattr(os, "mkfifo"):
        os.mkfifo(fifo)
        fails = expect(rillcc, fifo, env, 2, "is a FIFO, not a regular file", fails, "a FIFO")
        os.unlink(fifo)
    big = os.path.join(tmp, "big.rill")
    with open(big, "wb") as fh:  # sparse: 16 MiB + 1 of NUL bytes, never read
        fh.truncate((16 << 20) + 1)
    fails = expect(rillcc, big, env, 2, "at most 16777216 (16 MiB) of source", fails,
                   "an oversized file")
    os.unlink(big)
    # expressions too long or deep: an error at the operator past RILLCC_MAX_DEPTH (1000)
    # levels, never a stack overflow in the recursive walks (checks, generation, dump)
    src = os.path.join(tmp, "deep.rill")
    head = 'N [type = "int"]\nA [type = "rill_matrix_t *"]\nT(i)\n    i = 0 .. N-1\n    k = '
    tail = "\n    : A(i, 0)\n    RW X <- A(i, 0)\nBODY\nEND\n"
    for what, expr, rc_want, text in (
            ("200,000 terms", "+".join(["i"] * 200000), 1,
             "5:2008: error: expression nested deeper than 1000 levels"),
            ("5,000 parentheses", "(" * 5000 + "i" + ")" * 5000, 1,
             "5:1009: error: parentheses nested deeper than 1000 levels"),
            ("1,000 parentheses", "(" * 1000 + "i" + ")" * 1000, 0, ""),
            ("a chain of 1,000 operators", "+".join(["i"] * 1000), 0, ""),
            ("20,000 unary minus", "-" * 20000 + "i", 1, "the parser's stack is full"),
            ("3,000 nested ?:", "i ? " * 3000 + "i" + " : i" * 3000, 1,
             "expression nested deeper than 1000 levels"),
            ("1,001 nested ?:", "i ? " * 1001 + "i" + " : i" * 1001, 1,
             "expression nested deeper than 1000 levels")):
        with open(src, "w") as fh:
            fh.write(head + expr + tail)
        fails = expect(rillcc, src, env, rc_want, text, fails, what)
    return fails


ODD_PATH_PROGRAM = """%{
static void add_one(double *x) { x[0] += 1; }
%}
A [type = "rill_matrix_t *"]

T(i)
    i = 0 .. 1
    : A(0, 0)
    RW X <- A(0, 0)
         -> A(0, 0)
BODY
    add_one(X);
END
"""


def odd_path(rillcc, env, tmp, cc, includes):
    """A .rill path holding '*/' (it would close the generated files' first comment) and
    '"' (it would end #line's string): the generated C compiles with -Werror, and a body's
    error is reported at the .rill path."""
    d = os.path.join(tmp, "c*")
    os.makedirs(d, exist_ok=True)
    src = os.path.join(d, 'o"q.rill')
    with open(src, "w") as fh:
        fh.write(ODD_PATH_PROGRAM)
    out_c = os.path.join(tmp, "odd.c")
    p = subprocess.run([rillcc, src, "-o", out_c], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=20, env=env)
    if p.returncode != 0:
        print(f"FAIL odd path: rillcc exited {p.returncode}:\n{p.stderr}")
        return 1
    flags = ["-std=gnu11", "-D_GNU_SOURCE", "-Wall", "-Werror", "-fsyntax-only"]
    flags += [f"-I{i}" for i in includes]
    p = subprocess.run([cc] + flags + [out_c], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=60)
    if p.returncode != 0:
        print(f"FAIL odd path: the generated C does not compile:\n{p.stderr[-2000:]}")
        return 1
    with open(src, "a") as fh:  # a body that does not compile: reported at the .rill path
        fh.write("\nU(i)\n    i = 0 .. 1\n    : A(0, 0)\n    RW X <- A(0, 0) -> A(0, 0)\n"
                 "BODY\n    no_such_call(X);\nEND\n")
    subprocess.run([rillcc, src, "-o", out_c], env=env, timeout=20, stdout=subprocess.PIPE,
                   stderr=subprocess.PIPE)
    p = subprocess.run([cc] + flags + [out_c], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=60)
    if p.returncode == 0 or 'o"q.rill:20' not in p.stderr:
        print(f"FAIL odd path: a body's error is not reported at the .rill path:\n"
              f"{p.stderr[-2000:]}")
        return 1
    print("a .rill path with '*/' and '\"': the generated C compiles, #line names it")
    return 0


def main():
    rillcc, corpus = sys.argv[1], sys.argv[2]
    env = dict(os.environ)
    # a compiler frees nothing at exit: its tree lives until the end (no leak reports)
    env["ASAN_OPTIONS"] = (env.get("ASAN_OPTIONS", "") + ":detect_leaks=0").lstrip(":")
    fails = 0
    good = sorted(os.path.join(corpus, "good", f) for f in os.listdir(os.path.join(corpus, "good")))
    bad = sorted(os.path.join(corpus, "bad", f) for f in os.listdir(os.path.join(corpus, "bad")))
    for f in good:
        rc, err = run(rillcc, f, env)
        if rc != 0:
            print(f"FAIL {f}: exit {rc}\n{err}")
            fails += 1
    for f in bad:
        with open(f) as fh:
            first = fh.readline().strip()
        if not first.startswith("// expect: "):
            print(f"FAIL {f}: first line must be '// expect: LINE:COL: text'")
            fails += 1
            continue
        want = f + ":" + first[len("// expect: "):].replace(": ", ": error: ", 1)
        rc, err = run(rillcc, f, env)
        if rc != 1 or want.strip() not in err:
            print(f"FAIL {f}: exit {rc}, wanted 1 and\n  {want}\ngot:\n{err}")
            fails += 1
    print(f"{len(good)} good files compiled, {len(bad)} bad files reported where expected")
    # robustness: prefixes and mutations of the good files
    rng = random.Random(20261122)
    runs = 0
    with tempfile.TemporaryDirectory() as tmp:
        fails += special_inputs(rillcc, env, tmp)
        if len(sys.argv) > 3:
            fails += odd_path(rillcc, env, tmp, sys.argv[3], sys.argv[4:])
        path = os.path.join(tmp, "cut.rill")
        for f in good:
            with open(f, "rb") as fh:
                data = fh.read()
            cases = [data[:n] for n in range(0, len(data), max(1, len(data) // 120))]
            for _ in range(150):
                b = bytearray(data)
                for _ in range(rng.randint(1, 4)):
                    i = rng.randrange(len(b))
                    b[i] = rng.choice(b"(){}[]<>-=.,:;?!%\"/*\n \t0123456789azAZ_\x00\xff")
                cases.append(bytes(b))
            for c in cases:
                with open(path, "wb") as fh:
                    fh.write(c)
                rc, err = run(rillcc, path, env)
                runs += 1
                if rc not in (0, 1) or (rc == 1 and "error" not in err):
                    print(f"FAIL: rillcc exited {rc} on a variant of {f}:\n{c!r}\n{err[-2000:]}")
                    fails += 1
                    break
    print(f"{runs} prefixes and mutations: rillcc ended with 0 or 1 on each")
    if fails:
        print(f"{fails} failure(s)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
