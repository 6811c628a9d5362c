/* plan_text.h - reading plan.json back as text (plan_read.c): the whole
 * file, and a member's value by key. A tolerant scanner, not a JSON
 * validator; shared by the bucket plan (plan_read.c) and the precision plan
 * (precision_pass.c). */
#ifndef TS_OPTIMIZE_PLAN_TEXT_H
#define TS_OPTIMIZE_PLAN_TEXT_H

#include "core/core.h"

/* The file at path read whole (at most 1 GiB), NUL-terminated; *n is the
 * allocation's size, for ts__free(*out, *n). */
TS_NODISCARD int ts__plan_slurp(const char *path, char **out, size_t *n, ts_error *err);
/* The value of the first member "key" at or after buf (after its ':' and
 * blanks; a string equal to "key" that is not a member is skipped); NULL
 * when absent. */
const char *ts__plan_member(const char *buf, const char *key);

#endif
