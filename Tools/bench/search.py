#!/usr/bin/env python3
"""Full-text search beside SQLite's own FTS5 on a plain table of the same rows.

Usage: Tools/bench/search.py [--rows N] [--queries Q] [--writes W] [--tandem PATH] [--quick]

Data: N notes (title and body of words drawn from a vocabulary of 5,000, a few hundred bytes a
row). Files in WAL mode, synchronous=NORMAL.
- Index build: Tandem's `tandem init` of the schema that adds `search: {columns: [title,
  body]}` to a table holding the rows (the index made from them), against the sqlite3 shell's
  CREATE VIRTUAL TABLE … USING fts5(title, body) and INSERT … SELECT of the same rows, in one
  transaction. Ratio: plain time / Tandem time (at least 0.5 is the target).
- Search: Q queries (one or two words, the same list for both): Tandem's `search("notes",
  matching:, limit: 20)` against `fetchAll` of the same MATCH on a plain FTS5 table of the same
  rows in the same file, joined to the plain table, ordered by bm25, LIMIT 20; both through
  Tandem's API in one process (`tandem-test-support search-bench`), alternating which goes
  first; p50 and p99 (Tandem's at most 1.5x plain's is the target).
- Write cost: W one-row transactions through the table's view, by 1 writer and by 8 writer
  processes, into Tandem files with and without the search index (the same view, triggers and
  upload queue otherwise): tx/s and the ratio (with / without).
"""
import argparse
import os
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

from bench_support import percentile, release_build, write_schema

COLUMNS = [{"name": "title", "type": "text"}, {"name": "body", "type": "text"}, {"name": "n", "type": "integer"}]
PLAIN = {"tables": [{"name": "notes", "columns": COLUMNS}]}
SEARCHED = {"tables": [{"name": "notes", "columns": COLUMNS, "search": {"columns": ["title", "body"]}}]}
TOKENIZE = "unicode61 remove_diacritics 2"


def progress(message):
    sys.stderr.write(f"[search] {message}\n")
    sys.stderr.flush()


