// libpq, PostgreSQL's C client library: its header from Debian's libpq-dev, the library itself
// (libpq5) loaded with dlopen(3) when a PostgreSQL backend is first used.
//
// Linked at build time, libpq and the twenty libraries it needs (TLS, Kerberos, LDAP) were
// loaded and relocated at every start of every program linking TandemPostgres, `tandem` among
// them: about 9 ms of a command's start (`tandem --version` 19.6 ms, 10.8 without), whatever
// backend it used, or none. Each function below calls libpq's function of the same name,
// looked up once with dlsym(3); the Swift side first calls tandem_libpq_error(), which loads the
// library or says why it cannot, then tandem_libpq_missing_function().
//
// Related documentation: https://www.postgresql.org/docs/15/libpq.html,
// https://man7.org/linux/man-pages/man3/dlopen.3.html
#include <postgresql/libpq-fe.h>
#include <dlfcn.h>
#include <stddef.h>

/// The loaded libpq, or NULL when it cannot be loaded.
static inline void *tandem_libpq(void) {
    static void *library;
    void *loaded = __atomic_load_n(&library, __ATOMIC_ACQUIRE);
    if (loaded == NULL) {
        loaded = dlopen("libpq.so.5", RTLD_NOW | RTLD_LOCAL);
        if (loaded != NULL) __atomic_store_n(&library, loaded, __ATOMIC_RELEASE);
    }
    return loaded;
}

// The libpq functions called below, every one of them (X-macro).
#define TANDEM_LIBPQ_FUNCTIONS(X) \
    X(PQconnectdb) X(PQstatus) X(PQerrorMessage) X(PQfinish) X(PQsetNoticeProcessor) X(PQexecParams) \
    X(PQsendQueryParams) X(PQgetResult) X(PQclear) X(PQresultStatus) X(PQresultErrorField) X(PQntuples) \
    X(PQnfields) X(PQgetisnull) X(PQgetvalue) X(PQsocket) X(PQbackendPID) X(PQconsumeInput) X(PQnotifies) \
    X(PQfreemem) X(PQenterPipelineMode) X(PQexitPipelineMode) X(PQpipelineSync) X(PQtransactionStatus) \
    X(PQsendPrepare) X(PQsendQueryPrepared) X(PQexecPrepared) X(PQconninfoParse) X(PQconninfoFree)

/// NULL once libpq is loaded (loading it now if needed), else why not (dlerror(3)'s reason).
static inline const char *tandem_libpq_error(void) {
    if (tandem_libpq() != NULL) return NULL;
    const char *reason = dlerror();
    return reason != NULL ? reason : "libpq.so.5 could not be loaded";
}

/// The first function called below that the loaded libpq lacks (pipeline mode came with
/// libpq 14), or NULL when it has them all: checked before the first call, so that none is ever
/// called through NULL.
static inline const char *tandem_libpq_missing_function(void) {
    void *library = tandem_libpq();
#define TANDEM_LIBPQ_CHECK(name) if (dlsym(library, #name) == NULL) return #name;
    TANDEM_LIBPQ_FUNCTIONS(TANDEM_LIBPQ_CHECK)
#undef TANDEM_LIBPQ_CHECK
    return NULL;
}

