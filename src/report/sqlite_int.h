/* sqlite_int.h - what sqlite.c (file, trace tables) and sqlite_analyses.c
 * (analysis tables) share: one writer over one open database.
 *
 * Every insert goes through a batched statement prepared once per table
 * (ts__sq_open) that counts rows and keeps the first failure: after one,
 * further calls do nothing and the writer's rc stays the failure, so the
 * table writers need no error plumbing of their own.
 */
#ifndef TS_REPORT_SQLITE_INT_H
#define TS_REPORT_SQLITE_INT_H

#include "core/sqlite_api.h"

#include "trace/model.h"
#include "trainscope/export.h"

typedef struct ts_sq {
    sqlite3    *db;
    const char *path;        /* the final path, for messages */
    ts_error   *err;
    int         rc;          /* TS_OK until the first failure */
    uint64_t    n_rows;      /* rows inserted */
    uint32_t    n_tables;    /* tables created */
    uint64_t    n_warnings;  /* rows of table warning */
    uint64_t    n_slice_rows, n_arg_rows;
    /* Global row bases per job rank (n_ranks + 1 entries each): slice ids of
     * rank i start at slice_base[i] (its slices, then its instants), track
     * ids at track_base[i], arg rows at arg_base[i]. */
    int64_t    *slice_base, *track_base, *arg_base;
} ts_sq;

/* Run sql (DDL, pragmas); counts a CREATE TABLE. */
void ts__sq_exec(ts_sq *w, const char *sql);
/* A batched insert into `table` ("name" or "name(col, ...)") of n_cols
 * columns; NULL after a failure (the writer's rc says why; every call below
 * takes NULL and does nothing). Bind a row's columns (1-based; unbound =
 * NULL), then ts__sq_step; ts__sq_close inserts what is pending. */
typedef struct ts_sq_ins ts_sq_ins;
/* batch: rows per statement; TS_SQ_MANY for tables of many rows (the
 * statement's own cost is paid once per batch), 1 for a few rows (a
 * statement of 64 rows costs more to prepare than a few rows save). */
#define TS_SQ_MANY 64
ts_sq_ins *ts__sq_open(ts_sq *w, const char *table, int n_cols, int batch);
void ts__sq_step(ts_sq *w, ts_sq_ins *ins);
void ts__sq_close(ts_sq *w, ts_sq_ins *ins);
/* Binds; strings are borrowed until ts__sq_close (the rank's and the
 * results' strings live that long) except with ts__sq_text_copy. */
void ts__sq_i64(ts_sq_ins *ins, int col, int64_t v);
void ts__sq_i64_or_null(ts_sq_ins *ins, int col, int64_t v, int64_t null_value);
void ts__sq_real(ts_sq_ins *ins, int col, double v);
void ts__sq_text(ts_sq_ins *ins, int col, const char *s);        /* NULL or "" = NULL */
void ts__sq_str(ts_sq_ins *ins, int col, const char *s);         /* "" stays '' */
void ts__sq_text_copy(ts_sq_ins *ins, int col, const char *s);   /* a temporary: copied */

/* One row of table warning. */
void ts__sq_warning(ts_sq *w, int64_t rank_id, const char *source, const char *kind, uint64_t count,
                    const char *message);

/* sqlite_analyses.c: the analysis tables and their warnings. */
void ts__sq_analyses(ts_sq *w, const ts_sqlite_input *in);

#endif
