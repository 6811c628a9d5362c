/* snapshot.h - internals of snapshot.c shared with tests and fuzzing. */
#ifndef TS_MEMORY_SNAPSHOT_H
#define TS_MEMORY_SNAPSHOT_H

#include "core/core.h"
#include "trainscope/memory.h"

/* ts_mem_snapshot_load over bytes in memory (an uncompressed pickle); name
 * is used in errors. */
TS_NODISCARD int ts__mem_snapshot_from_buffer(const char *name, const void *data, size_t n, ts_mem_snapshot **out,
                                              ts_error *err);

#endif
