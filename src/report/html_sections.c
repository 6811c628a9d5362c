/* html_sections.c - the list of the HTML report's sections, in page order:
 * the one place a new section is wired in (see html.h, "ADDING A SECTION").
 * Not for: drawing; each writer lives in its own html_*.c (or views*.c).
 */
#include "report/html.h"

const ts_html_section ts__html_sections[] = {
    {"summary", "Job summary", ts__html_summary},
    {"breakdown", "Temporal breakdown per rank", ts__html_breakdown},
    {"stragglers", "Stragglers", ts__html_stragglers},
    {"shares", "Kernel types and op categories", ts__html_shares},
    {"timeline", "One iteration, critical path highlighted", ts__html_timeline},
    {"replay", "Replay vs measured", ts__html_replay},
    {"top-ops", "Top ops", ts__html_top_ops},
    {"memory", "Memory", ts__html_memory},
    /* Views (branch `views`): one line each, e.g.
     * {"view-callstack", "Call stacks", html_view_callstack}, with the adapter
     * html_view_callstack defined above this table. */
    {"warnings", "Warnings", ts__html_warnings},
};
const uint32_t ts__html_n_sections = sizeof ts__html_sections / sizeof ts__html_sections[0];
