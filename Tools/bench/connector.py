#!/usr/bin/env python3
"""The upload queue drained through the app's own API, beside the API's own ingest of the same rows.

Usage: Tools/bench/connector.py [--transactions N] [--rounds K] [--quick]

A client file holds N queued single-row transactions of `tandem stress`'s table (written by
`tandem stress-writer`, one write transaction each). Each round, against a
fresh reference API (Tools/example/api/api_server.py, its own SQLite file, loopback HTTP):

- exec: `tandem app DB --connector 'exec:Tools/example/api/connector.sh URL'` (the curl program
  per batch of up to 1,000 transactions) until the upload queue is empty (polled every 2 ms);
- Swift: `tandem-api-example URL DB` (the URLSession connector) until the upload queue is empty
  (the program then goes on to download the answers);
- ingest: the same batches (the connector format, 1,000 transactions each, as the program sends
  them) posted straight to the API from one Python client: the API's own rate, the ceiling.

Prints each side's seconds and the ratio ingest / connector (1 means the connector costs nothing
beside the API; the target is at least 0.5).
"""
import argparse
import http.client
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

from bench_support import release_build
from migrate import fresh_copy as copy

HERE = os.path.dirname(os.path.abspath(__file__))
STRESS_SCHEMA = {"tables": [{"name": "stress", "columns": [
    {"name": "writer", "type": "integer"}, {"name": "txn", "type": "integer"}, {"name": "row", "type": "integer"},
    {"name": "payload", "type": "text"}, {"name": "written_at", "type": "integer"}]}]}
API = os.path.join(os.path.dirname(os.path.dirname(HERE)), "Tools", "example", "api")


def progress(message):
    sys.stderr.write(f"[connector] {message}\n")
    sys.stderr.flush()


def start_api(directory, name):
    server = subprocess.Popen([sys.executable, os.path.join(API, "api_server.py"), os.path.join(directory, name)],
                              stdout=subprocess.PIPE, text=True)
    line = server.stdout.readline()
    if not line.startswith("listening on "):
        raise RuntimeError(f"the API did not start: {line}")
    return server, "http://127.0.0.1:" + line.split()[-1]


def prepare(tandem, directory, n):
    """A file with n queued transactions, kept as the source each round copies."""
    source = os.path.join(directory, "source.db")
    schema = os.path.join(directory, "schema.json")
    with open(schema, "w") as f:
        json.dump(STRESS_SCHEMA, f)
    subprocess.run([tandem, "init", source, "--schema", schema], check=True, capture_output=True)
    subprocess.run([tandem, "stress-writer", source, "--writer", "0", "--transactions", str(n)], check=True, stdout=subprocess.DEVNULL)
    db = sqlite3.connect(source)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    queued = db.execute("SELECT count(DISTINCT tx_id) FROM ps_crud").fetchone()[0]
    db.close()
    if queued != n:
        raise RuntimeError(f"{queued} queued transactions, not {n}")
    return source


def batches(source, size=1000):
    """The queue's transactions as the connector format's upload requests."""
    db = sqlite3.connect(source)
    client = db.execute("SELECT value FROM ps_kv WHERE key = 'client_id'").fetchone()[0]
    rows = db.execute("SELECT tx_id, data FROM ps_crud ORDER BY id").fetchall()
    db.close()
    transactions = []
    for tx, data in rows:
        entry = json.loads(data)
        transactions.append({"id": tx, "entries": [{"op": entry["op"], "table": entry["type"], "id": entry["id"], "data": entry.get("data")}]})
    return [json.dumps({"version": 1, "client_id": client, "epoch": 1, "transactions": transactions[i:i + size]})
            for i in range(0, len(transactions), size)]


def rows_on(url):
    with urllib.request.urlopen(url + "/stats") as answer:
        return json.load(answer)["rows"]


