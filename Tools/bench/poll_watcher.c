/*
 * Polling baselines and a line stamper for Tools/bench.
 *
 *   poll_watcher poll DB INTERVAL_US SQL
 *       The usual way to watch an SQLite file without Tandem: open DB, PRAGMA busy_timeout=5000,
 *       then every INTERVAL_US check PRAGMA data_version and, when it changed (and once at the
 *       start), re-run SQL and print its rows as one JSON array of objects per line (integer and
 *       text columns), flushed at once. Runs until killed.
 *
 *   poll_watcher stamp COMMAND [ARG...]
 *       Runs COMMAND with its stdout on a pipe and prints each line it writes as
 *       "<arrival_us> <line>", arrival_us being CLOCK_MONOTONIC microseconds when the line was
 *       read, so that every watcher (Tandem's or a poller) is timed the same way. Forwards
 *       SIGTERM/SIGINT to COMMAND and exits with it.
 */
#define _GNU_SOURCE
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <errno.h>
#include <signal.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/wait.h>

static long long now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

static void die(sqlite3 *db, const char *what) {
    fprintf(stderr, "poll_watcher: %s: %s\n", what, db ? sqlite3_errmsg(db) : strerror(errno));
    exit(1);
}

static void put_json_string(FILE *out, const unsigned char *s) {
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') { fputc('\\', out); fputc(*s, out); }
        else if (*s < 0x20) fprintf(out, "\\u%04x", *s);
        else fputc(*s, out);
    }
    fputc('"', out);
}

static int run_poll(int argc, char **argv) {
    if (argc < 5) { fprintf(stderr, "usage: poll_watcher poll DB INTERVAL_US SQL\n"); return 2; }
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(argv[2], &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) die(db, "open");
    if (sqlite3_exec(db, "PRAGMA busy_timeout=5000", NULL, NULL, NULL) != SQLITE_OK) die(db, "busy_timeout");
    long long interval = atoll(argv[3]);
    sqlite3_stmt *version, *query;
    if (sqlite3_prepare_v2(db, "PRAGMA data_version", -1, &version, NULL) != SQLITE_OK) die(db, "prepare data_version");
    if (sqlite3_prepare_v2(db, argv[4], -1, &query, NULL) != SQLITE_OK) die(db, "prepare query");
    long long last = -1;
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    for (;;) {
        if (sqlite3_step(version) != SQLITE_ROW) die(db, "data_version");
        long long v = sqlite3_column_int64(version, 0);
        sqlite3_reset(version);
        if (v != last) {
            last = v;
            fputc('[', stdout);
            int rc, first = 1;
            while ((rc = sqlite3_step(query)) == SQLITE_ROW) {
                fputs(first ? "{" : ",{", stdout);
                first = 0;
                for (int c = 0; c < sqlite3_column_count(query); c++) {
                    if (c) fputc(',', stdout);
                    put_json_string(stdout, (const unsigned char *)sqlite3_column_name(query, c));
                    fputc(':', stdout);
                    switch (sqlite3_column_type(query, c)) {
                    case SQLITE_INTEGER: printf("%lld", (long long)sqlite3_column_int64(query, c)); break;
                    case SQLITE_FLOAT: printf("%.17g", sqlite3_column_double(query, c)); break;
                    case SQLITE_NULL: fputs("null", stdout); break;
                    default: put_json_string(stdout, sqlite3_column_text(query, c));
                    }
                }
                fputc('}', stdout);
            }
            sqlite3_reset(query);
            if (rc != SQLITE_DONE) die(db, "query");
            fputs("]\n", stdout);
            fflush(stdout);
        }
        next.tv_nsec += (interval % 1000000) * 1000;
        next.tv_sec += interval / 1000000 + next.tv_nsec / 1000000000;
        next.tv_nsec %= 1000000000;
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec > next.tv_sec || (now.tv_sec == next.tv_sec && now.tv_nsec > next.tv_nsec)) next = now;  /* fell behind */
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR) {}
    }
}

static pid_t child = 0;
static void forward(int sig) { if (child > 0) kill(child, sig); }

static int run_stamp(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: poll_watcher stamp COMMAND [ARG...]\n"); return 2; }
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) die(NULL, "pipe");
    child = fork();
    if (child < 0) die(NULL, "fork");
    if (child == 0) {
        dup2(fds[1], STDOUT_FILENO);
        execvp(argv[2], argv + 2);
        fprintf(stderr, "poll_watcher: cannot run %s: %s\n", argv[2], strerror(errno));
        _exit(127);
    }
    close(fds[1]);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = forward;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    static char buffer[1 << 16], line[1 << 20];
    size_t used = 0;
    for (;;) {
        ssize_t n = read(fds[0], buffer, sizeof buffer);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        long long at = now_us();
        for (ssize_t i = 0; i < n; i++) {
            if (buffer[i] == '\n') {
                printf("%lld %.*s\n", at, (int)used, line);
                used = 0;
            } else if (used < sizeof line - 1) {
                line[used++] = buffer[i];
            }
        }
        fflush(stdout);
    }
    int status = 0;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {}
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int main(int argc, char **argv) {
    signal(SIGPIPE, SIG_IGN);
    if (argc >= 2 && strcmp(argv[1], "poll") == 0) return run_poll(argc, argv);
    if (argc >= 2 && strcmp(argv[1], "stamp") == 0) return run_stamp(argc, argv);
    fprintf(stderr, "usage: poll_watcher poll|stamp ...\n");
    return 2;
}
