/* snapshot_timeline.c - `memory --trace SNAPSHOT -o DIR`'s
 * snapshot_timeline.csv: every alloc/free entry of a PyTorch allocator
 * snapshot with the bytes allocated after it, through the one CSV writer
 * (ts_csv, docs/csv.md), streamed to a temporary beside the file and renamed
 * when whole (core's ts__file).
 *
 * Not for: walking the snapshot (memory/snapshot.c hands each entry over,
 * ts_mem_snapshot_each_entry) or memory --trace's tables on stdout (memory.c).
 */
#include <errno.h>

#include "report/report_int.h"
#include "trainscope/report_memory.h"

enum { FLUSH_AT = 1 << 20 };   /* bytes of records kept before a write */

typedef struct timeline_out { ts__file file; ts_buf b; ts_csv c; } timeline_out;

static void flush(timeline_out *o)
{
    if (o->b.len && !o->file.e && fwrite(o->b.s, 1, o->b.len, o->file.f) != o->b.len) o->file.e = errno ? errno : EIO;
    o->b.len = 0;
}

static void entry_row(void *ud, const ts_mem_snap_entry *e)
{
    timeline_out *o = ud;
    ts_csv_i64(&o->c, e->device);
    ts_csv_u64(&o->c, e->index);
    ts_csv_i64(&o->c, e->time_us);
    ts_csv_str(&o->c, e->action);
    ts_csv_i64(&o->c, (int64_t)e->addr);   /* as the pickle has it: an int64 (-1, not 2^64 - 1) */
    ts_csv_i64(&o->c, e->bytes);
    ts_csv_i64(&o->c, e->allocated_bytes);
    ts_csv_str(&o->c, e->frame);
    ts_csv_str(&o->c, e->user_frame);
    ts_csv_end_row(&o->c);
    if (o->b.len >= FLUSH_AT) flush(o);
}

int ts_mem_snapshot_write_timeline(const char *snapshot_path, const char *csv_path, ts_error *err)
{
    ts__error_clear(err);
    timeline_out o;
    int rc = ts__file_open(&o.file, csv_path, err);
    if (rc) return rc;
    ts__buf_init(&o.b);
    ts__csv_init(&o.c, &o.b);
    TS__CSV_HEAD(&o.c, "device", "index", "time_us", "action", "addr", "bytes", "allocated_bytes", "frame",
                 "user_frame");
    rc = ts_mem_snapshot_each_entry(snapshot_path, entry_row, &o, err);
    if (!rc && o.b.oom) rc = ts__error(err, TS_ENOMEM, "%s: out of memory", csv_path);
    if (!rc) flush(&o);
    ts__buf_free(&o.b);
    int crc = ts__file_close(&o.file, rc == TS_OK, err);
    return rc ? rc : crc;
}
