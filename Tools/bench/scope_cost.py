#!/usr/bin/env python3
"""What scoped sync costs: the feed's download query under row-level security with many tenants
and a long change log, and uploads with the policies on against off.

Usage: Tools/bench/scope_cost.py [--tenants N] [--rows R] [--uploads U] [--rounds K]

Starts a throwaway PostgreSQL cluster; sets up a scoped table `items(tenant, payload)` and a
login role per tenant, each granted its tenant; writes R rows spread over the N tenants (one
change-log entry each). Then, as one tenant's role: the feed's batch query over the whole log (a
client that was away) and over the last 1,000 changes (a client that keeps up), with the plan's
index use and time; and `tandem sync` of U queued rows of that tenant, with the table's policy
on and off, side by side in K alternating rounds.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from bench_support import build_tandem, write_schema
from pg_cluster import Cluster

SCHEMA = {"tables": [{"name": "items", "columns": [{"name": "tenant", "type": "text"}, {"name": "payload", "type": "text"}],
                      "scope": {"column": "tenant"}}]}


def progress(message):
    sys.stderr.write(f"[scope-cost] {message}\n")
    sys.stderr.flush()


SCOPED_RANGE = ("xid >= '{xmax}'::xid8 AND xid < pg_snapshot_xmax(pg_current_snapshot()) "
                "AND pg_visible_in_snapshot(xid, pg_current_snapshot())")


def scoped_batch(old_xmax):
    """The feed's batch for a role under row-level security (PostgresFeed.scopedBatch), from a
    snapshot with no transaction in progress, as the first page reads it."""
    arms = ["SELECT * FROM tandem_changes WHERE xid = ANY('{}'::xid8[]) AND pg_visible_in_snapshot(xid, pg_current_snapshot())",
            "SELECT * FROM tandem_changes WHERE scope = ANY ((SELECT tandem_scopes())::text[]) AND " + SCOPED_RANGE.format(xmax=old_xmax),
            "SELECT * FROM tandem_changes WHERE scope IS NULL AND " + SCOPED_RANGE.format(xmax=old_xmax),
            "SELECT * FROM tandem_changes WHERE scope = (SELECT ('role:' || current_user) COLLATE \"default\") AND " + SCOPED_RANGE.format(xmax=old_xmax)]
    union = " UNION ALL ".join(arms)
    start = f"SELECT min(version) - 1 FROM (SELECT version FROM ({union}) batch OFFSET 0) start"
    rows = f"SELECT version, op, type, id, data FROM ({union}) batch WHERE version > 0 ORDER BY version LIMIT 1000"
    return start, rows


def explain(cluster, url, sql):
    """Execution time, the index scans used, and the rows the scans read."""
    output = subprocess.run([f"{cluster.bin}/psql", "-qAt", "-d", url, "-c", "SET enable_seqscan = off",
                             "-c", f"EXPLAIN (ANALYZE, FORMAT JSON) {sql}"], check=True, capture_output=True, text=True).stdout
    plan = json.loads(output)[0]
    scans, read, stack = set(), 0, [plan["Plan"]]
    while stack:
        node = stack.pop()
        if "Scan" in node["Node Type"] and "Index Name" in node:
            scans.add(f"{node['Node Type']} on {node['Index Name']}")
        if node["Node Type"] in ("Index Scan", "Index Only Scan", "Bitmap Index Scan", "Seq Scan"):
            read += node.get("Actual Rows", 0) * node.get("Actual Loops", 1)
        stack += node.get("Plans", [])
    return plan["Execution Time"], sorted(scans), read


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tenants", type=int, default=100)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--uploads", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    tandem = build_tandem(progress)
    work = tempfile.mkdtemp(prefix="tandem-scope-")
    os.chmod(work, 0o755)
    os.mkdir(os.path.join(work, "pg"))
    cluster = Cluster(os.path.join(work, "pg"))
    try:
        schema = write_schema(work, SCHEMA)
        admin = cluster.tandem_backend(tandem, "scoped", schema)
        progress(f"{args.tenants} roles, {args.rows:,} rows")
        for t in range(args.tenants):
            cluster.psql(f"CREATE ROLE t{t:03d} LOGIN", "scoped")
            subprocess.run([tandem, "backend", "grant", admin, "--role", f"t{t:03d}", "--scope", f"T{t:03d}"], check=True, stdout=subprocess.DEVNULL)
        role = admin.replace("://tandem@", "://t000@")
        away = os.path.join(work, "away.db")  # a host of tenant T000 that syncs, then is away while the others write
        subprocess.run([tandem, "init", away, "--schema", schema], check=True, stdout=subprocess.DEVNULL)
        subprocess.run([tandem, "sync", away, "--backend", role], check=True, stdout=subprocess.DEVNULL)
        start_xmax = cluster.psql("SELECT pg_snapshot_xmax(pg_current_snapshot())", "scoped")
        per_statement = 50_000
        for first in range(0, args.rows, per_statement):
            cluster.psql(f"INSERT INTO items(id, tenant, payload) SELECT 'i' || i, 'T' || lpad((i % {args.tenants})::text, 3, '0'), 'x' "
                         f"FROM generate_series({first}, {min(args.rows, first + per_statement) - 1}) i", "scoped")
        cluster.psql("VACUUM ANALYZE tandem_changes", "scoped")
        print(f"## Scoped sync: {args.tenants} tenants, {args.rows:,} changes in the log\n")
        print("| query (as tenant t000, row-level security on) | time ms | index scans | rows the scans read |")
        print("| --- | --- | --- | --- |")
        start_sql, rows_sql = scoped_batch(start_xmax)
        for label, sql in (("the batch's first version", start_sql), ("the batch's first page (1,000 changes)", rows_sql)):
            took, scans, read = explain(cluster, role, sql)
            print(f"| {label} | {took:.1f} | {', '.join(scans)} | {read:,} |")
        started = time.time()
        synced = subprocess.run([tandem, "sync", away, "--backend", role], check=True, capture_output=True, text=True).stdout.strip()
        print(f"\n`tandem sync` of the host of T000 that was away: {time.time() - started:.2f} s ({synced}; "
              f"{args.rows // args.tenants:,} of the log's {args.rows:,} changes are its tenant's).\n")
        progress(f"uploads of {args.uploads:,} rows with the policy on and off")
        timings = {"on": [], "off": []}
        for round_number in range(args.rounds):
            for state in (("on", "off") if round_number % 2 == 0 else ("off", "on")):
                cluster.psql(f"ALTER TABLE items {'ENABLE' if state == 'on' else 'DISABLE'} ROW LEVEL SECURITY", "scoped")
                client = os.path.join(work, f"c{round_number}{state}.db")
                subprocess.run([tandem, "init", client, "--schema", schema], check=True, stdout=subprocess.DEVNULL)
                subprocess.run([tandem, "exec", client, f"WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {args.uploads}) "
                                f"INSERT INTO items(id, tenant, payload) SELECT 'u{round_number}{state}-' || i, 'T000', 'y' FROM n"],
                               check=True, stdout=subprocess.DEVNULL)
                subprocess.run([tandem, "sync", client, "--backend", role], check=True, stdout=subprocess.DEVNULL)  # the first, full, sync
                subprocess.run([tandem, "exec", client, f"UPDATE items SET payload = 'z' WHERE id LIKE 'u{round_number}{state}-%'"],
                               check=True, stdout=subprocess.DEVNULL)
                started = time.time()
                subprocess.run([tandem, "sync", client, "--backend", role], check=True, stdout=subprocess.DEVNULL)
                timings[state].append(time.time() - started)
        cluster.psql("ALTER TABLE items ENABLE ROW LEVEL SECURITY", "scoped")
        on, off = statistics.median(timings["on"]), statistics.median(timings["off"])
        print(f"\n`tandem sync` of {args.uploads:,} updates as tenant t000, median of {args.rounds} rounds (alternating): "
              f"policy on {on:.2f} s, off {off:.2f} s: on/off {on / off:.2f}x "
              f"(rounds on: {', '.join(f'{t:.2f}' for t in timings['on'])}; off: {', '.join(f'{t:.2f}' for t in timings['off'])})")
    finally:
        cluster.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
