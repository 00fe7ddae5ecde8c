"""How evenly the tile distributions spread a tiled Cholesky over a process grid.

For each grid and distribution (the maps of runtime/data.c: cyclic, diagonal, skewed), the
work of each rank as the owner of the tiles its tasks write (POTRF 1/3, TRSM 1, SYRK 1,
GEMM 2, in units of NB^3 flops) and the tiles of the panel each rank receives (a tile
L(i, k), the diagonal one included, goes once to each other rank whose task reads it). Printed: the busiest rank's
work over the average, the tiles received (average and most) and the number of ranks
holding diagonal tiles. A count, not a measurement: the benchmarks say what it is worth.

    tools/rill_bench balance [NT] [PxQ ...]     (default 48 tile rows; 2x1 3x1 ... 4x4)
"""
import math
import sys


def grid_row(dist, i, j, P, Q):
    if dist == "diagonal":
        return (i + j) % P
    if dist == "skewed" and Q == 1:
        return (i + j + j // P) % P
    if dist == "skewed":
        return (i + i // (P * Q // math.gcd(P, Q))) % P
    return i % P


def count(dist, nt, P, Q):
    rank = lambda i, j: grid_row(dist, i, j, P, Q) * Q + j % Q
    work = [0.0] * (P * Q)
    recv = [set() for _ in range(P * Q)]
    for k in range(nt):
        work[rank(k, k)] += 1 / 3
        for i in range(k + 1, nt):  # L(k, k) to the panel's TRSMs
            if rank(i, k) != rank(k, k):
                recv[rank(i, k)].add((k, k))
        for i in range(k + 1, nt):
            src = rank(i, k)
            work[src] += 1  # TRSM writes L(i, k)
            readers = [(i, j) for j in range(k + 1, i + 1)] + [(m, i) for m in range(i + 1, nt)]
            for (a, b) in readers:  # SYRK on (i, i), GEMM on row i and column i
                if rank(a, b) != src:
                    recv[rank(a, b)].add((i, k))
            for j in range(k + 1, i + 1):
                work[rank(i, j)] += 1 if j == i else 2
    avg = sum(work) / len(work)
    diag = len({rank(k, k) for k in range(nt)})
    return max(work) / avg, sum(len(r) for r in recv) / len(recv), max(len(r) for r in recv), diag


def main(argv):
    """Print the table; 0, or 2 with a message on a bad argument."""
    if argv and not (argv[0].isdigit() and 1 <= int(argv[0]) <= 1000):
        print(f"rill_bench balance: error: NT must be a tile count in 1..1000, got '{argv[0]}'",
              file=sys.stderr)
        return 2
    nt = int(argv[0]) if argv else 48
    grids = argv[1:] or ["2x1", "3x1", "4x1", "2x2", "2x3", "3x2", "3x3", "2x4", "4x2",
                         "3x4", "4x3", "4x4"]
    for g in grids:
        p, _, q = g.partition("x")
        if not (p.isdigit() and q.isdigit() and 1 <= int(p) <= 64 and 1 <= int(q) <= 64):
            print(f"rill_bench balance: error: a grid is PxQ with P and Q in 1..64, got '{g}'",
                  file=sys.stderr)
            return 2
    print(f"tiled Cholesky, {nt} tile rows: busiest rank's work / average, tiles received "
          "(average, most), ranks with diagonal tiles")
    print("| grid | cyclic | diagonal | skewed |")
    print("| --- | --- | --- | --- |")
    for g in grids:
        P, Q = (int(x) for x in g.split("x"))
        cells = []
        for dist in ("cyclic", "diagonal", "skewed"):
            w, ravg, rmax, diag = count(dist, nt, P, Q)
            cells.append(f"{w:.3f}, {ravg:.0f} / {rmax}, {diag}")
        print(f"| {P} x {Q} | " + " | ".join(cells) + " |")
    return 0