def vocabulary(seed=7):
    random.seed(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    return ["".join(random.choice(letters) for _ in range(random.randint(3, 9))) for _ in range(5000)]


def rows(n, words):
    random.seed(11)
    for i in range(n):
        title = " ".join(random.choices(words, k=5))
        body = " ".join(random.choices(words, k=40))
        yield (f"row-{i:08d}", title, body, i)


def tandem_file(tandem, directory, name, schema, n, words):
    path = os.path.join(directory, name)
    subprocess.run([tandem, "init", path, "--schema", write_schema(directory, schema)], check=True, capture_output=True)
    if n:
        with sqlite3.connect(path) as db:
            db.executemany("INSERT INTO ps_data__notes(id, data) VALUES (?, json_object('title', ?, 'body', ?, 'n', ?))", rows(n, words))
    return path


def plain_file(directory, n, words):
    path = os.path.join(directory, "plain.db")
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("CREATE TABLE notes(id TEXT PRIMARY KEY, title TEXT, body TEXT, n INTEGER)")
        db.executemany("INSERT INTO notes VALUES (?, ?, ?, ?)", rows(n, words))
    return path


def build(tandem, directory, n, words):
    """Seconds of each side's index build."""
    unindexed = tandem_file(tandem, directory, "tandem.db", PLAIN, n, words)
    started = time.monotonic()
    subprocess.run([tandem, "init", unindexed, "--schema", write_schema(directory, SEARCHED)], check=True, capture_output=True)
    tandem_seconds = time.monotonic() - started
    plain = plain_file(directory, n, words)
    sql = (f"PRAGMA synchronous = NORMAL; BEGIN; CREATE VIRTUAL TABLE notes_fts USING fts5(title, body, tokenize = '{TOKENIZE}'); "
           "INSERT INTO notes_fts(rowid, title, body) SELECT rowid, title, body FROM notes; COMMIT;")
    started = time.monotonic()
    subprocess.run(["sqlite3", plain, sql], check=True, capture_output=True)
    return tandem_seconds, time.monotonic() - started, unindexed, plain


def latencies(support, path, n, words, queries):
    """Milliseconds of each side's searches: (Tandem's, plain's)."""
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE notes_plain(id TEXT PRIMARY KEY, title TEXT, body TEXT, n INTEGER)")
        db.executemany("INSERT INTO notes_plain VALUES (?, ?, ?, ?)", rows(n, words))
        db.execute(f"CREATE VIRTUAL TABLE notes_plain_fts USING fts5(title, body, tokenize = '{TOKENIZE}')")
        db.execute("INSERT INTO notes_plain_fts(rowid, title, body) SELECT rowid, title, body FROM notes_plain")
    stdin = "\n".join(queries[:20] + queries) + "\n"  # the first 20 warm the page cache
    out = subprocess.run([support, "search-bench", path, "notes", "notes_plain", "notes_plain_fts", "--limit", "20"],
                         input=stdin, capture_output=True, text=True, check=True).stdout.split("\n")[20:]
    tandem, plain = [], []
    for line in filter(None, out):
        t_us, t_rows, p_us, p_rows = map(int, line.split())
        if t_rows != p_rows:
            raise SystemExit(f"a search found {t_rows} rows, the plain MATCH {p_rows}")
        tandem.append(t_us / 1000)
        plain.append(p_us / 1000)
    return tandem, plain


WRITER = """
import sqlite3, sys, time
path, first, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
db = sqlite3.connect(path, timeout=60, isolation_level=None)
db.execute("PRAGMA synchronous = NORMAL")
for i in range(first, first + count):
    db.execute("BEGIN IMMEDIATE")
    db.execute("INSERT INTO notes(id, title, body, n) VALUES (?, ?, ?, ?)", (f"w-{i}", f"title {i % 97} words", f"body of {i} with words and more words", i))
    db.execute("COMMIT")
"""


def write_rate(path, writes, writers):
    per = writes // writers
    started = time.monotonic()
    processes = [subprocess.Popen([sys.executable, "-c", WRITER, path, str(w * per), str(per)]) for w in range(writers)]
    for process in processes:
        if process.wait() != 0:
            raise SystemExit("a writer failed")
    return per * writers / (time.monotonic() - started)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--writes", type=int, default=4000)
    parser.add_argument("--tandem")
    parser.add_argument("--quick", action="store_true", help="50,000 rows, 200 queries, 800 writes")
    args = parser.parse_args()
    if args.quick:
        args.rows, args.queries, args.writes = 50_000, 200, 800
    progress("building the release tandem and tandem-test-support")
    bin_path = release_build(products=("tandem", "tandem-test-support"))
    tandem = os.path.abspath(args.tandem) if args.tandem else os.path.join(bin_path, "tandem")
    support = os.path.join(bin_path, "tandem-test-support")
    words = vocabulary()
    random.seed(3)
    queries = [" ".join(random.choices(words, k=random.choice([1, 1, 2]))) for _ in range(args.queries)]
    with tempfile.TemporaryDirectory() as directory:
        progress(f"index build over {args.rows} rows")
        tandem_seconds, plain_seconds, tandem_db, plain_db = build(tandem, directory, args.rows, words)
        print(f"index build: tandem {tandem_seconds:.2f} s, sqlite3 fts5 {plain_seconds:.2f} s, ratio {plain_seconds / tandem_seconds:.2f}x")
        progress(f"{args.queries} searches, each side")
        tandem_times, plain_times = latencies(support, tandem_db, args.rows, words, queries)
        for p in (50, 99):
            t, s = percentile(tandem_times, p), percentile(plain_times, p)
            print(f"search p{p}: tandem {t:.3f} ms, plain {s:.3f} ms, ratio {t / s:.2f}x")
        for writers in (1, 8):
            with_index = tandem_file(tandem, directory, f"w{writers}-search.db", SEARCHED, 0, words)
            without = tandem_file(tandem, directory, f"w{writers}-plain.db", PLAIN, 0, words)
            a, b = write_rate(without, args.writes, writers), write_rate(with_index, args.writes, writers)
            print(f"writes, {writers} writer{'s' if writers > 1 else ''}: without search {a:.0f} tx/s, with {b:.0f} tx/s, ratio {b / a:.2f}x")


if __name__ == "__main__":
    main()
