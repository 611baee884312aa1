#!/usr/bin/env python3
"""`tandem verify` of a large synced table, on both backends, beside a full download of it.

Usage: Tools/bench/verify.py [--rows N] [--quick] [--tandem PATH]

A client and its server hold the same N rows of `notes(title text, n integer, r real, body text)`
(written straight into both, so that preparing takes seconds: a one-row sync first gives the
client its cursor). Per backend (embedded `sqlite:` file; PostgreSQL in a throwaway cluster):

- verify of a client that agrees: wall time, the `tandem verify` process's CPU, round trips,
  payload bytes moved, time inside backend calls (on PostgreSQL: the server computing checksums);
- the same with 10 rows changed behind the capture on the client;
- a full download of the same rows by a new client (`tandem sync`), for scale: what verifying
  spares;
- what background verification at `tandem app`'s default interval (15 minutes) costs an idle
  owner: the CPU of one verification that agrees (the client process's, plus on PostgreSQL the
  time inside backend calls, the server's work), per 900 s, in % of a core.
"""
import argparse
import json
import os
import resource
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

from bench_support import build_tandem, write_schema
from pg_cluster import Cluster

SCHEMA = {"tables": [{"name": "notes", "columns": [{"name": "title", "type": "text"}, {"name": "n", "type": "integer"},
                                                    {"name": "r", "type": "real"}, {"name": "body", "type": "text"}]}]}


def progress(message):
    sys.stderr.write(f"[verify] {message}\n")
    sys.stderr.flush()


def rows(n):
    """(id, the row as Tandem's JSON): reals written by Python's shortest round-trip form, as
    Tandem writes them (SQLite's json_object would keep 15 digits only)."""
    for i in range(1, n + 1):
        yield (f"row-{i:08d}", json.dumps({"title": f"Note Number {i}", "n": i, "r": i / 7, "body": "body text " * 5}))


