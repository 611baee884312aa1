#!/usr/bin/env python3
"""A small reference API for Tandem's connectors: an HTTP server with its own SQLite file.

Usage: Tools/example/api/api_server.py DB [--port N]   (prints "listening on PORT" once ready)

POST /upload takes a batch as Tandem's connector format gives it (README.md, "Your own API"):
  {"version":1,"client_id":"…","epoch":3,"transactions":[{"id":12,"entries":[…]}]}
It keeps the highest epoch per client and refuses an older one ({"version":1,"stale_epoch":N});
it applies each transaction once per (client_id, id), answering "applied" for one it has seen,
so retries never apply twice; it validates the whole batch first and applies all or nothing.
A row whose title starts with "refuse-409" or "refuse-422" makes the batch fail with that
status (a conflict, an invalid row): the connector refuses it for good. Answers 200 with
{"version":1,"results":[{"id":12,"outcome":"applied"},…]}.

POST /fetch takes {"version":1,"cursor":"…","limit":N} and answers every row change after the
cursor (a version number), each row's whole state: {"version":1,"changes":[…],"cursor":"…","has_more":…}.

GET /rows/TABLE[?COLUMN=VALUE] lists a table's rows (those whose COLUMN holds VALUE) as a JSON
array of objects with their id and columns: what a payload pull reads.

POST /faults injects faults into the next uploads, for tests: {"fail": N} answers N uploads
with 500; {"drop_after_commit": N} commits N uploads and closes the connection without an
answer; {"delay_ms": D, "delay_count": N} delays N answers by D ms. GET /stats answers the
most times any (client_id, id) was applied, the transactions and rows, and the uploads being
handled now.

Values travel as JSON and are stored as JSON text (Python's json module: integers of any size,
floats by their shortest round-trip form, -0.0 with its sign, NUL and every character kept).
"""
import argparse
import json
import sqlite3
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOCK = threading.Lock()
FAULTS = {"fail": 0, "drop_after_commit": 0, "delay_ms": 0, "delay_count": 0}
IN_PROGRESS = [0]  # uploads being handled now


def open_db(path):
    db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
    db.execute("PRAGMA journal_mode = WAL")
    db.executescript("""
        CREATE TABLE IF NOT EXISTS rows(tbl TEXT NOT NULL, id TEXT NOT NULL, data TEXT NOT NULL, PRIMARY KEY(tbl, id));
        CREATE TABLE IF NOT EXISTS changes(version INTEGER PRIMARY KEY AUTOINCREMENT, op TEXT NOT NULL, tbl TEXT NOT NULL,
                                           id TEXT NOT NULL, data TEXT);
        CREATE TABLE IF NOT EXISTS applied(client_id TEXT NOT NULL, tx_id INTEGER NOT NULL, times INTEGER NOT NULL,
                                           PRIMARY KEY(client_id, tx_id));
        CREATE TABLE IF NOT EXISTS clients(client_id TEXT PRIMARY KEY, epoch INTEGER NOT NULL);
    """)
    return db


def dumps(value):
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


