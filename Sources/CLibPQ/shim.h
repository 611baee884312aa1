// libpq, PostgreSQL's C client library (Debian's libpq-dev; pkg-config libpq gives the include path).
#include <libpq-fe.h>
