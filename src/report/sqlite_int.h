/* sqlite_int.h - what sqlite.c (file, trace tables) and sqlite_analyses.c
 * (analysis tables) share: one writer over one open database.
 *
 * Every insert goes through a statement prepared once per table and
 * ts__sq_step(), which counts the row and keeps the first failure: after
 * one, further calls do nothing and the writer's rc stays the failure, so
 * the table writers need no error plumbing of their own.
 */
#ifndef TS_REPORT_SQLITE_INT_H
#define TS_REPORT_SQLITE_INT_H

#include <sqlite3.h>

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
/* Prepare sql (NULL on failure: the writer's rc says why). */
sqlite3_stmt *ts__sq_prepare(ts_sq *w, const char *sql);
/* Step an insert, count its row, reset and clear its bindings. */
void ts__sq_step(ts_sq *w, sqlite3_stmt *st);
void ts__sq_finalize(sqlite3_stmt *st);
/* Binds: NULL for the sentinel values. */
void ts__sq_i64(sqlite3_stmt *st, int col, int64_t v);
void ts__sq_i64_or_null(sqlite3_stmt *st, int col, int64_t v, int64_t null_value);
void ts__sq_text(sqlite3_stmt *st, int col, const char *s);   /* NULL or "" = NULL; borrowed */
void ts__sq_real(sqlite3_stmt *st, int col, double v);

/* One row of table warning. */
void ts__sq_warning(ts_sq *w, int64_t rank_id, const char *source, const char *kind, uint64_t count,
                    const char *message);

/* sqlite_analyses.c: the analysis tables and their warnings. */
void ts__sq_analyses(ts_sq *w, const ts_sqlite_input *in);

#endif
