#ifndef TANDEM_CSQLITE_SHIM_H
#define TANDEM_CSQLITE_SHIM_H

/* Debian's libsqlite3 is built with the preupdate hook, which, unlike the update hook, also
   reports changes to WITHOUT ROWID tables. */
#define SQLITE_ENABLE_PREUPDATE_HOOK 1
#include <sqlite3.h>
#include <stdio.h>

/// SQLITE_TRANSIENT is a macro over a function-pointer cast that Swift cannot import.
static inline sqlite3_destructor_type tandem_sqlite_transient(void) {
    return SQLITE_TRANSIENT;
}

/// sqlite3_db_config is variadic; this wraps the integer-flag form.
static inline int tandem_db_config_int(sqlite3 *db, int op, int value, int *result) {
    return sqlite3_db_config(db, op, value, result);
}

/// snprintf is variadic; this is `%.*g` of one double, as the bulk path writes reals.
static inline int tandem_format_double(char *buffer, int size, int precision, double value) {
    return snprintf(buffer, (size_t)size, "%.*g", precision, value);
}

/// sqlite3_config is variadic; this turns off SQLite's memory statistics, whose upkeep takes a
/// mutex on every allocation. It succeeds only before SQLite is initialized (SQLITE_MISUSE after).
static inline int tandem_sqlite_disable_memory_statistics(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

/// Copies the first `count` bytes (at most 136) of the WAL index (the `-shm`) into `out` from the
/// mapping of it that `db`'s main database file already has, through the VFS's own xShmMap
/// (https://www.sqlite.org/c3ref/io_methods.html): no system call, unlike a read of the file.
/// Returns 1, or 0 when the index could not be had. Call it only while `db` holds a transaction
/// in WAL mode: the index is open and mapped then (xShmMap would open it otherwise).
static inline int tandem_wal_index_header(sqlite3 *db, unsigned char *out, int count) {
    sqlite3_file *file = 0;
    if (count < 0 || count > 136) return 0;
    if (sqlite3_file_control(db, "main", SQLITE_FCNTL_FILE_POINTER, &file) != SQLITE_OK || file == 0) return 0;
    const sqlite3_io_methods *methods = file->pMethods;
    if (methods == 0 || methods->iVersion < 2 || methods->xShmMap == 0) return 0;
    volatile void *region = 0;
    /* bExtend 0: the index is not grown. */
    if (methods->xShmMap(file, 0, 32768, 0, &region) != SQLITE_OK || region == 0) return 0;
    for (int i = 0; i < count; i++) out[i] = ((volatile unsigned char *)region)[i];
    return 1;
}

#endif
