/* dynlib.h - optional shared libraries opened on first use (dlopen), so that
 * a process pays for loading and relocating a library only when it reads or
 * writes the format that needs it: libsqlite3 (nsys exports, `export
 * --sqlite`), libbabeltrace2 (CTF traces). Linked normally, they cost every
 * process about 1.75 M instructions of symbol binding at start (libsqlite3
 * is bound eagerly: 1,596 bindings), 0.35 ms of a 1.25 ms start.
 *
 * Not for: libraries every reader uses (zlib, isa-l, zstd are small and stay
 * linked). A library's API header (core/sqlite_api.h, ingest/bt_api.h)
 * lists its functions once; its calls go through a table of pointers that
 * ts__dynlib_open fills, all or nothing.
 */
#ifndef TS_CORE_DYNLIB_H
#define TS_CORE_DYNLIB_H

#include "core/core.h"

typedef struct ts_dynlib {
    const char         *soname;   /* "libsqlite3.so.0" */
    const char *const  *names;    /* n function names */
    void              **fns;      /* n slots (the API table), filled on success */
    size_t              n;
    int                 state;    /* 0 not tried, 1 open, -1 failed (internal) */
    char                why[256]; /* the failure, for every later caller */
} ts_dynlib;

/* A library's API table from its X-macro list of functions FNS: one pointer
 * per function, typed as the function its header declares. */
#define TS_DYNLIB_MEMBER(f) __typeof__(f) *f;
#define TS_DYNLIB_NAME(f) #f,

/* In the library's header: the table's type and the opener's prototype. */
#define TS_DYNLIB_DECLARE(TYPE, TABLE, FNS, OPEN_FN)  \
    typedef struct TYPE { FNS(TS_DYNLIB_MEMBER) } TYPE; \
    extern TYPE TABLE;                                 \
    TS_NODISCARD int OPEN_FN(const char *who, ts_error *err);

/* In the library's .c: the table TABLE (of type TYPE), its names and OPEN_FN,
 * which opens SONAME and fills TABLE (ts__dynlib_open). */
#define TS_DYNLIB_DEFINE(TYPE, TABLE, FNS, SONAME, OPEN_FN)                                              \
    TYPE TABLE;                                                                                         \
    static const char *const TABLE##_names[] = {FNS(TS_DYNLIB_NAME)};                                   \
    _Static_assert(sizeof TABLE == sizeof TABLE##_names / sizeof TABLE##_names[0] * sizeof(void *),       \
                   #TYPE " is one pointer per name");                                                   \
    static ts_dynlib TABLE##_lib = {SONAME, TABLE##_names, (void **)(void *)&TABLE,                      \
                                    sizeof TABLE##_names / sizeof TABLE##_names[0], 0, ""};             \
    int OPEN_FN(const char *who, ts_error *err) { return ts__dynlib_open(&TABLE##_lib, who, err); }

/* Open l once per process (thread-safe); TS_OK when every function was
 * found, else TS_EFORMAT with "WHO: needs SONAME (...)" in err. */
TS_NODISCARD int ts__dynlib_open(ts_dynlib *l, const char *who, ts_error *err);

#endif
