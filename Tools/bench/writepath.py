"""The write path's table in one invocation (`Tools/bench/run --only writepath`): writers, bulk,
drain and paced latency, each beside plain SQLite or its own target, and the typed-storage
prototype beside the JSON layout where the prototype takes the case (inserts only: it does not
download, so the drain and the paced latency are the JSON layout's alone).

Every case runs in `rounds` rounds, the compared commands alternating which goes first; the table
gives each round's ratio and their median. Nothing asserts a timing.

| row | Tandem | against |
| --- | --- | --- |
| 1 writer, 8 writers | `tandem stress-writer` (db.write), 1-row transactions | the C client's same INSERT through the same view, `BEGIN IMMEDIATE`, busy timeout; both at synchronous=NORMAL |
| bulk | `tx.insert(into:columns:rows:)`, and `tx.execute` per row for the layouts | the C client's insert into a plain table of the same columns and index |
| drain | 20,000 queued one-row transactions: `tandem app` on A and B until B's live query shows every row (the apps' start included) | Python's `sqlite3` inserting the same rows into a plain table in one transaction (WAL, NORMAL) |
| paced | 50 commits/s on A (`Tools/bench/soak.py`): from the instant COMMIT returned on A to the row in B's live query; beside it, from the transaction's BEGIN (lock wait and transaction included, as `soak.py` reports) | the targets (ms) |
"""
import argparse
import glob
import os
import shutil
import sqlite3
import statistics
import time

import drain as drain_bench
import soak as soak_bench

TARGETS = {"w1": 1.0, "w8": 0.8, "w8_p99": 3.0, "bulk": 0.6, "drain": 0.25,
           "paced_embedded": (1.0, 3.0), "paced_postgres": (2.0, 5.0)}


def plain_insert(directory, total):
    """Seconds for Python's `sqlite3` to insert the drain's rows into a plain table with the same
    columns and index, in one transaction, WAL at synchronous=NORMAL (Tandem's durability)."""
    path = os.path.join(directory, "plain.db")
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.execute("CREATE TABLE plain_stress(id TEXT PRIMARY KEY NOT NULL, writer INTEGER, txn INTEGER, row INTEGER, "
               "payload TEXT, written_at INTEGER)")
    db.execute("CREATE INDEX plain_by_writer ON plain_stress(writer, txn)")
    rows = [(f"i{i}", 0, i, 0, drain_bench.PAYLOAD, i) for i in range(total)]
    started = time.time()
    db.execute("BEGIN IMMEDIATE")
    db.executemany("INSERT INTO plain_stress VALUES (?, ?, ?, ?, ?, ?)", rows)
    db.execute("COMMIT")
    took = time.time() - started
    db.close()
    return took


def one_drain(bench, transactions):
    """One drain of `transactions` queued one-row transactions through the embedded backend, and
    the plain insert of the same rows timed just before the apps start: (drain s, plain s, CPU)."""
    directory = bench.new_dir("writepath-drain")
    os.chmod(directory, 0o755)
    shutil.copy(bench.schema_file, os.path.join(directory, "schema.json"))
    url = "sqlite:" + os.path.join(directory, "server.db")
    took, plain, cpu = drain_bench.drain(bench.tandem, directory, url, transactions, 1, lambda: plain_insert(directory, transactions))
    shutil.rmtree(directory, ignore_errors=True)
    return took, plain, cpu


def paced(bench, backend, seconds):
    """p50 and p99 (ms) of the commit on A to the row in B's live query at 50 commits/s."""
    args = argparse.Namespace(rate=50, seconds=seconds, dashboard=False, slow_query=0, statements=False)
    directory = bench.new_dir(f"writepath-paced-{backend}")
    for path in (bench.tmp, directory):
        os.chmod(path, 0o755)  # PostgreSQL's own user makes its cluster inside
    result = soak_bench.run(backend, args, bench.tandem, directory)
    began = [ms for _, ms in result["latencies"]]
    committed = [ms for _, ms in result["from_commit"]]
    return (soak_bench.percentile(committed, 50), soak_bench.percentile(committed, 99), len(committed),
            soak_bench.percentile(began, 50), soak_bench.percentile(began, 99))


