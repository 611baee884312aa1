/*
 * Plain SQLite clients for Tools/bench: the same SQL Tandem runs, without Tandem's coordination.
 *
 *   plain_writer write DB WRITER TRANSACTIONS ROWS START_AT_US [INTERVAL_US [normal]]
 *       Opens DB (already WAL), sets PRAGMA busy_timeout=5000 and nothing else, sleeps until
 *       START_AT_US (CLOCK_MONOTONIC microseconds), then runs TRANSACTIONS transactions of
 *       BEGIN IMMEDIATE; ROWS x INSERT INTO stress(...); COMMIT. After each commit prints
 *       "<i> <start_us> <commit_us>" (start before BEGIN, i.e. before any lock wait). A step
 *       that fails with SQLITE_BUSY after the busy timeout rolls back and retries the whole
 *       transaction (start_us stays the first attempt's); the count goes to stderr.
 *       With INTERVAL_US > 0, transaction i starts no earlier than START_AT_US + i * INTERVAL_US.
 *       With "normal", also sets PRAGMA synchronous=NORMAL (Tandem's setting; SQLite's default
 *       in WAL mode is FULL): a supplementary run that matches Tandem's durability.
 *
 *   plain_writer bulk DB MODE ROWS
 *       One transaction of ROWS inserts; prints "<rows> <microseconds>" (BEGIN to COMMIT).
 *       MODE view:  INSERT INTO stress(id, writer, txn, row, payload, written_at) (view + triggers + CRUD)
 *            plain: the same INSERT into plain_stress, an ordinary table with the same columns
 *            apply: INSERT OR REPLACE INTO ps_data__stress(id, data) VALUES (?, json(?)) (download-style)
 *            direct: the writes of Tandem's direct bulk insert (data table and ps_crud, 32 rows per
 *                   statement) with the JSON texts pre-built in C: that path's ceiling
 *            view-prepare-each: as view, but prepares the INSERT again for every row (what
 *                   Tandem's Transaction.execute does), to show what the preparing costs
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <errno.h>

static long long now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

static void sleep_until(long long at_us) {
    for (;;) {
        long long wait = at_us - now_us();
        if (wait <= 0) return;
        struct timespec ts = { wait / 1000000, (wait % 1000000) * 1000 };
        nanosleep(&ts, NULL);
    }
}

static void die(sqlite3 *db, const char *what) {
    fprintf(stderr, "plain_writer: %s: %s\n", what, db ? sqlite3_errmsg(db) : "?");
    exit(1);
}

static sqlite3 *open_db(const char *path) {
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) die(db, "open");
    if (sqlite3_exec(db, "PRAGMA busy_timeout=5000", NULL, NULL, NULL) != SQLITE_OK) die(db, "busy_timeout");
    return db;
}

static int is_busy(int rc) { return (rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED; }

static const char *payload = "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"; /* 32 chars */

