#!/usr/bin/env python3
"""JSON import and export at size: `tandem import` and `tandem export` beside SQLite's own JSON
functions on the same rows, time and peak memory of every process, in one invocation.

Usage: Tools/bench/payloads.py [--quick] [--rows N] [--rounds R] [--large N] [--limit MB] [--before TANDEM]

A payload of N objects {"id","title","done","rank"} (ids in no order, titles of 13-19
characters, booleans, reals of 17 significant digits: about 84 bytes an object) is written as
one JSON array, and again with 1 % of the titles changed. In each round, on fresh files:

  sqlite3: INSERT INTO notes SELECT … FROM json_each(readfile(payload)) into a plain table
           (id TEXT PRIMARY KEY, title, done, rank; WAL, synchronous=NORMAL, as Tandem)
  tandem import DB notes payload            into a new `tandem init` database
  tandem import DB notes payload            again: every row unchanged
  tandem import DB notes changed-payload    1 % of the rows changed
  tandem import DB notes - --ndjson         the unchanged rows again, newline-delimited, from a pipe
  sqlite3 -json DB "SELECT * FROM notes"    the Tandem database's view
  tandem export DB notes                    the same rows, ordered by id

Each process's peak resident memory comes from GNU time (or wait4(2)). Every `tandem import` and
`tandem export` runs with its data segment limited to 300 MiB (RLIMIT_DATA: the heap and every
private writable mapping; --limit MB changes it, 0 lifts it): one that needed more would fail. Ratios are the baseline's time over
Tandem's (above 1: Tandem faster), the median of each round's ratio; rounds alternate which of
the two runs first. With --large M (default 5,000,000; 0 skips it), one more round at M rows
shows that Tandem's memory does not grow with the payload.

  --quick    20,000 rows, one round, no large round (about 10 s; no timing is judged)
  --before   also run another `tandem` binary's first import, unchanged import and export in
             each round (an earlier release, built elsewhere), on a database of its own
"""
import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from bench_support import RELEASE_BUILD, release_build

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCHEMA = '{"tables":[{"name":"notes","columns":[{"name":"title","type":"text"},{"name":"done","type":"integer"},{"name":"rank","type":"real"}]}]}'
SQLITE_INSERT = ("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; "
                 "CREATE TABLE notes(id TEXT PRIMARY KEY, title TEXT, done INTEGER, rank REAL); "
                 "INSERT INTO notes SELECT value->>'id', value->>'title', value->>'done', value->>'rank' "
                 "FROM json_each(readfile('{payload}'));")


def progress(message):
    sys.stderr.write(f"[payloads] {message}\n")
    sys.stderr.flush()


def out(line=""):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def write_payload(path, rows, changed_every=0, ndjson=False):
    """Objects whose ids (a bijection of the row number) come in no particular order."""
    with open(path, "w") as f:
        if not ndjson:
            f.write("[")
        for i in range(rows):
            key = "%08x" % ((i * 2654435761) % 2**32)
            title = "Note number %d" % i
            if changed_every and i % changed_every == 0:
                title += " (edited)"
            obj = '{"id":"%s","title":"%s","done":%s,"rank":%r}' % (key, title, "true" if i % 3 == 0 else "false", i / 7.0)
            if ndjson:
                f.write(obj + "\n")
            else:
                f.write(obj + ("," if i < rows - 1 else ""))
        if not ndjson:
            f.write("]\n")


# GNU time reports a command's own peak memory. Without it, wait4(2) does, but a child forked from
# this Python process starts with its pages counted (some 10 MB).
GNU_TIME = "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else None


def run(argv, stdin=None, stdout=None, limit_mb=None):
    """Runs argv (its data segment limited to `limit_mb` MiB, when given: RLIMIT_DATA, which counts
    the heap and every private writable mapping); returns (seconds, peak RSS in MB, stdout text or
    None). Fails on a non-zero exit."""
    stdin_file = open(stdin, "rb") if isinstance(stdin, str) else stdin
    out_file = open(stdout, "wb") if stdout else subprocess.PIPE
    peak_file = tempfile.NamedTemporaryFile(prefix="peak-", delete=False).name if GNU_TIME else None
    command = [GNU_TIME, "-q", "-o", peak_file, "-f", "%M"] + argv if GNU_TIME else argv
    start = time.monotonic()
    def limit():
        if limit_mb:
            resource.setrlimit(resource.RLIMIT_DATA, (limit_mb << 20, limit_mb << 20))
    process = subprocess.Popen(command, stdin=stdin_file, stdout=out_file, stderr=subprocess.PIPE, preexec_fn=limit if limit_mb else None)
    text = process.stdout.read() if not stdout else None
    error = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.monotonic() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if isinstance(stdin, str):
        stdin_file.close()
    if stdout:
        out_file.close()
    if process.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} exited {process.returncode}: {error.decode(errors='replace')}")
    peak_kb = usage.ru_maxrss
    if peak_file:
        with open(peak_file) as f:
            peak_kb = int(f.read().split()[-1])
        os.remove(peak_file)
    return seconds, peak_kb / 1024.0, text.decode() if text is not None else None


