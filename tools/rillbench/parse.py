"""Readers of the outputs of Rill's testers and bench programs."""
import csv
import io
import re

_GPU_LINE = re.compile(r"^# +(rank \d+, )?GPU \d+:")


def tester_runs(text, scale=1.0):
    """The GFLOP/s of every result row of a DLA tester (the column third from the end:
    testing_dgemm's rows have M N K where the others have N), times scale (1e-3: TFLOP/s);
    not those whose check (-x) says FAIL."""
    vals = []
    for line in text.splitlines():
        f = line.split()
        if len(f) >= 9 and f[0].isdigit() and f[-1] != "FAIL":  # (a failed check: no figure)
            try:
                vals.append(float(f[-3]) * scale)
            except ValueError:
                pass
    return vals


def tester_gpu_lines(text):
    """The GPU lines (exec streams busy, bytes per channel) of the tester's best run."""
    best, lines, keep = -1.0, [], False
    for line in text.splitlines():
        f = line.split()
        if len(f) >= 9 and f[0].isdigit():
            try:
                g = float(f[-3])
            except ValueError:
                continue
            keep = g > best
            if keep:
                best, lines = g, []
        elif keep and _GPU_LINE.match(line):
            lines.append(line.strip())
    return lines


def vendor_runs(text):
    """bench_gpu_vendor's TFLOP/s of every repetition (its 'rep=' rows)."""
    return [float(m.group(1)) for m in re.finditer(r",rep=\d+,.*?,tflops=([0-9.]+)", text)]


def tables(text, first="tile_bytes"):
    """The whitespace tables of a bench program: a header line whose first word is `first`,
    then its numeric rows; a list of tables, each a list of {column: text}."""
    out, cols = [], None
    for line in text.splitlines():
        f = line.split()
        if f and f[0] == first:
            cols = f
            out.append([])
        elif cols and f and f[0].isdigit():
            if len(f) == len(cols):  # (a row that failed its check has more words: left out)
                out[-1].append(dict(zip(cols, f)))
        elif cols and f and not line.startswith("#"):
            cols = None
    return out


def markdown_tables(text):
    """{heading: rows} of the markdown tables under '## heading' lines; rows as
    {column: text}."""
    out, head, cols = {}, None, None
    for line in text.splitlines():
        if line.startswith("## "):
            head, cols = line[3:].strip(), None
        elif line.startswith("|") and head is not None:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if cols is None:
                cols = cells
                out[head] = []
            elif not all(set(c) <= set("-: ") for c in cells):
                out[head].append(dict(zip(cols, cells)))
    return out


def csv_rows(text):
    """The rows of a CSV file whose '#' lines are comments."""
    body = "\n".join(l for l in text.splitlines() if l and not l.startswith("#"))
    return list(csv.DictReader(io.StringIO(body)))


def number(s):
    """A cell as a float, None when it is not one (n/a, -, empty)."""
    try:
        return float(s)
    except (TypeError, ValueError):
        return None


def tile_name(nbytes):
    """4096 -> '4 KiB', 16777216 -> '16 MiB'."""
    n = int(nbytes)
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size and n % size == 0:
            return f"{n // size} {unit}"
    return f"{n} B"
