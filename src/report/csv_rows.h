/* csv_rows.h - the CSV record writer of replay's and memory's tables
 * (csv_rows.c): one record at a time on a stream. Internal to src/report/. */
#ifndef TS_REPORT_CSV_ROWS_H
#define TS_REPORT_CSV_ROWS_H

#include <stdint.h>
#include <stdio.h>

#include "trainscope/common.h"

typedef struct ts__csv_rows {
    FILE    *out;   /* borrowed */
    uint32_t col;   /* fields written in the current record */
} ts__csv_rows;

void ts__csv_rows_head(ts__csv_rows *c, const char *const *names, uint32_t n);
void ts__csv_rows_str(ts__csv_rows *c, const char *s);      /* NULL = empty field */
void ts__csv_rows_i64(ts__csv_rows *c, int64_t v);
void ts__csv_rows_real(ts__csv_rows *c, double v, int decimals);   /* NaN, inf = empty field */
void ts__csv_rows_end(ts__csv_rows *c);
/* The index of table `table` among names[0..n) (NULL: the first); -1 with
 * err "CMD: --table wants A, B or C, got 'X'" when none has that name. */
int ts__csv_rows_pick(const char *cmd, const char *const *names, uint32_t n, const char *table, ts_error *err);

#endif
