/* record.c - `trainscope record`'s closing lines (report_record.h): the
 * trace files written, what torch's profiler left (--torch), why a trace
 * holds less than a new user expects, the losses the converted streams
 * counted, and what never reached the disk.
 *
 * Not for: gathering the figures (capture/record_job.c, ts_record_finish).
 */
#include <stdio.h>
#include <string.h>

#include "trainscope/report_record.h"

static void say_torch(FILE *f, const ts_record_torch *ts, const ts_report_record_args *o, bool gradients)
{
    if (ts->n == 0) {
        fprintf(f, "trainscope: --torch: no process imported torch, launchers (torchrun) aside: is COMMAND "
                "run by the Python that has torch?\n");
        return;
    }
    if (ts->ok) {
        char win[64] = "every step";
        long a, b;
        if (sscanf(ts->window, "%ld:%ld", &a, &b) == 2) {
            if (b >= 0) snprintf(win, sizeof win, "iterations %ld to %ld", a, b - 1);
            else snprintf(win, sizeof win, "iterations from %ld on", a);
        }
        fprintf(f, "trainscope: --torch: %llu torch events from %d process%s (%s profiler, %s)\n",
                (unsigned long long)ts->events, ts->ok, ts->ok == 1 ? "" : "es",
                strcmp(ts->format, "kineto") ? "legacy" : "Kineto", win);
        if (gradients)
            fprintf(f, "trainscope: --torch: the DDP model's gradients in %s/.gradients.json ('trainscope optimize %s' "
                    "reads them)\n", o->dir_given, o->dir_given);
    }
    if (ts->dropped)
        fprintf(f, "trainscope: warning: --torch: %llu torch events dropped (buffers full: raise --buffer-kb)\n",
                (unsigned long long)ts->dropped);
    if (ts->failed)
        fprintf(f, "trainscope: warning: --torch: torch's profiler failed in %d process%s (%s): their torch ops "
                "were not captured\n", ts->failed, ts->failed == 1 ? "" : "es", ts->reason);
    if (ts->nowindow)
        fprintf(f, "trainscope: warning: --torch: %d process%s imported torch but ended after %ld optimizer "
                "step%s, before the window's first step (%ld): no torch ops recorded there\n", ts->nowindow,
                ts->nowindow == 1 ? "" : "es", ts->steps_min, ts->steps_min == 1 ? "" : "s", o->first_step);
    if (ts->unsaved)
        fprintf(f, "trainscope: warning: --torch: %d process%s ended before saving torch's events (SIGKILL, "
                "os._exit or a crash): their torch ops are lost\n", ts->unsaved, ts->unsaved == 1 ? "" : "es");
}

/* Why the trace holds less than a new user expects: Python without --torch,
 * and always a reason for "0 trace files". */
static void say_what_was_captured(FILE *f, const ts_record_streams *js, const ts_report_record_args *o, bool hinted)
{
    if (js->n_python && !o->torch) {
        if (js->python_events)
            fprintf(f, "trainscope: %d Python process%s traced: %llu events (%s); torch ops, shapes and "
                    "collectives need --torch\n", js->n_python, js->n_python == 1 ? "" : "es",
                    (unsigned long long)js->python_events,
                    o->python ? "Python calls and the host API" : "host API calls and the asked collectors");
        else
            fprintf(f, "trainscope: %d Python process%s ran and recorded nothing (no collector for Python was "
                    "asked): --torch records torch ops, shapes and collectives, --python Python calls\n",
                    js->n_python, js->n_python == 1 ? "" : "es");
        hinted = true;
    }
    if (js->n_files || hinted) return;
    if (!js->n_streams)
        fprintf(f, "trainscope: no process loaded the tracer (a static or setuid program, or one that clears "
                "LD_PRELOAD)\n");
    else if (js->n_empty == js->n_streams)
        fprintf(f, "trainscope: %d process%s ran (%s) and recorded no events: ask for a collector (--torch, "
                "--python, --mpi, --cuda, --nccl) or call the tracing API\n", js->n_streams,
                js->n_streams == 1 ? "" : "es", js->empty_names);
}

