#!/usr/bin/env python3
"""Soak: sync latency, CPU and memory at a constant load as the database grows.

Usage: Tools/bench/soak.py [--backend embedded|postgres|both] [--rate N] [--seconds S]
                           [--window ROWS] [--dashboard] [--slow-query MS] [--quick] [--plot FILE]
                           [--statements] [--tandem PATH]

Two clients A and B, each with `tandem app` (release build), sync through the embedded backend
(a server file) or PostgreSQL (a throwaway cluster, fsync off). One writer on A commits one row
every 1/N s through `db.write` (`tandem stress-writer --interval-us`) for S seconds; B's live
query over the `by_writer` index (`tandem watch`, constant cost) stamps each arrival. Prints, per
window of rows synced, the commit-on-A to row-on-B latency (p50, p90, p99, max) and each
process's CPU and memory (PostgreSQL's CPU: all its processes); the WAL, server and change-log
sizes at the end.

  --dashboard     also a live query on A that scans the table (count and max), as a dashboard does
  --slow-query MS a live query on B that takes about MS milliseconds per run (a recursive CTE),
                  to show that slow queries coalesce: its runs are counted against the commits
  --rate 0        one writer as fast as it commits (a saturating writer) for S seconds
  --quick         15 s at 200 commits/s, windows of 1,000 rows (CI)
  --plot FILE     latency against rows synced, as a PNG (needs matplotlib)
  --statements    PostgreSQL: the statements that took the most time in all (pg_stat_statements)
  --tandem PATH   a built `tandem` to time instead of this tree's release build (another release's,
                  for a side-by-side comparison: run both, alternating)
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

from bench_support import build_tandem, cpu_seconds, now_us, percentile, rss_mb, stop_all, write_schema
from pg_cluster import Cluster

SCHEMA = {"tables": [{"name": "stress", "columns": [
    {"name": "writer", "type": "integer"}, {"name": "txn", "type": "integer"}, {"name": "row", "type": "integer"},
    {"name": "payload", "type": "text"}, {"name": "written_at", "type": "integer"}],
    "indexes": [{"name": "by_writer", "columns": ["writer", "txn"]}]}]}
PROBE = "SELECT max(txn) AS txn FROM stress WHERE writer = 0"
DASHBOARD = "SELECT count(*) AS n, max(written_at) AS newest FROM stress"


def progress(message):
    sys.stderr.write(f"[soak] {message}\n")
    sys.stderr.flush()


def size(path):
    return sum(os.path.getsize(p) for p in (path, path + "-wal") if os.path.exists(p))


class Stamped:
    """A `tandem watch --mode ndjson` whose lines are stamped on arrival."""

    def __init__(self, argv):
        self.lines = []
        self.process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        threading.Thread(target=self.read, daemon=True).start()

    def read(self):
        for line in self.process.stdout:
            rows = json.loads(line)
            self.lines.append((now_us(), rows[0] if rows else {}))


def host_wakeups(rounds=1000, interval=0.002):
    """The host's own wake-up latency: two processes pass a byte back and forth over pipes, one
    round (two wake-ups) every `interval` seconds; returns the round trips' p50, p99 and max in
    ms. A commit's way from A to B's live query takes about ten such wake-ups through
    PostgreSQL (six through the embedded backend), so their tail bounds the paced p99 from below."""
    there, back = os.pipe(), os.pipe()
    child = os.fork()
    if child == 0:
        os.close(there[1]); os.close(back[0])
        while os.read(there[0], 1):
            os.write(back[1], b"x")
        os._exit(0)
    os.close(there[0]); os.close(back[1])
    trips = []
    for _ in range(rounds):
        time.sleep(interval)
        started = time.perf_counter()
        os.write(there[1], b"x")
        os.read(back[0], 1)
        trips.append((time.perf_counter() - started) * 1000)
    os.close(there[1])
    os.waitpid(child, 0)
    os.close(back[0])
    return percentile(trips, 50), percentile(trips, 99), max(trips)


def run(backend, args, tandem, work):
    wakeups = host_wakeups()  # before any thread starts here (the probe forks)
    directory = os.path.join(work, backend)
    os.mkdir(directory)
    os.chmod(directory, 0o755)
    schema = write_schema(directory, SCHEMA)
    cluster = None
    if backend == "postgres":
        os.mkdir(os.path.join(directory, "pg"))
        cluster = Cluster(os.path.join(directory, "pg"),
                          "-c shared_preload_libraries=pg_stat_statements" if args.statements else "")
        url = cluster.tandem_backend(tandem, "soak", schema)
        if args.statements:
            cluster.psql("CREATE EXTENSION pg_stat_statements", "soak")
    else:
        url = "sqlite:" + os.path.join(directory, "server.db")
    a, b = os.path.join(directory, "a.db"), os.path.join(directory, "b.db")
    processes = []
    try:
        for db in (a, b):
            subprocess.run([tandem, "init", db, "--schema", schema], check=True, stdout=subprocess.DEVNULL)
        apps = {name: subprocess.Popen([tandem, "app", db, "--backend", url, "--json"], stdout=subprocess.DEVNULL)
                for name, db in (("app A", a), ("app B", b))}
        processes += apps.values()
        probe = Stamped([tandem, "watch", b, PROBE, "--mode", "ndjson"])
        processes.append(probe.process)
        watched = {"app A": apps["app A"].pid, "app B": apps["app B"].pid, "watch B": probe.process.pid}
        dashboard = slow = None
        if args.dashboard:
            dashboard = Stamped([tandem, "watch", a, DASHBOARD, "--mode", "ndjson"])
            processes.append(dashboard.process)
            watched["dashboard A"] = dashboard.process.pid
        if args.slow_query:
            # About MS ms per run: a recursive count whose depth was timed on this machine below.
            depth = calibrate(tandem, b, args.slow_query)
            slow = Stamped([tandem, "watch", b, slow_sql(depth), "--mode", "ndjson"])
            processes.append(slow.process)
            watched["slow query B"] = slow.process.pid
        deadline = time.time() + 30
        while not probe.lines and time.time() < deadline:
            time.sleep(0.01)
        # --rate 0: one writer as fast as it commits (a saturating writer), for --seconds.
        total = int(args.seconds * args.rate) if args.rate > 0 else 100_000_000
        samples = []  # (index reached, {name: (cpu, rss)})
        loads = []  # (index reached, the machine's 1-minute load average): other work shows here
        writer = subprocess.Popen([tandem, "stress-writer", a, "--writer", "0", "--transactions", str(total),
                                   "--interval-us", str(int(1e6 / args.rate) if args.rate > 0 else 0)], stdout=subprocess.PIPE, text=True)
        if args.rate <= 0:
            threading.Timer(args.seconds, writer.terminate).start()
        processes.append(writer)
        commits = {}
        last_sample = 0

        def sample():
            # The server's CPU is its processes' together (the postmaster with its children).
            taken = {name: (cpu_seconds(pid), rss_mb(pid)) for name, pid in watched.items()}
            if cluster:
                taken["server"] = (cluster.cpu_seconds(), None)
            return taken

        progress(f"{backend}: " + (f"{total:,} commits at {args.rate}/s" if args.rate > 0 else f"one writer as fast as it commits for {args.seconds} s"))
        committed = {}  # index -> when its COMMIT returned (`commits` holds when it began)
        for line in writer.stdout:
            index, start, commit = (int(x) for x in line.split())
            commits[index] = start
            committed[index] = commit
            if time.time() - last_sample >= 1:
                last_sample = time.time()
                samples.append((index, sample()))
                loads.append((index, os.getloadavg()[0]))
        writer.wait()
        total = max(commits) + 1 if commits else 0
        deadline = time.time() + 120
        while time.time() < deadline and not any((row.get("txn") or -1) >= total - 1 for _, row in probe.lines[-3:]):
            time.sleep(0.05)
        samples.append((total, sample()))
        latencies, from_commit = [], []
        arrivals = [(at, row.get("txn")) for at, row in probe.lines if row.get("txn") is not None]
        cursor = 0
        for index in range(total):
            start = commits.get(index)
            while cursor < len(arrivals) and (arrivals[cursor][1] < index or arrivals[cursor][0] < start):
                cursor += 1
            if start is not None and cursor < len(arrivals):
                latencies.append((index, (arrivals[cursor][0] - start) / 1000))
                from_commit.append((index, (arrivals[cursor][0] - committed[index]) / 1000))
        # "latencies" run from the transaction's start (lock wait and the transaction included),
        # "from_commit" from the instant its COMMIT returned on A.
        result = {"backend": backend, "latencies": latencies, "from_commit": from_commit, "samples": samples, "total": total, "loads": loads, "wakeups": wakeups,
                  "sizes": {"A (file and WAL)": size(a), "B (file and WAL)": size(b)}}
        if backend == "embedded":
            result["sizes"]["server (file and WAL)"] = size(os.path.join(directory, "server.db"))
        else:
            result["sizes"]["change log (tandem_changes)"] = int(cluster.psql("SELECT pg_total_relation_size('tandem_changes')", "soak"))
        if slow:
            gaps = sorted(b[0] - a[0] for a, b in zip(slow.lines, slow.lines[1:]))
            result["slow"] = (len(slow.lines), total, gaps[len(gaps) // 2] / 1000 if gaps else float("nan"))
        if cluster and args.statements:
            result["statements"] = cluster.psql(
                "SELECT round(total_exec_time)::text || ' ms | ' || calls || ' | ' || round((total_exec_time / calls)::numeric, 3) || ' ms | '"
                " || left(regexp_replace(query, '\\s+', ' ', 'g'), 160) FROM pg_stat_statements ORDER BY total_exec_time DESC LIMIT 12", "soak")
        return result
    finally:
        stop_all(processes)
        if cluster:
            cluster.stop()


def slow_sql(depth):
    return (f"WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {depth}) "
            "SELECT count(*) AS n, (SELECT max(txn) FROM stress) AS txn FROM n")


def calibrate(tandem, db, milliseconds):
    """The recursion depth whose query takes about `milliseconds`: two depths timed as whole
    `tandem query` processes, so that the process's own start-up cancels out."""
    def timed(depth):
        best = float("inf")
        for _ in range(3):
            started = time.time()
            subprocess.run([tandem, "query", db, slow_sql(depth)], check=True, capture_output=True)
            best = min(best, time.time() - started)
        return best
    low, high = 50_000, 400_000
    per_row = max((timed(high) - timed(low)) / (high - low), 1e-9)
    return max(1000, int(milliseconds / 1000 / per_row))


