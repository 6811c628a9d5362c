/* html_sections.c - the list of the HTML report's sections, in page order:
 * the one place a new section is wired in (see html.h, "ADDING A SECTION").
 * Not for: drawing; each writer lives in its own html_*.c (or views*.c).
 */
#include "report/html.h"
#include "report/views_html.h"

/* The views of `trainscope views` (src/report/views_html.c), each computed
 * on the whole trace; TS_ENODATA (nothing of that kind in the trace) leaves
 * the section out. */
#define VIEW_ADAPTER(name)                                                                                  \
    static int html_view_##name(ts_buf *out, const ts_report_html_input *in, const ts_report_html_opts *o, \
                                ts_error *err)                                                           \
    {                                                                                                    \
        (void)o;                                                                                         \
        return ts__html_view_##name##_of(out, in->trace, err);                                           \
    }
VIEW_ADAPTER(callstack)
VIEW_ADAPTER(allocator)
VIEW_ADAPTER(transfers)
VIEW_ADAPTER(queues)
VIEW_ADAPTER(comm)

const ts_html_section ts__html_sections[] = {
    {"summary", "Job summary", ts__html_summary},
    {"breakdown", "Temporal breakdown per rank", ts__html_breakdown},
    {"stragglers", "Stragglers", ts__html_stragglers},
    {"shares", "Kernel types and op categories", ts__html_shares},
    {"timeline", "One iteration, critical path highlighted", ts__html_timeline},
    {"replay", "Replay vs measured", ts__html_replay},
    {"top-ops", "Top ops", ts__html_top_ops},
    {"memory", "Memory", ts__html_memory},
    {"view-callstack", "Call stacks (flame graph)", html_view_callstack},
    {"view-allocator", "Allocator", html_view_allocator},
    {"view-transfers", "Memory transfers", html_view_transfers},
    {"view-queues", "Stream queues", html_view_queues},
    {"view-comm", "Communication latency", html_view_comm},
    {"warnings", "Warnings", ts__html_warnings},
};
const uint32_t ts__html_n_sections = sizeof ts__html_sections / sizeof ts__html_sections[0];