// `function`: libpq's `name`, looked up on first use (libpq is loaded by then).
#define TANDEM_LIBPQ_FUNCTION(name) \
    static __typeof__(&name) cached; \
    __typeof__(&name) function = __atomic_load_n(&cached, __ATOMIC_ACQUIRE); \
    if (function == NULL) { \
        function = (__typeof__(&name))dlsym(tandem_libpq(), #name); \
        __atomic_store_n(&cached, function, __ATOMIC_RELEASE); \
    }

static inline PGconn *tandem_PQconnectdb(const char *conninfo) { TANDEM_LIBPQ_FUNCTION(PQconnectdb) return function(conninfo); }
static inline ConnStatusType tandem_PQstatus(const PGconn *conn) { TANDEM_LIBPQ_FUNCTION(PQstatus) return function(conn); }
static inline char *tandem_PQerrorMessage(const PGconn *conn) { TANDEM_LIBPQ_FUNCTION(PQerrorMessage) return function(conn); }
static inline void tandem_PQfinish(PGconn *conn) { TANDEM_LIBPQ_FUNCTION(PQfinish) function(conn); }
static inline PQnoticeProcessor tandem_PQsetNoticeProcessor(PGconn *conn, PQnoticeProcessor proc, void *arg) {
    TANDEM_LIBPQ_FUNCTION(PQsetNoticeProcessor) return function(conn, proc, arg);
}
static inline PGresult *tandem_PQexecParams(
    PGconn *conn, const char *command, int nParams, const Oid *paramTypes, const char *const *paramValues,
    const int *paramLengths, const int *paramFormats, int resultFormat) {
    TANDEM_LIBPQ_FUNCTION(PQexecParams) return function(conn, command, nParams, paramTypes, paramValues, paramLengths, paramFormats, resultFormat);
}
static inline int tandem_PQsendQueryParams(
    PGconn *conn, const char *command, int nParams, const Oid *paramTypes, const char *const *paramValues,
    const int *paramLengths, const int *paramFormats, int resultFormat) {
    TANDEM_LIBPQ_FUNCTION(PQsendQueryParams) return function(conn, command, nParams, paramTypes, paramValues, paramLengths, paramFormats, resultFormat);
}
static inline PGresult *tandem_PQgetResult(PGconn *conn) { TANDEM_LIBPQ_FUNCTION(PQgetResult) return function(conn); }
static inline void tandem_PQclear(PGresult *res) { TANDEM_LIBPQ_FUNCTION(PQclear) function(res); }
static inline ExecStatusType tandem_PQresultStatus(const PGresult *res) { TANDEM_LIBPQ_FUNCTION(PQresultStatus) return function(res); }
static inline char *tandem_PQresultErrorField(const PGresult *res, int fieldcode) {
    TANDEM_LIBPQ_FUNCTION(PQresultErrorField) return function(res, fieldcode);
}
static inline int tandem_PQntuples(const PGresult *res) { TANDEM_LIBPQ_FUNCTION(PQntuples) return function(res); }
static inline int tandem_PQnfields(const PGresult *res) { TANDEM_LIBPQ_FUNCTION(PQnfields) return function(res); }
static inline int tandem_PQgetisnull(const PGresult *res, int tup_num, int field_num) {
    TANDEM_LIBPQ_FUNCTION(PQgetisnull) return function(res, tup_num, field_num);
}
static inline char *tandem_PQgetvalue(const PGresult *res, int tup_num, int field_num) {
    TANDEM_LIBPQ_FUNCTION(PQgetvalue) return function(res, tup_num, field_num);
}
static inline int tandem_PQsocket(const PGconn *conn) { TANDEM_LIBPQ_FUNCTION(PQsocket) return function(conn); }
static inline int tandem_PQbackendPID(const PGconn *conn) { TANDEM_LIBPQ_FUNCTION(PQbackendPID) return function(conn); }
static inline int tandem_PQconsumeInput(PGconn *conn) { TANDEM_LIBPQ_FUNCTION(PQconsumeInput) return function(conn); }
static inline PGnotify *tandem_PQnotifies(PGconn *conn) { TANDEM_LIBPQ_FUNCTION(PQnotifies) return function(conn); }
static inline void tandem_PQfreemem(void *ptr) { TANDEM_LIBPQ_FUNCTION(PQfreemem) function(ptr); }
static inline int tandem_PQenterPipelineMode(PGconn *conn) { TANDEM_LIBPQ_FUNCTION(PQenterPipelineMode) return function(conn); }
static inline int tandem_PQexitPipelineMode(PGconn *conn) { TANDEM_LIBPQ_FUNCTION(PQexitPipelineMode) return function(conn); }
static inline int tandem_PQpipelineSync(PGconn *conn) { TANDEM_LIBPQ_FUNCTION(PQpipelineSync) return function(conn); }
static inline PGTransactionStatusType tandem_PQtransactionStatus(const PGconn *conn) {
    TANDEM_LIBPQ_FUNCTION(PQtransactionStatus) return function(conn);
}
static inline int tandem_PQsendPrepare(PGconn *conn, const char *stmtName, const char *query, int nParams, const Oid *paramTypes) {
    TANDEM_LIBPQ_FUNCTION(PQsendPrepare) return function(conn, stmtName, query, nParams, paramTypes);
}
static inline int tandem_PQsendQueryPrepared(
    PGconn *conn, const char *stmtName, int nParams, const char *const *paramValues, const int *paramLengths,
    const int *paramFormats, int resultFormat) {
    TANDEM_LIBPQ_FUNCTION(PQsendQueryPrepared) return function(conn, stmtName, nParams, paramValues, paramLengths, paramFormats, resultFormat);
}
static inline PGresult *tandem_PQexecPrepared(
    PGconn *conn, const char *stmtName, int nParams, const char *const *paramValues, const int *paramLengths,
    const int *paramFormats, int resultFormat) {
    TANDEM_LIBPQ_FUNCTION(PQexecPrepared) return function(conn, stmtName, nParams, paramValues, paramLengths, paramFormats, resultFormat);
}
static inline PQconninfoOption *tandem_PQconninfoParse(const char *conninfo, char **errmsg) {
    TANDEM_LIBPQ_FUNCTION(PQconninfoParse) return function(conninfo, errmsg);
}
static inline void tandem_PQconninfoFree(PQconninfoOption *connOptions) { TANDEM_LIBPQ_FUNCTION(PQconninfoFree) function(connOptions); }