def timed(argv):
    """Runs argv; (wall seconds, CPU seconds of the child, stdout)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    result = subprocess.run(argv, capture_output=True, text=True)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode not in (0, 3):
        raise RuntimeError(f"{' '.join(argv)}: {result.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, result.stdout


def fill_client(path, n):
    with sqlite3.connect(path) as db:
        db.executemany("INSERT INTO ps_data__notes(id, data) VALUES (?, ?)", rows(n))
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def prepare(tandem, directory, name, url, n, fill_server):
    """A client that synced one row (its cursor), then N rows written into it and the server alike."""
    schema = write_schema(directory, SCHEMA)
    client = os.path.join(directory, f"{name}.db")
    subprocess.run([tandem, "init", client, "--schema", schema], check=True, capture_output=True)
    subprocess.run([tandem, "exec", client, "INSERT INTO notes(id, title) VALUES ('row-00000000', 'first')"], check=True, capture_output=True)
    subprocess.run([tandem, "sync", client, "--backend", url], check=True, capture_output=True)
    fill_client(client, n)
    fill_server(n, client)
    return client, schema


def measure(tandem, directory, name, url, n, fill_server):
    progress(f"{name}: preparing {n:,} rows")
    client, schema = prepare(tandem, directory, name, url, n, fill_server)
    results = {}
    wall, cpu, out = timed([tandem, "verify", client, "--backend", url, "--json"])
    report = json.loads(out)
    if not report["agrees"]:
        raise RuntimeError(f"{name}: the prepared client does not agree: {out[:400]}")
    results["agrees"] = (wall, cpu, report)
    with sqlite3.connect(client) as db:
        db.execute("UPDATE ps_data__notes SET data = json_set(data, '$.n', -1) WHERE id IN (SELECT id FROM ps_data__notes ORDER BY id LIMIT 10 OFFSET 1000)")
    wall, cpu, out = timed([tandem, "verify", client, "--backend", url, "--json"])
    report = json.loads(out)
    if len(report["tables"][0]["differences"]) != 10:
        raise RuntimeError(f"{name}: expected 10 differing rows: {out[:400]}")
    results["ten"] = (wall, cpu, report)
    fresh = os.path.join(directory, f"{name}-fresh.db")
    subprocess.run([tandem, "init", fresh, "--schema", schema], check=True, capture_output=True)
    results["download"] = timed([tandem, "sync", fresh, "--backend", url])
    return results


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--quick", action="store_true", help="20,000 rows")
    parser.add_argument("--tandem", help="a built tandem to time instead of building one")
    args = parser.parse_args()
    if args.quick:
        args.rows = 20_000
    tandem = build_tandem(progress, args.tandem)
    directory = tempfile.mkdtemp(prefix="tandem-verify-")
    pg_dir = tempfile.mkdtemp(prefix="tandem-verify-pg-")
    cluster = None
    try:
        server = os.path.join(directory, "server.db")

        def fill_embedded(n, client):
            # The rows and their log (a new client's full download reads the log); the client's
            # cursor then stands after them, as if it had downloaded them.
            with sqlite3.connect(server) as db:
                db.executemany("INSERT INTO server_rows(type, id, data) VALUES ('notes', ?, ?)", rows(n))
                db.executemany("INSERT INTO server_changes(txn, op, type, id, data) VALUES (2, 'PUT', 'notes', ?, ?)", rows(n))
                version = db.execute("SELECT max(version) FROM server_changes").fetchone()[0]
            with sqlite3.connect(client) as db:
                db.execute("UPDATE ps_kv SET value = ? WHERE key = 'cursor'", (str(version),))

        measured = {"embedded": measure(tandem, directory, "embedded", "sqlite:" + server, args.rows, fill_embedded)}
        cluster = Cluster(pg_dir)
        url = cluster.tandem_backend(tandem, "verify", write_schema(directory, SCHEMA))

        def fill_postgres(n, client):
            cluster.psql("SET session_replication_role = replica; "
                         f"INSERT INTO notes(id, title, n, r, body) SELECT 'row-' || lpad(i::text, 8, '0'), 'Note Number ' || i, i, i::float8 / 7, "
                         f"repeat('body text ', 5) FROM generate_series(1, {n}) AS i; ANALYZE notes", db="verify")

        measured["PostgreSQL"] = measure(tandem, directory, "postgres", url, args.rows, fill_postgres)
        print(f"tandem verify, {args.rows:,} rows of notes(title, n, r, body); command: Tools/bench/verify.py --rows {args.rows}")
        print("| backend | case | wall s | client CPU s | round trips | bytes moved | in backend calls s | rows differing |")
        print("| --- | --- | --- | --- | --- | --- | --- | --- |")
        for backend, results in measured.items():
            for case, label in (("agrees", "agrees"), ("ten", "10 rows differ")):
                wall, cpu, report = results[case]
                print(f"| {backend} | {label} | {wall:.2f} | {cpu:.2f} | {report['round_trips']} | {report['bytes_moved']:,} | "
                      f"{report['backend_seconds']:.2f} | {len(report['tables'][0]['differences'])} |")
            wall, cpu, _ = results["download"]
            print(f"| {backend} | full download (tandem sync, new client) | {wall:.2f} | {cpu:.2f} | | | | |")
        print()
        for backend, results in measured.items():
            wall, cpu, report = results["agrees"]
            # Embedded: the server's work runs in the verifying process, so its CPU holds both sides.
            share = (cpu + (0 if backend == "embedded" else report["backend_seconds"])) / 900 * 100
            print(f"{backend}: verify that agrees {wall:.2f} s against a full download {results['download'][0]:.2f} s "
                  f"({wall / results['download'][0]:.2f}x); background verification every 15 min: {share:.2f} % of a core")
    finally:
        if cluster:
            cluster.stop()
        shutil.rmtree(directory, ignore_errors=True)
        shutil.rmtree(pg_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