def report(result, window):
    out = []
    out.append(f"### {result['backend']}\n")
    names = list(result["samples"][0][1].keys()) if result["samples"] else []
    processes = [n for n in names if n != "server"]  # the server's memory is shared: none given
    out.append("| rows synced | p50 ms | p90 ms | p99 ms | max ms | " + " | ".join(f"{n} CPU %" for n in names) + " | "
               + " | ".join(f"{n} MB" for n in processes) + " | load |")
    out.append("| --- " * (6 + len(names) + len(processes)) + "|")
    samples = result["samples"]
    for first in range(0, result["total"], window):
        last = min(first + window, result["total"])
        values = [ms for index, ms in result["latencies"] if first <= index < last]
        inside = [s for s in samples if first <= s[0] <= last]
        cpu, rss = [], []
        for name in names:
            if len(inside) >= 2 and inside[0][1][name][0] is not None and inside[-1][1][name][0] is not None:
                seconds = (len(inside) - 1) or 1
                cpu.append(f"{100 * (inside[-1][1][name][0] - inside[0][1][name][0]) / seconds:.1f}")
            else:
                cpu.append("-")
            if name in processes:
                rss.append(f"{inside[-1][1][name][1]:.0f}" if inside and inside[-1][1][name][1] else "-")
        load = [value for index, value in result.get("loads", []) if first <= index <= last]
        out.append(f"| {first:,}–{last:,} | {percentile(values, 50):.1f} | {percentile(values, 90):.1f} | {percentile(values, 99):.1f} | "
                   f"{max(values) if values else float('nan'):.1f} | " + " | ".join(cpu) + " | " + " | ".join(rss)
                   + f" | {sum(load) / len(load) if load else float('nan'):.1f} |")
    out.append("")
    out.append("Sizes at the end: " + ", ".join(f"{k} {v / 1e6:.1f} MB" for k, v in result["sizes"].items()) + ".")
    if result.get("wakeups"):
        p50, p99, most = result["wakeups"]
        out.append(f"The host's wake-ups just before the run (two processes passing a byte over pipes every 2 ms, a round trip"
                   f" being two wake-ups): p50 {p50:.2f} ms, p99 {p99:.2f} ms, max {most:.1f} ms.")
    if "statements" in result:
        out.append("\n| total | calls | mean | statement |\n| --- | --- | --- | --- |")
        out += [f"| {line} |" for line in result["statements"].splitlines()]
    if "slow" in result:
        runs, commits, gap = result["slow"]
        out.append(f"The slow live query on B delivered {runs:,} results for {commits:,} commits, one every {gap:.1f} ms (median):"
                   " each run covers every commit that arrived during the one before.")
    out.append("")
    return "\n".join(out)


