#!/usr/bin/env python3
"""Drain: how fast a backlog of queued transactions reaches another client, against the server's
own ingest of the same rows.

Usage: Tools/bench/drain.py [--backend embedded|postgres|both] [--sizes N,N,...] [--rows R] [--quick]
                           [--repeat K] [--tandem PATH]

For each backlog size N: N transactions of R rows are written on client A while no app runs (the
upload queue holds them), then `tandem app` starts on A and on B and the time until B's live query
(`tandem watch`, count of rows) shows all N x R rows is the drain time. The server exists before
(PostgreSQL's set up with `tandem backend setup`, the embedded backend's file made by a third
client's `tandem sync`), as it does when a host's apps start again. Beside it, in the same
invocation and just before the apps start (so that both are timed under the same load on a
shared machine), the server takes the same rows itself: PostgreSQL in one multi-row INSERT through
Tandem's change-log triggers; the embedded backend's file in one SQLite transaction writing
`server_rows` and `server_changes` as an upload does. Prints rows/s for both and their ratio, and
the CPU seconds the two apps and the PostgreSQL server spent during the drain (the embedded
backend's server work runs in app A).

  --quick   sizes 1,000 and 5,000, one row each
  --repeat  K drains and ingests of each size, each pair on new files, for the medians (the
            table then gives the median drain and ingest, and the ratio's median and range
            over the K pairs): a drain of 1,000 lasts about 50 ms, where noise is a large part
  --tandem  a built `tandem` to time instead of this tree's release build (another release's, for
            a side-by-side comparison: run both, alternating)
"""
import argparse
import json
import os
import shutil
import statistics
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time

from bench_support import build_tandem, cpu_seconds, stop_all
from pg_cluster import Cluster

SCHEMA = {"tables": [{"name": "stress", "columns": [
    {"name": "writer", "type": "integer"}, {"name": "txn", "type": "integer"}, {"name": "row", "type": "integer"},
    {"name": "payload", "type": "text"}, {"name": "written_at", "type": "integer"}],
    "indexes": [{"name": "by_writer", "columns": ["writer", "txn"]}]}]}
PAYLOAD = "x" * 32


def progress(message):
    sys.stderr.write(f"[drain] {message}\n")
    sys.stderr.flush()


