// MD5 from OpenSSL's libcrypto (Debian's libssl3, which libpq5 needs too), for the row checksums
// of `verify`: PostgreSQL computes the same digest with its built-in md5(), so a client and the
// server compare rows without sending them.
//
// Loaded with dlopen(3) on first use, as libpq is (Sources/CLibPQ/shim.h): a program that never
// verifies pays nothing at start. The prototype is OpenSSL's own (openssl/md5.h), declared here
// so that building needs no -dev package.
//
// Related documentation: https://www.openssl.org/docs/man3.0/man3/MD5.html,
// https://www.postgresql.org/docs/15/functions-string.html (md5)
#include <dlfcn.h>
#include <stddef.h>

typedef unsigned char *(*tandem_md5_function)(const unsigned char *data, size_t count, unsigned char *digest);

/// libcrypto's MD5(), or NULL when the library cannot be loaded.
static inline tandem_md5_function tandem_md5_loaded(void) {
    static tandem_md5_function cached;
    tandem_md5_function function = __atomic_load_n(&cached, __ATOMIC_ACQUIRE);
    if (function == NULL) {
        void *library = dlopen("libcrypto.so.3", RTLD_NOW | RTLD_LOCAL);
        if (library == NULL) return NULL;
        function = (tandem_md5_function)dlsym(library, "MD5");
        if (function != NULL) __atomic_store_n(&cached, function, __ATOMIC_RELEASE);
    }
    return function;
}

/// The MD5 digest of `count` bytes at `data` into `digest` (16 bytes); 0, or -1 when libcrypto
/// is missing.
static inline int tandem_md5(const unsigned char *data, size_t count, unsigned char *digest) {
    tandem_md5_function function = tandem_md5_loaded();
    if (function == NULL) return -1;
    function(data, count, digest);
    return 0;
}