def piped(producer, consumer, limit_mb=None):
    """`producer | consumer`: the consumer's (seconds, peak MB, stdout)."""
    feeder = subprocess.Popen(producer, stdout=subprocess.PIPE)
    try:
        return run(consumer, stdin=feeder.stdout, limit_mb=limit_mb)
    finally:
        feeder.stdout.close()
        feeder.wait()


class Bench:
    def __init__(self, args):
        self.args = args
        self.tmp = tempfile.mkdtemp(prefix="tandem-payloads-")
        self.limit = args.limit or None
        self.sqlite3 = shutil.which("sqlite3")
        if not self.sqlite3:
            raise RuntimeError("the sqlite3 shell is needed (apt-get install sqlite3)")

    def build(self):
        progress(" ".join(RELEASE_BUILD + ["--product", "tandem"]))
        bin_path = release_build(stdout=subprocess.DEVNULL)
        self.tandem = os.path.join(bin_path, "tandem")
        self.schema = os.path.join(self.tmp, "schema.json")
        with open(self.schema, "w") as f:
            f.write(SCHEMA)

    def payloads(self, rows):
        directory = os.path.join(self.tmp, f"p{rows}")
        os.makedirs(directory, exist_ok=True)
        files = {name: os.path.join(directory, name) for name in ("big.json", "changed.json", "big.ndjson")}
        progress(f"writing payloads of {rows:,} rows")
        write_payload(files["big.json"], rows)
        write_payload(files["changed.json"], rows, changed_every=100)
        write_payload(files["big.ndjson"], rows, ndjson=True)
        return files

    def fresh(self, name):
        path = os.path.join(self.tmp, name)
        for suffix in ("", "-wal", "-shm", "-notify", "-write.lock", "-owner.lock"):
            if os.path.exists(path + suffix):
                os.remove(path + suffix)
        return path

    def round(self, rows, files, tandem_first, baselines=True):
        """One round; returns {case: (seconds, MB)}."""
        result = {}
        plain = self.fresh("plain.db")
        db = self.fresh("tandem.db")
        subprocess.run([self.tandem, "init", db, "--schema", self.schema], check=True, stdout=subprocess.DEVNULL)

        def expect(text, inserted, updated, unchanged):
            wanted = f"notes: {inserted} inserted, {updated} updated, 0 deleted, {unchanged} unchanged"
            if text.strip() != wanted:
                raise RuntimeError(f"tandem import printed {text.strip()!r}, not {wanted!r}")

        def baseline_insert():
            result["sqlite3 json_each insert"] = run([self.sqlite3, plain, SQLITE_INSERT.format(payload=files["big.json"])])[:2]

        def first_import():
            seconds, mb, text = run([self.tandem, "import", db, "notes", files["big.json"]], limit_mb=self.limit)
            expect(text, rows, 0, 0)
            result["tandem import, first"] = (seconds, mb)

        for step in ((first_import, baseline_insert) if tandem_first else (baseline_insert, first_import)):
            if step is baseline_insert and not baselines:
                continue
            step()
        seconds, mb, text = run([self.tandem, "import", db, "notes", files["big.json"]], limit_mb=self.limit)
        expect(text, 0, 0, rows)
        result["tandem import, unchanged"] = (seconds, mb)
        seconds, mb, text = run([self.tandem, "import", db, "notes", files["changed.json"]], limit_mb=self.limit)
        changed = len(range(0, rows, 100))
        expect(text, 0, changed, rows - changed)
        result["tandem import, 1 % changed"] = (seconds, mb)
        seconds, mb, text = piped(["cat", files["big.ndjson"]], [self.tandem, "import", db, "notes", "-", "--ndjson"], limit_mb=self.limit)
        expect(text, 0, changed, rows - changed)
        result["tandem import --ndjson from a pipe, 1 % changed back"] = (seconds, mb)

        exported = os.path.join(self.tmp, "export.json")
        shelled = os.path.join(self.tmp, "sqlite3.json")

        def baseline_export():
            result["sqlite3 -json SELECT * FROM notes"] = run([self.sqlite3, "-json", db, "SELECT * FROM notes"], stdout=shelled)[:2]

        def export():
            result["tandem export"] = run([self.tandem, "export", db, "notes"], stdout=exported, limit_mb=self.limit)[:2]

        for step in ((export, baseline_export) if tandem_first else (baseline_export, export)):
            if step is baseline_export and not baselines:
                continue
            step()
        if self.args.before:
            before = self.fresh("before.db")
            subprocess.run([self.args.before, "init", before, "--schema", self.schema], check=True, stdout=subprocess.DEVNULL)
            result["before: tandem import, first"] = run([self.args.before, "import", before, "notes", files["big.json"]])[:2]
            result["before: tandem import, unchanged"] = run([self.args.before, "import", before, "notes", files["big.json"]])[:2]
            result["before: tandem export"] = run([self.args.before, "export", before, "notes"], stdout=os.path.join(self.tmp, "before.json"))[:2]
        count = 0
        with open(exported, "rb") as f:
            tail = b""
            while chunk := f.read(1 << 20):
                count += (tail + chunk).count(b'{"id":')
                tail = chunk[-5:]
        if count != rows:
            raise RuntimeError(f"tandem export wrote {count} rows, not {rows}")
        return result

    def report(self, rows, rounds):
        pairs = [("tandem import, first", "sqlite3 json_each insert", 0.3),
                 ("tandem import, unchanged", "sqlite3 json_each insert", 1.0),
                 ("tandem import, 1 % changed", "sqlite3 json_each insert", 1.0),
                 ("tandem import --ndjson from a pipe, 1 % changed back", "sqlite3 json_each insert", None),
                 ("tandem export", "sqlite3 -json SELECT * FROM notes", 1.0),
                 ("before: tandem import, first", "sqlite3 json_each insert", None),
                 ("before: tandem import, unchanged", "sqlite3 json_each insert", None),
                 ("before: tandem export", "sqlite3 -json SELECT * FROM notes", None)]
        cases = ["sqlite3 json_each insert", "tandem import, first", "tandem import, unchanged", "tandem import, 1 % changed",
                 "tandem import --ndjson from a pipe, 1 % changed back", "sqlite3 -json SELECT * FROM notes", "tandem export",
                 "before: tandem import, first", "before: tandem import, unchanged", "before: tandem export"]
        ratio_of = {}
        for case, baseline, target in pairs:
            if all(baseline in r and case in r for r in rounds):
                ratio_of[case] = (statistics.median(r[baseline][0] / r[case][0] for r in rounds), baseline, target)
        width = max(len(c) for c in cases)
        out(f"{rows:,} rows, {len(rounds)} round(s); seconds and MB: the median of the rounds (peak resident memory of the process)")
        out(f"{'command'.ljust(width)}  {'seconds':>8}  {'rows/s':>9}  {'peak MB':>8}  {'x baseline':>10}  target")
        out(f"{'-' * width}  {'-' * 8}  {'-' * 9}  {'-' * 8}  {'-' * 10}  ------")
        for case in cases:
            if not all(case in r for r in rounds):
                continue
            seconds = statistics.median(r[case][0] for r in rounds)
            mb = statistics.median(r[case][1] for r in rounds)
            ratio, target = ("", "")
            if case in ratio_of:
                value, _, goal = ratio_of[case]
                ratio = f"{value:.2f}"
                target = f">= {goal}x" if goal else ""
            out(f"{case.ljust(width)}  {seconds:8.2f}  {rows / seconds:9,.0f}  {mb:8.1f}  {ratio:>10}  {target}")
        if len(rounds) > 1 and ratio_of:
            out("per round, x baseline: " + "; ".join(
                f"{case}: " + ", ".join(f"{r[baseline][0] / r[case][0]:.2f}" for r in rounds)
                for case, (_, baseline, _) in ratio_of.items()))
        out()

    def main(self):
        self.build()
        rows = 20_000 if self.args.quick else self.args.rows
        rounds_count = 1 if self.args.quick else self.args.rounds
        files = self.payloads(rows)
        rounds = []
        for index in range(rounds_count):
            progress(f"round {index + 1} of {rounds_count} at {rows:,} rows")
            rounds.append(self.round(rows, files, tandem_first=index % 2 == 1))
        self.report(rows, rounds)
        large = 0 if self.args.quick else self.args.large
        if large:
            for name in files.values():
                os.remove(name)
            files = self.payloads(large)
            progress(f"one round at {large:,} rows")
            self.report(large, [self.round(large, files, tandem_first=False)])
        shutil.rmtree(self.tmp, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--large", type=int, default=5_000_000)
    parser.add_argument("--before", help="another tandem binary to run beside")
    parser.add_argument("--limit", type=int, default=300, help="RLIMIT_DATA of the tandem processes, MiB (0: none)")
    args = parser.parse_args()
    bench = Bench(args)
    try:
        bench.main()
    finally:
        shutil.rmtree(bench.tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