class API(BaseHTTPRequestHandler):
    db = None
    protocol_version = "HTTP/1.1"
    # An answer is written as its headers and then its body: without TCP_NODELAY, a client that
    # keeps its connection (URLSession does) gets the body only when it acknowledges the headers,
    # which a delayed ACK holds for up to 40 ms.
    disable_nagle_algorithm = True

    def log_message(self, *args):
        pass

    def answer(self, status, body):
        data = dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def take_fault(self, name):
        with LOCK:
            if FAULTS[name] > 0:
                FAULTS[name] -= 1
                return True
        return False

    def do_GET(self):
        if self.path.startswith("/rows/"):
            return self.list_rows()
        if self.path != "/stats":
            return self.answer(404, {"error": "no such path"})
        with LOCK:
            times = self.db.execute("SELECT coalesce(max(times), 0), count(*) FROM applied").fetchone()
            rows = self.db.execute("SELECT count(*) FROM rows").fetchone()[0]
            in_progress = IN_PROGRESS[0]
        self.answer(200, {"most_applications": times[0], "transactions": times[1], "rows": rows, "uploads_in_progress": in_progress})

    def list_rows(self):
        """GET /rows/TABLE[?COLUMN=VALUE]: the table's rows as a JSON array of objects, each with
        its id and columns (those whose COLUMN holds the text VALUE): a list a payload pull reads."""
        address = urllib.parse.urlsplit(self.path)
        table = urllib.parse.unquote(address.path[len("/rows/"):])
        scope = urllib.parse.parse_qsl(address.query)
        with LOCK:
            found = self.db.execute("SELECT id, data FROM rows WHERE tbl = ? ORDER BY id", (table,)).fetchall()
        rows = []
        for row_id, data in found:
            row = dict(json.loads(data), id=row_id)
            if all(row.get(column) == value for column, value in scope):
                rows.append(row)
        self.answer(200, rows)

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length)
        if self.path == "/faults":
            with LOCK:
                FAULTS.update(json.loads(body))
            return self.answer(200, {"ok": True})
        if self.path == "/upload":
            with LOCK:
                IN_PROGRESS[0] += 1
            try:
                return self.handle_upload(body)
            finally:
                with LOCK:
                    IN_PROGRESS[0] -= 1
        if self.path == "/fetch":
            request = self.request_of(body)
            return request is not None and self.answer(200, self.fetch(request))
        self.answer(404, {"error": "no such path"})

    def request_of(self, body):
        """The request in `body`, or None once a 400 answer says why it is not one."""
        try:
            request = json.loads(body)
        except ValueError as error:
            self.answer(400, {"error": f"not JSON: {error}"})
            return None
        if not isinstance(request, dict) or request.get("version") != 1:
            self.answer(400, {"error": "format version 1 only"})
            return None
        return request

    def handle_upload(self, body):
        if self.take_fault("fail"):
            return self.answer(500, {"error": "injected failure"})
        if self.take_fault("delay_count"):
            time.sleep(FAULTS["delay_ms"] / 1000)
        request = self.request_of(body)
        if request is None:
            return
        status, answer = self.upload(request)
        if status == 200 and self.take_fault("drop_after_commit"):
            self.close_connection = True
            self.connection.close()  # committed, never answered: the client retries
            return
        return self.answer(status, answer)

    def upload(self, request):
        client, epoch = request["client_id"], request["epoch"]
        with LOCK:
            db = self.db
            db.execute("BEGIN IMMEDIATE")
            try:
                seen = db.execute("SELECT epoch FROM clients WHERE client_id = ?", (client,)).fetchone()
                if seen and seen[0] > epoch:
                    db.execute("ROLLBACK")
                    return 200, {"version": 1, "stale_epoch": seen[0]}
                for transaction in request["transactions"]:
                    for entry in transaction["entries"]:
                        title = str((entry.get("data") or {}).get("title", ""))
                        for code in (409, 422):
                            if title.startswith(f"refuse-{code}"):
                                db.execute("ROLLBACK")
                                return code, {"error": f"row {entry['id']} of {entry['table']}: refused ({code})"}
                db.execute("INSERT INTO clients(client_id, epoch) VALUES (?, ?) ON CONFLICT(client_id) DO UPDATE SET epoch = max(epoch, excluded.epoch)",
                           (client, epoch))
                results = []
                for transaction in request["transactions"]:
                    tx = transaction["id"]
                    if db.execute("UPDATE applied SET times = times WHERE client_id = ? AND tx_id = ?", (client, tx)).rowcount == 0:
                        db.execute("INSERT INTO applied(client_id, tx_id, times) VALUES (?, ?, 1)", (client, tx))
                        for entry in transaction["entries"]:
                            self.apply(db, entry)
                    results.append({"id": tx, "outcome": "applied"})
                db.execute("COMMIT")
                return 200, {"version": 1, "results": results}
            except Exception:
                db.execute("ROLLBACK")
                raise

    @staticmethod
    def apply(db, entry):
        table, row_id, op = entry["table"], entry["id"], entry["op"]
        if op == "DELETE":
            db.execute("DELETE FROM rows WHERE tbl = ? AND id = ?", (table, row_id))
            db.execute("INSERT INTO changes(op, tbl, id, data) VALUES ('DELETE', ?, ?, NULL)", (table, row_id))
            return
        old = db.execute("SELECT data FROM rows WHERE tbl = ? AND id = ?", (table, row_id)).fetchone()
        data = entry.get("data") or {}
        if op == "PATCH":
            if old is None:
                return  # the row was deleted: the delete wins
            merged = json.loads(old[0])
            merged.update(data)
            data = merged
        text = dumps(data)
        db.execute("INSERT INTO rows(tbl, id, data) VALUES (?, ?, ?) ON CONFLICT(tbl, id) DO UPDATE SET data = excluded.data", (table, row_id, text))
        db.execute("INSERT INTO changes(op, tbl, id, data) VALUES ('PUT', ?, ?, ?)", (table, row_id, text))

    def fetch(self, request):
        after = int(request.get("cursor") or 0)
        limit = max(1, int(request.get("limit", 1000)))
        with LOCK:
            rows = self.db.execute("SELECT version, op, tbl, id, data FROM changes WHERE version > ? ORDER BY version LIMIT ?",
                                   (after, limit + 1)).fetchall()
        more = len(rows) > limit
        rows = rows[:limit]
        changes = []
        for _, op, table, row_id, data in rows:
            change = {"op": op, "table": table, "id": row_id}
            if data is not None:
                change["data"] = json.loads(data)
            changes.append(change)
        cursor = str(rows[-1][0]) if rows else str(after)
        return {"version": 1, "changes": changes, "cursor": cursor, "has_more": more}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("db")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    API.db = open_db(args.db)
    server = ThreadingHTTPServer(("127.0.0.1", args.port), API)
    print(f"listening on {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
