"""rill_bench: Rill's benchmark driver (tools/rill_bench) and its results report."""
