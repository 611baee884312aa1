#!/usr/bin/env python3
"""Plain SQLite writer in Python for Tools/bench: the same SQL as Tandem's stress writer.

Usage: plain_writer.py DB WRITER TRANSACTIONS ROWS START_AT_US [INTERVAL_US]

Opens DB with the standard sqlite3 module (isolation_level=None, PRAGMA busy_timeout=5000, no
other pragma), sleeps until START_AT_US (CLOCK_MONOTONIC microseconds), then runs TRANSACTIONS
transactions of BEGIN IMMEDIATE; ROWS x INSERT INTO stress(...); COMMIT, printing
"<i> <start_us> <commit_us>" after each commit. A transaction that fails with "database is
locked" after the busy timeout is rolled back and retried (start_us stays the first attempt's).
"""
import sqlite3
import sys
import time


def now_us():
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000


def main():
    path, writer, transactions, rows, start_at = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    interval = int(sys.argv[6]) if len(sys.argv) > 6 else 0
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA busy_timeout=5000")
    payload = "x" * 32
    sql = "INSERT INTO stress(id, writer, txn, row, payload, written_at) VALUES (?, ?, ?, ?, ?, ?)"
    out = sys.stdout
    busy = 0
    wait = (start_at - now_us()) / 1e6
    if wait > 0:
        time.sleep(wait)
    for i in range(transactions):
        if interval:
            wait = (start_at + i * interval - now_us()) / 1e6
            if wait > 0:
                time.sleep(wait)
        start = now_us()
        while True:
            try:
                db.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as error:
                if "locked" not in str(error) and "busy" not in str(error):
                    raise
                busy += 1
                continue
            try:
                for r in range(rows):
                    db.execute(sql, (f"w{writer}-t{i}-r{r}", writer, i, r, payload, start))
                db.execute("COMMIT")
                break
            except sqlite3.OperationalError as error:
                if "locked" not in str(error) and "busy" not in str(error):
                    raise
                busy += 1
                db.execute("ROLLBACK")
        out.write(f"{i} {start} {now_us()}\n")
        out.flush()
    if busy:
        sys.stderr.write(f"busy_retries {busy}\n")


if __name__ == "__main__":
    main()