static int run_write(int argc, char **argv) {
    if (argc < 7) { fprintf(stderr, "usage: plain_writer write DB WRITER TRANSACTIONS ROWS START_AT_US [INTERVAL_US]\n"); return 2; }
    const char *path = argv[2];
    int writer = atoi(argv[3]);
    long transactions = atol(argv[4]);
    int rows = atoi(argv[5]);
    long long start_at = atoll(argv[6]);
    long long interval = argc > 7 ? atoll(argv[7]) : 0;
    int normal = argc > 8 && strcmp(argv[8], "normal") == 0;

    sqlite3 *db = open_db(path);
    if (normal && sqlite3_exec(db, "PRAGMA synchronous=NORMAL", NULL, NULL, NULL) != SQLITE_OK) die(db, "synchronous");
    sqlite3_stmt *begin, *insert, *commit, *rollback;
    if (sqlite3_prepare_v2(db, "BEGIN IMMEDIATE", -1, &begin, NULL) != SQLITE_OK) die(db, "prepare BEGIN");
    if (sqlite3_prepare_v2(db, "INSERT INTO stress(id, writer, txn, row, payload, written_at) VALUES (?, ?, ?, ?, ?, ?)",
                           -1, &insert, NULL) != SQLITE_OK) die(db, "prepare INSERT");
    if (sqlite3_prepare_v2(db, "COMMIT", -1, &commit, NULL) != SQLITE_OK) die(db, "prepare COMMIT");
    if (sqlite3_prepare_v2(db, "ROLLBACK", -1, &rollback, NULL) != SQLITE_OK) die(db, "prepare ROLLBACK");
    setvbuf(stdout, NULL, _IOLBF, 0);
    sleep_until(start_at);

    long busy_retries = 0;
    char id[64];
    for (long i = 0; i < transactions; i++) {
        if (interval > 0) sleep_until(start_at + i * interval);
        long long start = now_us();
        for (;;) {
            int rc = sqlite3_step(begin);
            sqlite3_reset(begin);
            if (is_busy(rc)) { busy_retries++; continue; }
            if (rc != SQLITE_DONE) die(db, "BEGIN IMMEDIATE");
            int failed = 0;
            for (int r = 0; r < rows && !failed; r++) {
                snprintf(id, sizeof id, "w%d-t%ld-r%d", writer, i, r);
                sqlite3_bind_text(insert, 1, id, -1, SQLITE_TRANSIENT);
                sqlite3_bind_int(insert, 2, writer);
                sqlite3_bind_int64(insert, 3, i);
                sqlite3_bind_int(insert, 4, r);
                sqlite3_bind_text(insert, 5, payload, 32, SQLITE_STATIC);
                sqlite3_bind_int64(insert, 6, start);
                rc = sqlite3_step(insert);
                sqlite3_reset(insert);
                if (rc != SQLITE_DONE) { if (is_busy(rc)) failed = 1; else die(db, "INSERT"); }
            }
            if (!failed) {
                rc = sqlite3_step(commit);
                sqlite3_reset(commit);
                if (rc == SQLITE_DONE) break;
                if (!is_busy(rc)) die(db, "COMMIT");
            }
            busy_retries++;
            sqlite3_step(rollback);
            sqlite3_reset(rollback);
        }
        printf("%ld %lld %lld\n", i, start, now_us());
    }
    if (busy_retries) fprintf(stderr, "busy_retries %ld\n", busy_retries);
    sqlite3_finalize(begin); sqlite3_finalize(insert); sqlite3_finalize(commit); sqlite3_finalize(rollback);
    sqlite3_close(db);
    return 0;
}

/* The writes Tandem's direct bulk insert makes (data table and upload queue, DIRECT_BATCH rows per
 * statement), with every JSON text pre-built: the ceiling for that path. */
#define DIRECT_BATCH 32
static void prepare_direct(sqlite3 *db, int k, sqlite3_stmt **data, sqlite3_stmt **crud) {
    char data_sql[4096], crud_sql[4096];
    int n1 = snprintf(data_sql, sizeof data_sql, "INSERT INTO ps_data__stress(id, data) VALUES ");
    int n2 = snprintf(crud_sql, sizeof crud_sql, "INSERT INTO ps_crud(tx_id, data) VALUES ");
    for (int i = 0; i < k; i++) {
        n1 += snprintf(data_sql + n1, sizeof data_sql - n1, "%s(?, ?)", i ? ", " : "");
        n2 += snprintf(crud_sql + n2, sizeof crud_sql - n2, "%s(?, ?)", i ? ", " : "");
    }
    if (*data) sqlite3_finalize(*data);
    if (*crud) sqlite3_finalize(*crud);
    if (sqlite3_prepare_v2(db, data_sql, -1, data, NULL) != SQLITE_OK) die(db, "prepare");
    if (sqlite3_prepare_v2(db, crud_sql, -1, crud, NULL) != SQLITE_OK) die(db, "prepare");
}

