/* lttng.h - the LTTng backend's two faces: session control for `trainscope
 * record --lttng` (lttng_session.c, in libtrainscope) and the memory probes
 * exported by libtrainscope-lttng.so (lttng.c).
 *
 * Sessions are driven through the `lttng` command (lttng-tools), which starts
 * a session daemon itself when none runs; the trace lands in DIR/lttng as CTF
 * and `trainscope stats DIR/lttng` reads it back (src/ingest/ctf.c).
 */
#ifndef TS_CAPTURE_LTTNG_H
#define TS_CAPTURE_LTTNG_H

#include <stddef.h>
#include <stdint.h>

#include "trainscope/common.h"

/* Create, configure (trainscope:* user-space events, vpid/vtid/procname
 * contexts) and start session `name` writing into DIR/lttng. On failure
 * nothing is left running and err says which lttng step failed and why. */
TS_NODISCARD int ts__lttng_session_start(const char *dir, const char *name, ts_error *err);
/* Stop and destroy session `name`; its CTF trace is complete on return. */
TS_NODISCARD int ts__lttng_session_stop(const char *name, ts_error *err);

/* Exported by libtrainscope-lttng.so: bytes at ptr allocated / freed on
 * device (-1 = host), fired as trainscope:alloc / trainscope:free. */
TS_API void ts_lttng_alloc(uint64_t ptr, uint64_t bytes, int32_t device);
TS_API void ts_lttng_free(uint64_t ptr, uint64_t bytes, int32_t device);

#endif
