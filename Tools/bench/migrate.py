#!/usr/bin/env python3
"""A migration beside SQLite's own schema change: rename a column and fill a new one from it.

Usage: Tools/bench/migrate.py [--rows N] [--rounds K] [--quick]

Tandem: `tandem migrate` of a synced table `notes(title text, n integer, body text)` holding N
rows (none waiting for upload) with one migration: renameColumn title → heading, then fill
slug = lower(heading) (uploads none). Plain: the same rows in a plain table, and the `sqlite3`
shell's `ALTER TABLE notes RENAME COLUMN title TO heading; ALTER TABLE notes ADD COLUMN slug
TEXT; UPDATE notes SET slug = lower(heading)` in one transaction. Both files in WAL mode with
synchronous=NORMAL. K rounds, alternating which goes first, each on fresh copies; prints each
side's time, the ratio (plain time / Tandem time: above 1 means Tandem is faster), each
process's peak memory (GNU time), and how long a writer that starts 0.2 s into Tandem's
migration waits before its one-row insert commits.
"""
import argparse
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

from bench_support import build_tandem, write_schema
from payloads import run

V1 = {"tables": [{"name": "notes", "columns": [{"name": "title", "type": "text"}, {"name": "n", "type": "integer"},
                                                {"name": "body", "type": "text"}]}]}
V2 = {"tables": [{"name": "notes", "columns": [{"name": "heading", "type": "text"}, {"name": "n", "type": "integer"},
                                                {"name": "body", "type": "text"}, {"name": "slug", "type": "text"}]}],
      "migrations": [{"id": "rename-and-fill", "uploads": "none", "steps": [
          {"renameColumn": {"table": "notes", "from": "title", "to": "heading"}},
          {"fill": {"table": "notes", "column": "slug", "value": "lower(heading)"}}]}]}
PLAIN_SQL = ("PRAGMA synchronous = NORMAL; BEGIN; ALTER TABLE notes RENAME COLUMN title TO heading; "
             "ALTER TABLE notes ADD COLUMN slug TEXT; UPDATE notes SET slug = lower(heading); COMMIT;")


def progress(message):
    sys.stderr.write(f"[migrate] {message}\n")
    sys.stderr.flush()


def rows(n):
    for i in range(n):
        yield (f"row-{i:08d}", f"Note Number {i} About Things", i, "body text " * 5)


def prepare(tandem, directory, n):
    """The Tandem file (rows stored as a sync would leave them: nothing queued) and the plain one."""
    tandem_db, plain_db = os.path.join(directory, "tandem.db"), os.path.join(directory, "plain.db")
    v1 = write_schema(directory, V1)
    subprocess.run([tandem, "init", tandem_db, "--schema", v1], check=True, capture_output=True)
    with sqlite3.connect(tandem_db) as db:
        db.executemany("INSERT INTO ps_data__notes(id, data) VALUES (?, json_object('title', ?, 'n', ?, 'body', ?))", rows(n))
    with sqlite3.connect(plain_db) as db:
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("CREATE TABLE notes(id TEXT PRIMARY KEY, title TEXT, n INTEGER, body TEXT)")
        db.executemany("INSERT INTO notes VALUES (?, ?, ?, ?)", rows(n))
    for path in (tandem_db, plain_db):
        with sqlite3.connect(path) as db:
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return tandem_db, plain_db


def fresh_copy(path, directory, name):
    target = os.path.join(directory, name)
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(target + suffix):
            os.remove(target + suffix)
    shutil.copyfile(path, target)
    return target


def tandem_round(tandem, source, directory, v2):
    db = fresh_copy(source, directory, "round-tandem.db")
    migrate = subprocess.Popen(["/usr/bin/time", "-q", "-f", "%e %M", tandem, "migrate", db, "--schema", v2],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(0.2)
    writer_start = time.monotonic()
    writer = subprocess.run([tandem, "exec", db, "--busy-timeout", "600000", "INSERT INTO notes(id, heading) VALUES ('late', 'x')"],
                            capture_output=True, text=True)
    waited = time.monotonic() - writer_start
    out, err = migrate.communicate()
    if migrate.returncode != 0 or writer.returncode != 0:
        raise RuntimeError(f"tandem migrate: {err.decode()} / writer: {writer.stderr}")
    seconds, peak = float(err.decode().split()[-2]), int(err.decode().split()[-1]) / 1024.0
    check = sqlite3.connect(db).execute("SELECT count(*) FROM notes WHERE slug = lower(heading)").fetchone()[0]
    return seconds, peak, waited, check


def plain_round(source, directory):
    db = fresh_copy(source, directory, "round-plain.db")
    seconds, peak, _ = run(["sqlite3", db, PLAIN_SQL])
    check = sqlite3.connect(db).execute("SELECT count(*) FROM notes WHERE slug = lower(heading)").fetchone()[0]
    return seconds, peak, check


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="20,000 rows, one round")
    parser.add_argument("--tandem", help="a built tandem to time instead of building one")
    args = parser.parse_args()
    if args.quick:
        args.rows, args.rounds = 20_000, 1
    tandem = build_tandem(progress, args.tandem)
    directory = tempfile.mkdtemp(prefix="tandem-migrate-")
    try:
        progress(f"preparing {args.rows:,} rows")
        tandem_db, plain_db = prepare(tandem, directory, args.rows)
        v2 = os.path.join(directory, "v2.json")
        with open(v2, "w") as f:
            json.dump(V2, f)
        results = []
        for round_number in range(args.rounds):
            order = ["tandem", "plain"] if round_number % 2 == 0 else ["plain", "tandem"]
            result = {}
            for side in order:
                progress(f"round {round_number + 1}: {side}")
                if side == "tandem":
                    result["tandem"] = tandem_round(tandem, tandem_db, directory, v2)
                else:
                    result["plain"] = plain_round(plain_db, directory)
            if result["tandem"][3] != args.rows + 0 or result["plain"][2] != args.rows:
                raise RuntimeError(f"filled rows: tandem {result['tandem'][3]}, plain {result['plain'][2]}, of {args.rows}")
            results.append(result)
        print(f"rename a column and fill a new one, {args.rows:,} rows, {args.rounds} round(s)")
        print("| round | Tandem s | plain s | ratio (plain/Tandem) | Tandem peak MB | plain peak MB | writer waited s |")
        print("| --- | --- | --- | --- | --- | --- | --- |")
        for i, r in enumerate(results):
            t, p = r["tandem"], r["plain"]
            print(f"| {i + 1} | {t[0]:.2f} | {p[0]:.2f} | {p[0] / t[0]:.2f}x | {t[1]:.0f} | {p[1]:.0f} | {t[2]:.2f} |")
        ratios = [r["plain"][0] / r["tandem"][0] for r in results]
        print(f"median ratio {statistics.median(ratios):.2f}x; Tandem's peak {max(r['tandem'][1] for r in results):.0f} MB")
    finally:
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