static int run_bulk_direct(sqlite3 *db, long rows) {
    sqlite3_stmt *data = NULL, *crud = NULL;
    int prepared = DIRECT_BATCH;
    prepare_direct(db, prepared, &data, &crud);
    static char ids[DIRECT_BATCH][64], json[DIRECT_BATCH][256], entry[DIRECT_BATCH][512];
    long long start = now_us();
    if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) die(db, "BEGIN IMMEDIATE");
    for (long r = 0; r < rows; r += DIRECT_BATCH) {
        int count = rows - r < DIRECT_BATCH ? (int)(rows - r) : DIRECT_BATCH;
        if (count != prepared) { prepared = count; prepare_direct(db, count, &data, &crud); }
        for (int k = 0; k < count; k++) {
            snprintf(ids[k], sizeof ids[k], "w0-t%ld-r0", r + k);
            int n = snprintf(json[k], sizeof json[k], "{\"writer\":0,\"txn\":%ld,\"row\":0,\"payload\":\"%s\",\"written_at\":%lld}", r + k, payload, start);
            int m = snprintf(entry[k], sizeof entry[k], "{\"op\":\"PUT\",\"type\":\"stress\",\"id\":\"%s\",\"data\":%s}", ids[k], json[k]);
            sqlite3_bind_text(data, 2 * k + 1, ids[k], -1, SQLITE_STATIC);
            sqlite3_bind_text(data, 2 * k + 2, json[k], n, SQLITE_STATIC);
            sqlite3_bind_int64(crud, 2 * k + 1, 1);
            sqlite3_bind_text(crud, 2 * k + 2, entry[k], m, SQLITE_STATIC);
        }
        if (sqlite3_step(data) != SQLITE_DONE) die(db, "INSERT data");
        sqlite3_reset(data);
        if (sqlite3_step(crud) != SQLITE_DONE) die(db, "INSERT crud");
        sqlite3_reset(crud);
    }
    if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) die(db, "COMMIT");
    printf("%ld %lld\n", rows, now_us() - start);
    sqlite3_finalize(data); sqlite3_finalize(crud);
    sqlite3_close(db);
    return 0;
}

static int run_bulk(int argc, char **argv) {
    if (argc < 5) { fprintf(stderr, "usage: plain_writer bulk DB view|plain|apply ROWS\n"); return 2; }
    const char *path = argv[2], *mode = argv[3];
    long rows = atol(argv[4]);
    sqlite3 *db = open_db(path);
    const char *sql;
    int apply = 0, prepare_each = 0;
    if (strcmp(mode, "direct") == 0) return run_bulk_direct(db, rows);
    if (strcmp(mode, "view-prepare-each") == 0) { mode = "view"; prepare_each = 1; }
    if (strcmp(mode, "view") == 0) sql = "INSERT INTO stress(id, writer, txn, row, payload, written_at) VALUES (?, ?, ?, ?, ?, ?)";
    else if (strcmp(mode, "plain") == 0) sql = "INSERT INTO plain_stress(id, writer, txn, row, payload, written_at) VALUES (?, ?, ?, ?, ?, ?)";
    else if (strcmp(mode, "apply") == 0) { sql = "INSERT OR REPLACE INTO ps_data__stress(id, data) VALUES (?, json(?))"; apply = 1; }
    else { fprintf(stderr, "plain_writer: unknown bulk mode %s\n", mode); return 2; }
    sqlite3_stmt *insert;
    if (sqlite3_prepare_v2(db, sql, -1, &insert, NULL) != SQLITE_OK) die(db, "prepare");
    char id[64], json[256];
    long long start = now_us();
    if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) die(db, "BEGIN IMMEDIATE");
    for (long r = 0; r < rows; r++) {
        if (prepare_each && r > 0) {
            sqlite3_finalize(insert);
            if (sqlite3_prepare_v2(db, sql, -1, &insert, NULL) != SQLITE_OK) die(db, "prepare");
        }
        snprintf(id, sizeof id, "w0-t%ld-r0", r);
        sqlite3_bind_text(insert, 1, id, -1, SQLITE_TRANSIENT);
        if (apply) {
            int n = snprintf(json, sizeof json, "{\"writer\":0,\"txn\":%ld,\"row\":0,\"payload\":\"%s\",\"written_at\":%lld}", r, payload, start);
            sqlite3_bind_text(insert, 2, json, n, SQLITE_TRANSIENT);
        } else {
            sqlite3_bind_int(insert, 2, 0);
            sqlite3_bind_int64(insert, 3, r);
            sqlite3_bind_int(insert, 4, 0);
            sqlite3_bind_text(insert, 5, payload, 32, SQLITE_STATIC);
            sqlite3_bind_int64(insert, 6, start);
        }
        if (sqlite3_step(insert) != SQLITE_DONE) die(db, "INSERT");
        sqlite3_reset(insert);
    }
    if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) die(db, "COMMIT");
    long long elapsed = now_us() - start;
    printf("%ld %lld\n", rows, elapsed);
    sqlite3_finalize(insert);
    sqlite3_close(db);
    return 0;
}

int main(int argc, char **argv) {
    if (argc >= 2 && strcmp(argv[1], "write") == 0) return run_write(argc, argv);
    if (argc >= 2 && strcmp(argv[1], "bulk") == 0) return run_bulk(argc, argv);
    fprintf(stderr, "usage: plain_writer write|bulk ...\n");
    return 2;
}