def plot(results, path, window):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        progress("no matplotlib: no plot")
        return
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for result in results:
        for p, style in ((50, "-"), (99, "--")):
            xs, ys = [], []
            for first in range(0, result["total"], window):
                values = [ms for index, ms in result["latencies"] if first <= index < first + window]
                if values:
                    xs.append(first + window / 2)
                    ys.append(percentile(values, p))
            ax.plot(xs, ys, style, label=f"{result['backend']} p{p}")
    ax.set_xlabel("rows synced")
    ax.set_ylabel("commit on A → row on B (ms)")
    ax.set_yscale("log")
    ax.legend()
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    progress(f"plot: {path}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--backend", default="both", choices=["embedded", "postgres", "both"])
    parser.add_argument("--rate", type=float, default=200)
    parser.add_argument("--seconds", type=float, default=300)
    parser.add_argument("--window", type=int, default=10_000)
    parser.add_argument("--dashboard", action="store_true")
    parser.add_argument("--slow-query", type=float, default=0)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--plot")
    parser.add_argument("--statements", action="store_true")
    parser.add_argument("--tandem", help="a built tandem to time instead of this tree's release build (another release's, side by side)")
    args = parser.parse_args()
    if args.quick:
        args.seconds, args.rate, args.window = 15, 200, 1000
    tandem = build_tandem(progress, args.tandem)
    work = tempfile.mkdtemp(prefix="tandem-soak-")
    os.chmod(work, 0o755)
    try:
        backends = ["embedded", "postgres"] if args.backend == "both" else [args.backend]
        results = [run(backend, args, tandem, work) for backend in backends]
        print(f"## Soak: {f'{args.rate:.0f} commits/s' if args.rate > 0 else 'a saturating writer'} for {args.seconds:.0f} s\n")
        for result in results:
            print(report(result, args.window))
        if args.plot:
            plot(results, args.plot, args.window)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
