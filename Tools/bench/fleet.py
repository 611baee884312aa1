#!/usr/bin/env python3
"""Fleet: many hosts syncing through one PostgreSQL server.

Usage: Tools/bench/fleet.py [--hosts N] [--rows R] [--bursts B] [--quick]

Starts a throwaway PostgreSQL cluster and N client databases, each with its own `tandem app`
(N hosts simulated on this machine). Measures, with every host synced and idle, the server's
connections and the CPU of the server and of each owner; then every host writes R rows in B
bursts at once, and the time until every host holds all N x R rows (convergence); then the
change log's rows and bytes, before and after `tandem backend compact`.

  --quick   5 hosts, 100 rows each
"""
import argparse
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

from bench_support import build_tandem, cpu_seconds, stop_all, write_schema
from pg_cluster import Cluster

SCHEMA = {"tables": [{"name": "stress", "columns": [
    {"name": "writer", "type": "integer"}, {"name": "txn", "type": "integer"}, {"name": "row", "type": "integer"},
    {"name": "payload", "type": "text"}, {"name": "written_at", "type": "integer"}]}]}


def progress(message):
    sys.stderr.write(f"[fleet] {message}\n")
    sys.stderr.flush()


def cpu(pids):
    return sum(cpu_seconds(pid) or 0 for pid in pids)


def server_pids(cluster):
    try:
        main = int(open(os.path.join(cluster.dir, "data", "postmaster.pid")).readline())
    except (OSError, ValueError):
        return []
    children = subprocess.run(["pgrep", "-P", str(main)], capture_output=True, text=True).stdout.split()
    return [main] + [int(p) for p in children]


def count(db):
    try:
        connection = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
        n = connection.execute("SELECT count(*) FROM stress").fetchone()[0]
        connection.close()
        return n
    except sqlite3.Error:
        return -1


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--hosts", type=int, default=50)
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--bursts", type=int, default=10)
    parser.add_argument("--idle", type=float, default=10)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    if args.quick:
        args.hosts, args.rows, args.bursts, args.idle = 5, 100, 2, 2
    tandem = build_tandem(progress)
    work = tempfile.mkdtemp(prefix="tandem-fleet-")
    os.chmod(work, 0o755)
    os.mkdir(os.path.join(work, "pg"))
    cluster = Cluster(os.path.join(work, "pg"), f"-c max_connections={max(100, args.hosts * 3 + 20)}")
    apps = []
    try:
        schema = write_schema(work, SCHEMA)
        url = cluster.tandem_backend(tandem, "fleet", schema)
        hosts = [os.path.join(work, f"host{i:03d}.db") for i in range(args.hosts)]
        progress(f"starting {args.hosts} hosts")
        for db in hosts:
            subprocess.run([tandem, "init", db, "--schema", schema], check=True, stdout=subprocess.DEVNULL)
            apps.append(subprocess.Popen([tandem, "app", db, "--backend", url], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        deadline = time.time() + 120
        while time.time() < deadline:
            statuses = [subprocess.run([tandem, "status", db, "--json"], capture_output=True, text=True).stdout for db in hosts]
            if all('"has_synced":true' in s and '"owner_pid":null' not in s for s in statuses):
                break
            time.sleep(0.5)
        connections = cluster.psql("SELECT count(*) FROM pg_stat_activity WHERE datname = 'fleet'")
        progress(f"idle for {args.idle:.0f} s")
        app_pids = [app.pid for app in apps]
        servers = server_pids(cluster)
        before = (cpu(app_pids), cpu(servers), time.time())
        time.sleep(args.idle)
        after = (cpu(app_pids), cpu(servers), time.time())
        elapsed = after[2] - before[2]
        idle_app = 100 * (after[0] - before[0]) / elapsed / len(apps)
        idle_server = 100 * (after[1] - before[1]) / elapsed
        per_burst = max(1, args.rows // args.bursts)
        progress(f"every host writes {args.rows} rows in {args.bursts} bursts")
        started = time.time()
        busy_before = (cpu(app_pids), cpu(server_pids(cluster)))
        writers = [subprocess.Popen([tandem, "stress-writer", db, "--writer", str(i), "--transactions", str(args.bursts),
                                     "--rows-per-transaction", str(per_burst), "--interval-us", "100000"], stdout=subprocess.DEVNULL)
                   for i, db in enumerate(hosts)]
        for writer in writers:
            writer.wait()
        written = time.time() - started
        deadline = time.time() + 600
        converged = None
        while time.time() < deadline:
            if all(count(db) == args.bursts * per_burst * args.hosts for db in hosts):
                converged = time.time() - started
                break
            time.sleep(0.1)
        busy_after = (cpu(app_pids), cpu(server_pids(cluster)))
        log_before = cluster.psql("SELECT count(*) || ' ' || pg_total_relation_size('tandem_changes') FROM tandem_changes", "fleet").split()
        time.sleep(12)  # owners acknowledge their cursors at most every 10 s
        subprocess.run([tandem, "backend", "compact", url], capture_output=True)
        log_after = cluster.psql("SELECT count(*) || ' ' || pg_total_relation_size('tandem_changes') FROM tandem_changes", "fleet").split()
        print(f"## Fleet: {args.hosts} hosts on one PostgreSQL, {args.rows} rows each in {args.bursts} bursts\n")
        print("| measure | value |")
        print("| --- | --- |")
        print(f"| server connections (all hosts idle) | {connections} ({int(connections) / args.hosts:.1f} per host) |")
        print(f"| idle CPU: each owner | {idle_app:.2f} % of a core |")
        print(f"| idle CPU: the server (all its processes) | {idle_server:.2f} % of a core |")
        print(f"| rows written in all | {args.bursts * per_burst * args.hosts:,} (writers done in {written:.1f} s) |")
        print(f"| convergence (every host holds every row) | {'%.1f s' % converged if converged else 'not within 600 s'} |")
        print(f"| CPU while converging: owners, server | {busy_after[0] - busy_before[0]:.1f} s, {busy_after[1] - busy_before[1]:.1f} s |")
        print(f"| change log before compaction | {int(log_before[0]):,} changes, {int(log_before[1]) / 1e6:.1f} MB |")
        print(f"| change log after compaction | {int(log_after[0]):,} changes, {int(log_after[1]) / 1e6:.1f} MB |")
    finally:
        stop_all(apps)
        cluster.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