/* What could not be written whole, one line each. */
static void say_what_was_lost(FILE *f, const ts_record_board *b, int n_failed, int n_left_live, const char *dir,
                              const char *cmd)
{
    if (b->lost)
        fprintf(f, "trainscope: error: %llu event%s never reached %s/.raw (%s) in %d process%s (%s): "
                "they are lost\n", (unsigned long long)b->lost, b->lost == 1 ? "" : "s", dir, strerror(b->lost_errno),
                b->n_lossy, b->n_lossy == 1 ? "" : "es", b->lossy_names);
    if (b->n_nostream)
        fprintf(f, "trainscope: error: %d process%s (%s) could not open %s stream in %s/.raw (%s): all %s "
                "events are lost\n", b->n_nostream, b->n_nostream == 1 ? "" : "es", b->nostream_names,
                b->n_nostream == 1 ? "its" : "their", dir, strerror(b->nostream_errno),
                b->n_nostream == 1 ? "its" : "their");
    if (n_failed)
        fprintf(f, "trainscope: error: %d raw stream%s could not be converted and stay%s in %s/.raw: once "
                "the cause is fixed, run 'trainscope record --convert %s'\n", n_failed, n_failed == 1 ? "" : "s",
                n_failed == 1 ? "s" : "", dir, dir);
    if (b->n_live)
        fprintf(f, "trainscope: warning: %d process%s still tracing after %s ended (daemons?): %s; %d stream%s "
                "left in %s/.raw: when %s, run 'trainscope record --convert %s'\n", b->n_live,
                b->n_live == 1 ? " is" : "es are", cmd ? cmd : "the job", b->live_names, n_left_live,
                n_left_live == 1 ? "" : "s", dir, b->n_live == 1 ? "it ends" : "they end", dir);
    if (b->n_claimed >= TS_RECORD_STATUS_SLOTS)
        fprintf(f, "trainscope: warning: %u streams started; the status board holds the first %d: failed writes "
                "and daemons among the others are not known\n", b->n_claimed, TS_RECORD_STATUS_SLOTS - 1);
}

int ts_report_record_job(FILE *f, const ts_record_job *j, const ts_report_record_args *o)
{
    const ts_record_streams *js = &j->streams;
    const ts_record_board *b = &j->board;
    fprintf(f, "trainscope: %d trace file%s in %s\n", js->n_files, js->n_files == 1 ? "" : "s", o->dir);
    if (o->torch) say_torch(f, &j->torch, o, j->gradients);
    /* say_torch said what torch left, or that none imported it; lost events are said below */
    if (!b->lost && !b->n_nostream) say_what_was_captured(f, js, o, o->torch);
    /* Said here as well as in every analysis of the files (a "recorder_losses"
     * warning): a short trace should not pass for a whole one. */
    if (js->sum.dropped_events)
        fprintf(f, "trainscope: warning: %llu events dropped (per-thread buffers full: raise --buffer-kb)\n",
                (unsigned long long)js->sum.dropped_events);
    if (js->sum.bad_records)
        fprintf(f, "trainscope: warning: %llu damaged records skipped\n", (unsigned long long)js->sum.bad_records);
    if (js->n_cut)
        fprintf(f, "trainscope: warning: %llu trace stream%s cut short (a process killed mid-write, or the disk "
                "full): the events after the cut are lost\n", (unsigned long long)js->n_cut,
                js->n_cut == 1 ? " was" : "s were");
    if (js->sum.unfinished_ranges)
        fprintf(f, "trainscope: warning: %llu ranges still open when their process ended (closed there, "
                "args.unfinished)\n", (unsigned long long)js->sum.unfinished_ranges);
    if (b->lost || b->n_nostream || js->n_failed || b->n_live || b->n_claimed >= TS_RECORD_STATUS_SLOTS)
        fprintf(f, "trainscope: %u stream%s started tracing, %d converted (%d with events)\n", b->n_claimed,
                b->n_claimed == 1 ? "" : "s", js->n_streams - js->n_failed, js->n_files);
    say_what_was_lost(f, b, js->n_failed, js->n_left_live, o->dir, o->cmd);
    return ferror(f) ? TS_EIO : TS_OK;
}
