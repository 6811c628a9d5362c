/* common.h - what every trainscope header shares: export marker, status codes,
 * the error detail object, and the allocation hook.
 *
 * Ownership rule for the whole API: a `*_create` result is owned by the caller
 * and released with the matching `*_destroy`; a `*_borrow`/`*_get` result lives
 * as long as its parent and is never freed by the caller.
 * Time is integer nanoseconds everywhere (int64_t, names end in _ns).
 */
#ifndef TRAINSCOPE_COMMON_H
#define TRAINSCOPE_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TS_API __attribute__((visibility("default")))
#define TS_NODISCARD __attribute__((warn_unused_result))

/* Status codes: 0 is success, failures are negative. One table gives both the
 * enum and ts_strerror()'s text, so the two cannot drift apart. */
#define TS_STATUS_MAP(X)                                                   \
    X(OK,       0,  "success")                                             \
    X(ENOMEM,  -1,  "out of memory")                                       \
    X(EIO,     -2,  "I/O error")                                           \
    X(EPARSE,  -3,  "malformed input")                                     \
    X(EINVAL,  -4,  "invalid argument")                                    \
    X(ENOENT,  -5,  "not found")                                           \
    X(EFORMAT, -6,  "unsupported or inconsistent content")                 \
    X(ENODATA, -7,  "nothing to analyze")                                  \
    X(ERANGE,  -8,  "value out of range")

enum {
#define TS_X_(name, code, text) TS_##name = code,
    TS_STATUS_MAP(TS_X_)
#undef TS_X_
};

TS_API const char *ts_strerror(int status);

/* Details of a failure. Functions that can fail on input take a ts_error*
 * (may be NULL) and fill it; the message is complete and ready to print,
 * e.g. "trace.json: byte 1234: expected ',' or '}'". A public function clears
 * it on entry, so it needs no initialization. */
typedef struct ts_error {
    int  status;        /* TS_* code, TS_OK when nothing failed */
    char msg[1024];     /* one line, no trailing newline; "" when none */
} ts_error;

/* The single allocation hook (Lua's lua_Alloc shape). new_size 0 frees and
 * returns NULL. Tests swap it to inject out-of-memory. */
typedef void *(*ts_alloc_fn)(void *ud, void *ptr, size_t old_size, size_t new_size);
TS_API void ts_set_allocator(ts_alloc_fn fn, void *ud);

/* Memory budget of the default allocator (`--max-rss`): bytes it may hold
 * at once, 0 = no limit (the default). An allocation past it fails as if the
 * machine were out of memory, so the call that needed it returns TS_ENOMEM
 * and leaves no partial result; ts_memory_limit_hit() then says how much was
 * held, how much more was asked and in which phase ("loading rank files",
 * "building the graph", ...), for the message; setting a limit clears that
 * record. Allocations through a hook
 * set with ts_set_allocator are not counted. */
TS_API void   ts_set_memory_limit(size_t bytes);
TS_API size_t ts_memory_held(void);   /* bytes the default allocator holds now */
TS_API bool   ts_memory_limit_hit(size_t *held, size_t *asked, const char **phase);

TS_API const char *ts_version(void);

#ifdef __cplusplus
}
#endif
#endif