def timed_round(kind, tandem, example, source, directory, n, requests):
    server, url = start_api(directory, f"api-{kind}-{time.monotonic_ns()}.db")
    try:
        start = time.monotonic()
        if kind == "exec":
            # `tandem app` until its upload queue is empty: the drain (the answers it downloads
            # after, or between batches, count only where they delay the uploads).
            db = copy(source, directory, "exec.db")
            app = subprocess.Popen([tandem, "app", db, "--connector", f"exec:{os.path.join(API, 'connector.sh')} {url}", "--verify-every", "off"],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            watch = sqlite3.connect(db)
            try:
                while watch.execute("SELECT count(*) FROM ps_crud").fetchone()[0] > 0:
                    if app.poll() is not None:
                        raise RuntimeError(f"tandem app ended with {app.returncode}")
                    time.sleep(0.002)
            finally:
                watch.close()
                seconds = time.monotonic() - start
                app.terminate()
                app.wait()
            if rows_on(url) != n:
                raise RuntimeError(f"{kind}: {rows_on(url)} rows on the API, not {n}")
            return seconds
        elif kind == "swift":
            # The same drain: until the queue is empty (the program goes on to download the answers).
            db = copy(source, directory, "swift.db")
            program = subprocess.Popen([example, url, db], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            watch = sqlite3.connect(db)
            try:
                while watch.execute("SELECT count(*) FROM ps_crud").fetchone()[0] > 0:
                    if program.poll() is not None:
                        raise RuntimeError(f"tandem-api-example ended with {program.returncode}: {program.stderr.read()}")
                    time.sleep(0.002)
            finally:
                watch.close()
            seconds = time.monotonic() - start
            if program.wait() != 0:
                raise RuntimeError(f"tandem-api-example failed: {program.stderr.read()}")
            if rows_on(url) != n:
                raise RuntimeError(f"{kind}: {rows_on(url)} rows on the API, not {n}")
            return seconds
        else:
            # One connection kept for every batch, as a client that uploads in a loop keeps it.
            address = urllib.parse.urlsplit(url)
            connection = http.client.HTTPConnection(address.hostname, address.port)
            for body in requests:
                connection.request("POST", "/upload", body=body.encode(), headers={"Content-Type": "application/json"})
                answer = connection.getresponse()
                answer.read()
                if answer.status != 200:
                    raise RuntimeError(f"the API answered {answer.status}")
            connection.close()
        seconds = time.monotonic() - start
        if rows_on(url) != n:
            raise RuntimeError(f"{kind}: {rows_on(url)} rows on the API, not {n}")
        return seconds
    finally:
        server.terminate()
        server.wait()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--transactions", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="2,000 transactions, one round")
    args = parser.parse_args()
    if args.quick:
        args.transactions, args.rounds = 2_000, 1
    progress("building the release tandem and tandem-api-example")
    bin_path = release_build(("tandem",))
    # The Swift connector links FoundationNetworking, whose static form needs libcurl's -dev
    # package: it is built with the toolchain's shared libraries.
    subprocess.run(["swift", "build", "-c", "release", "--product", "tandem-api-example"], cwd=os.path.dirname(os.path.dirname(HERE)),
                   check=True, stdout=sys.stderr)
    example_bin = subprocess.run(["swift", "build", "-c", "release", "--show-bin-path"], cwd=os.path.dirname(os.path.dirname(HERE)),
                                 check=True, capture_output=True, text=True).stdout.strip()
    tandem, example = os.path.join(bin_path, "tandem"), os.path.join(example_bin, "tandem-api-example")
    directory = tempfile.mkdtemp(prefix="tandem-connector-")
    try:
        progress(f"queueing {args.transactions:,} transactions")
        source = prepare(tandem, directory, args.transactions)
        requests = batches(source)
        results = []
        for round_number in range(args.rounds):
            order = ["ingest", "exec", "swift"] if round_number % 2 == 0 else ["swift", "exec", "ingest"]
            result = {}
            for kind in order:
                progress(f"round {round_number + 1}: {kind}")
                result[kind] = timed_round(kind, tandem, example, source, directory, args.transactions, requests)
            results.append(result)
        print(f"drain of {args.transactions:,} single-row transactions through the reference API; "
              f"command: Tools/bench/connector.py --transactions {args.transactions} --rounds {args.rounds}")
        print("| round | API ingest s | exec connector s | ratio | Swift connector s | ratio |")
        print("| --- | --- | --- | --- | --- | --- |")
        for i, r in enumerate(results):
            print(f"| {i + 1} | {r['ingest']:.2f} | {r['exec']:.2f} | {r['ingest'] / r['exec']:.2f}x | {r['swift']:.2f} | {r['ingest'] / r['swift']:.2f}x |")
        print(f"median ratio: exec {statistics.median(r['ingest'] / r['exec'] for r in results):.2f}x, "
              f"Swift {statistics.median(r['ingest'] / r['swift'] for r in results):.2f}x")
    finally:
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
