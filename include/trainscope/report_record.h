/* report_record.h - the closing lines of `trainscope record`: how many trace
 * files the job wrote and where, what torch's profiler left, why a trace
 * holds less than expected, and what never reached the disk.
 *
 * Not for: gathering those figures (ts_record_finish in record.h does).
 */
#ifndef TRAINSCOPE_REPORT_RECORD_H
#define TRAINSCOPE_REPORT_RECORD_H

#include <stdbool.h>
#include <stdio.h>

#include "trainscope/record.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How the job was recorded, for the lines' advice. */
typedef struct ts_report_record_args {
    const char *dir;          /* where the trace files went (as said in the first line) */
    const char *dir_given;    /* -o DIR as given (the path the --torch lines name) */
    const char *cmd;          /* the program, NULL = "the job" (record --convert) */
    bool        torch;        /* --torch was asked */
    bool        python;       /* --python was asked */
    long        first_step;   /* --torch: the window's first optimizer step (wait + warmup) */
} ts_report_record_args;

/* The lines on f (stderr for the CLI), each "trainscope: ...". TS_EIO when f failed. */
TS_API TS_NODISCARD int ts_report_record_job(FILE *f, const ts_record_job *j, const ts_report_record_args *a);

#ifdef __cplusplus
}
#endif
#endif
