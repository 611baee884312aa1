#!/usr/bin/env python3
"""Plots drain runs (the table `Tools/bench/drain.py` prints) against the backlog's size.

Usage: Tools/bench/plot_drain.py OUT.png DRAIN_OUTPUT.md

Left: rows per second, the drain's (until B shows every row) and the server's own ingest of the
same rows, per backend. Right: the drain's time, which is how far B lags behind A's backlog when
the apps start. Both on logarithmic axes, drawn from the table as printed, so a run's plot can be
drawn again later.
"""
import re
import sys


def rows(path):
    """{backend: [(rows, drain seconds, drain rows/s, ingest rows/s)]} from a drain output."""
    result = {}
    for line in open(path):
        row = re.match(r"\| (\w+) \| [\d,]+ \| ([\d,]+) \| ([\d.]+) \| ([\d,]+) \| ([\d,]+) \|", line)
        if row:
            numbers = [float(row.group(i).replace(",", "")) for i in (2, 3, 4, 5)]
            result.setdefault(row.group(1), []).append(tuple(numbers))
    return result


def main():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    out, path = sys.argv[1], sys.argv[2]
    fig, (rates, times) = plt.subplots(1, 2, figsize=(11, 4.5))
    for backend, points in rows(path).items():
        xs = [p[0] for p in points]
        line = rates.plot(xs, [p[2] for p in points], "-o", markersize=4, label=f"{backend}: drain")[0]
        rates.plot(xs, [p[3] for p in points], "--o", markersize=4, color=line.get_color(), label=f"{backend}: server's own ingest")
        times.plot(xs, [p[1] for p in points], "-o", markersize=4, color=line.get_color(), label=backend)
    for ax in (rates, times):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("backlog (single-row transactions queued on A)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
    rates.set_ylabel("rows/s")
    rates.set_title("Drain rate against the server's own ingest")
    times.set_ylabel("seconds until B shows every row")
    times.set_title("B's lag behind the backlog")
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    main()
