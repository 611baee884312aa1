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

#endif
