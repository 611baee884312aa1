#!/usr/bin/env python3
"""PostgreSQL feed: delivery latency with a write transaction held open, and the change log's size.

Usage: Tools/bench/pg_feed.py [--hold SECONDS] [--updates N] [--rows R]

  --hold     how long a write transaction stays open (default 60 s; one in the synced database
             holding a row, one in another database of the cluster)
  --updates  updates per row for the log-size part (default 1000)
  --rows     rows for the log-size part (default 1000: 1,000,000 updates in all)

Starts a throwaway PostgreSQL cluster (as the postgres user when run as root), builds the release
`tandem`, runs two clients A and B, each with `tandem app`, and a writer on A committing one row
every 100 ms; B's `tandem watch` stamps each arrival. Prints latency percentiles before and while
the transaction is held open, how late the held row arrives after its commit, then the change
log's rows and bytes after the updates, after compaction, after deleting every row, and after
compaction again. See BENCHMARKS.md.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from bench_support import build_tandem, now_us, percentile, stop_all, write_schema
from pg_cluster import Cluster

SCHEMA = {"tables": [{"name": "stress", "columns": [
    {"name": "writer", "type": "integer"}, {"name": "txn", "type": "integer"}, {"name": "row", "type": "integer"},
    {"name": "payload", "type": "text"}, {"name": "written_at", "type": "integer"}]},
    {"name": "counters", "columns": [{"name": "n", "type": "integer"}]}]}


def progress(message):
    sys.stderr.write(f"[pg-feed] {message}\n")
    sys.stderr.flush()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--hold", type=float, default=60)
    parser.add_argument("--updates", type=int, default=1000)
    parser.add_argument("--rows", type=int, default=1000)
    args = parser.parse_args()
    tandem = build_tandem(progress)
    work = tempfile.mkdtemp(prefix="tandem-pg-feed-")
    os.chmod(work, 0o755)
    cluster = Cluster(work)
    processes = []
    try:
        schema = write_schema(work, SCHEMA)
        url = cluster.tandem_backend(tandem, "feed", schema)
        a, b = f"{work}/a.db", f"{work}/b.db"
        for db in (a, b):
            subprocess.run([tandem, "init", db, "--schema", schema], check=True, stdout=subprocess.DEVNULL)
            processes.append(subprocess.Popen([tandem, "app", db, "--backend", url, "--json"], stdout=subprocess.DEVNULL))
        lines = []
        watcher = subprocess.Popen([tandem, "watch", b, "SELECT max(txn) AS txn FROM stress", "--mode", "ndjson"],
                                   stdout=subprocess.PIPE, text=True)
        processes.append(watcher)
        import threading

        def read_watcher():
            for line in watcher.stdout:
                rows = json.loads(line)
                lines.append((now_us(), rows[0].get("txn") if rows else None))
        threading.Thread(target=read_watcher, daemon=True).start()

        baseline = 20.0
        total = int((baseline + args.hold) * 10)
        writer = subprocess.Popen([tandem, "stress-writer", a, "--writer", "0", "--transactions", str(total), "--interval-us", "100000"],
                                  stdout=subprocess.PIPE, text=True)
        commits = {}
        hold_started = None
        held = elsewhere = None
        for line in writer.stdout:
            index, start, _ = (int(x) for x in line.split())
            commits[index] = start
            if hold_started is None and index >= baseline * 10:
                progress(f"holding two write transactions open for {args.hold:.0f} s")
                held = cluster.session("feed")
                held.stdin.write("BEGIN;\nINSERT INTO counters(id, n) VALUES ('held', 1);\n")
                held.stdin.flush()
                elsewhere = cluster.session("postgres")
                elsewhere.stdin.write("BEGIN;\nSELECT pg_current_xact_id();\n")
                elsewhere.stdin.flush()
                hold_started = now_us()
        writer.wait()

        held.stdin.write("COMMIT;\n")
        held.stdin.flush()
        committed_at = now_us()
        elsewhere.stdin.write("COMMIT;\n")
        elsewhere.stdin.flush()
        deadline = time.time() + 30
        held_arrived = None
        while time.time() < deadline:
            out = subprocess.run([tandem, "query", b, "SELECT count(*) AS n FROM counters WHERE id = 'held'", "--mode", "csv", "--no-header"],
                                 capture_output=True, text=True).stdout.strip()
            if out == "1":
                held_arrived = now_us()
                break
            time.sleep(0.005)
        time.sleep(1)

        def latencies(first, last):
            result = []
            for index in range(first, last):
                start = commits.get(index)
                arrival = next((at for at, txn in lines if txn is not None and txn >= index and at >= start), None)
                if start is not None and arrival is not None:
                    result.append((arrival - start) / 1000)
            return result
        before = latencies(10, int(baseline * 10))
        during = latencies(int(baseline * 10) + 5, total)
        print("## Delivery A -> B with write transactions held open (one row every 100 ms on A)\n")
        print("| phase | rows | p50 ms | p99 ms | max ms |")
        print("| --- | --- | --- | --- | --- |")
        for name, values in (("nothing held open", before), (f"held open {args.hold:.0f} s (this database and another)", during)):
            print(f"| {name} | {len(values)} | {percentile(values, 50):.1f} | {percentile(values, 99):.1f} | {max(values):.1f} |")
        print(f"\nThe held transaction's row reached B {((held_arrived or 0) - committed_at) / 1000:.1f} ms after its commit"
              f"{'' if held_arrived else ' (never, within 30 s)'}.\n")

        progress(f"log size: {args.rows} rows x {args.updates} updates")
        cluster.psql(f"INSERT INTO counters(id, n) SELECT 'c' || i, 0 FROM generate_series(1, {args.rows}) i", "feed")
        size_sql = "SELECT count(*) || ' ' || pg_total_relation_size('tandem_changes') FROM tandem_changes"
        started = time.time()
        # One transaction per update statement, fifty statements per psql.
        for chunk in range(0, args.updates, 50):
            statements = "".join(f"UPDATE counters SET n = {i + 1} WHERE id LIKE 'c%';\n" for i in range(chunk, min(args.updates, chunk + 50)))
            subprocess.run([f"{cluster.bin}/psql", "-qAt", "-v", "ON_ERROR_STOP=1", "-d", url], input=statements, text=True,
                           check=True, stdout=subprocess.DEVNULL)
        progress(f"{args.rows * args.updates} updates in {time.time() - started:.1f} s")
        rows = {}

        def settle_and_measure(label):
            rows[label + ", before compaction"] = cluster.psql(size_sql, "feed")
            deadline = time.time() + 600
            expected = cluster.psql("SELECT count(*) || ':' || coalesce(sum(n), 0) FROM counters", "feed")
            while time.time() < deadline:
                got = subprocess.run([tandem, "query", b, "SELECT count(*) || ':' || coalesce(sum(n), 0) FROM counters", "--mode", "csv",
                                      "--no-header"], capture_output=True, text=True).stdout.strip()
                if got == expected:
                    break
                time.sleep(0.2)
            time.sleep(12)  # clients acknowledge their cursors at most every 10 s
            compacted = subprocess.run([tandem, "backend", "compact", url], capture_output=True, text=True).stdout.strip()
            progress(compacted)
            rows[label + ", after compaction"] = cluster.psql(size_sql, "feed")
        settle_and_measure(f"{args.rows * args.updates:,} updates to {args.rows:,} rows")
        cluster.psql("DELETE FROM counters", "feed")
        settle_and_measure("then every row deleted")
        print("## The change log's size\n")
        print("| state | changes | bytes (table and indexes) |")
        print("| --- | --- | --- |")
        for label, value in rows.items():
            count, size = value.split()
            print(f"| {label} | {int(count):,} | {int(size):,} |")
    finally:
        stop_all(processes)
        cluster.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