def section(bench, out, progress, fmt, table):
    """Runs the table's cases with `bench` (Tools/bench/run's `Bench`: its build, clients and
    directories) and prints the table with `run`'s `out` and `table`."""
    c = bench.config
    quick = bench.quick
    rounds = 1 if quick else 3
    transactions = c["transactions"]
    bulk_rows = c["bulk_rows"]
    drain_transactions = 1000 if quick else 20_000
    paced_seconds = 3 if quick else 20
    postgres = bool(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    out("=" * 100)
    out("The write path in one invocation: each case beside plain SQLite at equal durability (NORMAL), "
        f"{rounds} round(s) alternating, ratios per round then their median")
    out("=" * 100)
    runs = {}  # key -> list per round

    def add(key, value):
        runs.setdefault(key, []).append(value)

    for r in range(rounds):
        flip = r % 2 == 1
        for writers in (1, 8):
            order = ["c-normal", "tandem", "typed"]
            for client in (reversed(order) if flip else order):
                progress(f"writepath: round {r + 1}/{rounds}, {writers} writer(s) x {transactions}, {client}")
                result = bench.run_plain("tandem" if client == "typed" else client, writers, transactions, 1, typed=client == "typed")
                add((f"w{writers}", client), result)
        order = [("plain", "plain", False), ("library-direct", "library-direct", False), ("library", "library", False),
                 ("library", "library-typed", True)]
        for key, name, typed in (reversed(order) if flip else order):
            progress(f"writepath: round {r + 1}/{rounds}, bulk {bulk_rows} rows, {name}")
            add(("bulk", name), bench.bulk_run(key, bulk_rows, typed=typed))
        progress(f"writepath: round {r + 1}/{rounds}, drain of {drain_transactions} transactions (embedded)")
        add(("drain", "run"), one_drain(bench, drain_transactions))
        for backend in ("embedded", "postgres") if postgres else ("embedded",):
            progress(f"writepath: round {r + 1}/{rounds}, paced, 50 commits/s for {paced_seconds} s, {backend}")
            add(("paced", backend), paced(bench, backend, paced_seconds))

    def met(condition):
        return "met" if condition else "missed"

    def per_round(a, b, f):
        return [f(x, y) for x, y in zip(runs[a], runs[b])]

    def median(values):
        return statistics.median(values) if values else None

    rows = []
    results = {}
    for writers in (1, 8):
        for client, label in (("tandem", "JSON layout"), ("typed", "typed prototype")):
            ratios = per_round((f"w{writers}", client), (f"w{writers}", "c-normal"), lambda t, p: t["tps"] / p["tps"])
            results[(f"w{writers}", client)] = median(ratios)
            tps = median([x["tps"] for x in runs[(f"w{writers}", client)]])
            plain_tps = median([x["tps"] for x in runs[(f"w{writers}", "c-normal")]])
            rows.append([f"{writers} writer{'s' if writers > 1 else ''}, tx/s against plain", label, f"{tps:.0f} / {plain_tps:.0f}",
                         ", ".join(fmt(x) for x in ratios), fmt(median(ratios)) + "x", f">= {TARGETS[f'w{writers}']}x",
                         met(median(ratios) >= TARGETS[f"w{writers}"])])
        if writers == 8:
            for client, label in (("tandem", "JSON layout"), ("typed", "typed prototype")):
                p99 = [x["p99"] for x in runs[("w8", client)]]
                plain_p99 = [x["p99"] for x in runs[("w8", "c-normal")]]
                lower = per_round(("w8", "c-normal"), ("w8", client), lambda p, t: p["max"] / t["max"])
                results[("w8_p99", client)] = median(p99)
                rows.append(["8 writers, p99 commit ms (plain's); max x lower than plain's", label,
                             f"{fmt(median(p99))} ({fmt(median(plain_p99))})", ", ".join(fmt(x) for x in p99) + "; max " +
                             ", ".join(fmt(x, 0) for x in lower) + "x", f"{fmt(median(p99))} ms", "<= 3 ms, max >= 50x lower",
                             met(median(p99) <= TARGETS["w8_p99"] and median(lower) >= 50)])
    for name, label in (("library-direct", "JSON layout, tx.insert(into:columns:rows:)"), ("library", "JSON layout, tx.execute per row"),
                        ("library-typed", "typed prototype, tx.execute per row")):
        ratios = per_round(("bulk", "plain"), ("bulk", name), lambda p, t: p / t)
        results[("bulk", name)] = median(ratios)
        rows.append([f"bulk {bulk_rows:,} rows, against a plain table", label,
                     f"{median(runs[('bulk', name)]):.3f} / {median(runs[('bulk', 'plain')]):.3f} s",
                     ", ".join(fmt(x) for x in ratios), fmt(median(ratios)) + "x", f">= {TARGETS['bulk']}x",
                     met(median(ratios) >= TARGETS["bulk"])])
    drains = runs[("drain", "run")]
    ratios = [plain / took for took, plain, _ in drains]
    results["drain"] = median(ratios)
    rows.append([f"drain of {drain_transactions:,} queued rows (embedded), against one plain insert", "JSON layout",
                 f"{median([d[0] for d in drains]):.3f} / {median([d[1] for d in drains]):.3f} s",
                 ", ".join(fmt(x) for x in ratios), fmt(median(ratios)) + "x", f">= {TARGETS['drain']}x",
                 met(median(ratios) >= TARGETS["drain"])])
    for backend in ("embedded", "postgres"):
        if ("paced", backend) in runs:
            paced_runs = runs[("paced", backend)]
            p50, p99 = median([x[0] for x in paced_runs]), median([x[1] for x in paced_runs])
            began50, began99 = median([x[3] for x in paced_runs]), median([x[4] for x in paced_runs])
            results[("paced", backend)] = (p50, p99)
            target = TARGETS[f"paced_{backend}"]
            rows.append([f"paced 50 commits/s, A's commit to B's live query, p50 / p99 ms ({backend})", "JSON layout",
                         f"from BEGIN: {fmt(began50)} / {fmt(began99)}", ", ".join(f"{fmt(x[0])} / {fmt(x[1])}" for x in paced_runs),
                         f"{fmt(p50)} / {fmt(p99)}", f"<= {target[0]:g} / {target[1]:g} ms",
                         met(p50 <= target[0] and p99 <= target[1])])
    table(["measure", "layout", "Tandem / plain", "per round", "median", "target", ""], rows,
          align=["<", "<", ">", ">", ">", "<", "<"])
    out("  (the typed prototype takes inserts only: the drain and the paced latency are the JSON layout's)")
    out()
    bench.results["writepath"] = results