def drain(tandem, directory, url, transactions, rows, ingest, cluster=None):
    """Seconds from starting the apps until B's live query shows every row, the seconds of
    `ingest()` (the server's own ingest, run just before the apps start, so that the two are
    timed under the same load on a shared machine), and the CPU seconds A's app, B's app and
    the server (PostgreSQL) spent during the drain."""
    schema = os.path.join(directory, "schema.json")
    a, b = os.path.join(directory, "a.db"), os.path.join(directory, "b.db")
    for db in (a, b):
        subprocess.run([tandem, "init", db, "--schema", schema], check=True, stdout=subprocess.DEVNULL)
    subprocess.run([tandem, "stress-writer", a, "--writer", "0", "--transactions", str(transactions),
                    "--rows-per-transaction", str(rows)], check=True, stdout=subprocess.DEVNULL)
    if url.startswith("sqlite:"):
        # The server file is there before the apps start, as PostgreSQL's server side is
        # (`tandem backend setup`): the drain does not include creating it.
        make_server_file(tandem, directory, url)
    total = transactions * rows
    seen = threading.Event()
    watcher = subprocess.Popen([tandem, "watch", b, "SELECT count(*) AS n FROM stress", "--mode", "ndjson"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)

    def read():
        for line in watcher.stdout:
            result = json.loads(line)
            if result and result[0].get("n") == total:
                seen.set()
    threading.Thread(target=read, daemon=True).start()
    time.sleep(0.3)
    ingested = ingest()
    server_before = cluster.cpu_seconds() if cluster else 0
    started = time.time()
    apps = [subprocess.Popen([tandem, "app", db, "--backend", url], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            for db in (a, b)]
    try:
        if not seen.wait(timeout=1800):
            raise RuntimeError(f"B never showed {total} rows")
        took = time.time() - started
        cpu = [cpu_seconds(app.pid) or 0 for app in apps] + [cluster.cpu_seconds() - server_before if cluster else 0]
        return took, ingested, cpu
    finally:
        stop_all(apps + [watcher], timeout=30)


def make_server_file(tandem, directory, url):
    """Makes the embedded backend's server file `url` names, by a `tandem sync` of a new client."""
    client = os.path.join(directory, "setup-" + os.path.basename(url.split(":", 1)[1]))
    subprocess.run([tandem, "init", client, "--schema", os.path.join(directory, "schema.json")], check=True, stdout=subprocess.DEVNULL)
    subprocess.run([tandem, "sync", client, "--backend", url], check=True, stdout=subprocess.DEVNULL)


def embedded_ingest(directory, tandem, total):
    """The same rows written straight into a new server file: server_rows and server_changes, one
    transaction. Makes the file now and returns the ingest to time (seconds)."""
    server = os.path.join(directory, "ingest-server.db")
    make_server_file(tandem, directory, "sqlite:" + server)
    return lambda: embedded_ingest_into(server, total)


def embedded_ingest_into(server, total):
    db = sqlite3.connect(server, isolation_level=None)
    db.execute("PRAGMA busy_timeout=5000")
    started = time.time()
    db.execute("BEGIN IMMEDIATE")
    for i in range(total):
        data = json.dumps({"writer": 0, "txn": i, "row": 0, "payload": PAYLOAD, "written_at": i}, separators=(",", ":"))
        db.execute("INSERT OR REPLACE INTO server_rows(type, id, data) VALUES ('stress', ?, json(?))", (f"i{i}", data))
        db.execute("INSERT INTO server_changes(txn, op, type, id, data) VALUES (?, 'PUT', 'stress', ?, json(?))", (i + 1, f"i{i}", data))
    db.execute("COMMIT")
    took = time.time() - started
    db.close()
    return took


def postgres_ingest(cluster, database, total):
    sql = (f"INSERT INTO stress(id, writer, txn, row, payload, written_at) "
           f"SELECT 'i' || i, 0, i, 0, '{PAYLOAD}', i FROM generate_series(1, {total}) i")
    started = time.time()
    cluster.psql(sql, database)
    return time.time() - started


def drain_and_ingest(tandem, cluster, work, backend, size, args, attempt):
    """One drain of `size` transactions and the server's ingest of the same rows, on new files:
    (drain seconds, ingest seconds, CPU seconds of app A, app B and the server)."""
    directory = os.path.join(work, f"{backend}-{size}-{attempt}")
    os.mkdir(directory)
    os.chmod(directory, 0o755)
    with open(os.path.join(directory, "schema.json"), "w") as f:
        json.dump(SCHEMA, f)
    total = size * args.rows
    if backend == "postgres":
        name = f"drain_{size}_{attempt}"
        cluster.psql(f"CREATE DATABASE {name}")
        cluster.psql(f"CREATE DATABASE {name}_ingest")
        for db in (name, name + "_ingest"):
            subprocess.run([tandem, "backend", "setup", cluster.url(db), "--schema", os.path.join(directory, "schema.json")],
                           check=True, stdout=subprocess.DEVNULL)
        ingest = lambda: postgres_ingest(cluster, name + "_ingest", total)
        if args.statements:
            cluster.psql("CREATE EXTENSION IF NOT EXISTS pg_stat_statements", name)
            cluster.psql("SELECT pg_stat_statements_reset()", name)
        url = cluster.url(name)
    else:
        ingest = embedded_ingest(directory, tandem, total)
        url = "sqlite:" + os.path.join(directory, "server.db")
    progress(f"{backend}: {size:,} transactions of {args.rows} row(s)" + (f", run {attempt + 1} of {args.repeat}" if args.repeat > 1 else ""))
    took, ingested, cpu = drain(tandem, directory, url, size, args.rows, ingest, cluster if backend == "postgres" else None)
    if backend == "postgres" and args.statements:
        print(cluster.psql("SELECT round(total_exec_time)::text || ' ms | ' || calls || ' | ' || left(regexp_replace(query, '\\s+', ' ', 'g'), 150)"
                           " FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())"
                           " ORDER BY total_exec_time DESC LIMIT 12", name))
    return took, ingested, cpu


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--backend", default="both", choices=["embedded", "postgres", "both"])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--rows", type=int, default=1)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--tandem", help="a built tandem to time instead of this tree's release build")
    parser.add_argument("--statements", action="store_true", help="PostgreSQL: the statements that took the most time (pg_stat_statements)")
    args = parser.parse_args()
    if args.quick:
        args.sizes, args.rows = "1000,5000", 1
    sizes = [int(n) for n in args.sizes.split(",")]
    tandem = build_tandem(progress, args.tandem)
    work = tempfile.mkdtemp(prefix="tandem-drain-")
    os.chmod(work, 0o755)
    cluster = None
    results = []
    try:
        backends = ["embedded", "postgres"] if args.backend == "both" else [args.backend]
        if "postgres" in backends:
            os.mkdir(os.path.join(work, "pg"))
            cluster = Cluster(os.path.join(work, "pg"), "-c shared_preload_libraries=pg_stat_statements" if args.statements else "")
        for backend in backends:
            for size in sizes:
                pairs = [drain_and_ingest(tandem, cluster, work, backend, size, args, attempt) for attempt in range(args.repeat)]
                results.append((backend, size, size * args.rows, pairs))
        print(f"## Drain: a backlog of single-writer transactions ({args.rows} row(s) each) reaching another client\n")
        repeated = args.repeat > 1
        print("| backend | transactions | rows | drain s | drain rows/s | server ingest rows/s | ratio | "
              + ("ratio range | " if repeated else "") + "CPU s: app A, app B, server |")
        print("| --- " * (9 if repeated else 8) + "|")
        for backend, size, total, pairs in results:
            took = statistics.median(p[0] for p in pairs)
            ingest = statistics.median(p[1] for p in pairs)
            cpu = [statistics.median(p[2][i] for p in pairs) for i in range(3)]
            ratios = [p[1] / p[0] for p in pairs]
            used = f"{cpu[0]:.2f}, {cpu[1]:.2f}, " + (f"{cpu[2]:.2f}" if backend == "postgres" else "(in A)")
            spread = f"{min(ratios):.2f}–{max(ratios):.2f}x | " if repeated else ""
            print(f"| {backend} | {size:,} | {total:,} | {took:.3f} | {total / took:,.0f} | {total / ingest:,.0f} | "
                  f"{statistics.median(ratios):.2f}x | {spread}{used} |")
    finally:
        if cluster:
            cluster.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
