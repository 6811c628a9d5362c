/* chrome_export.h - write a trace back out as Chrome-trace JSON with a
 * critical path overlaid (critical slices carry args.critical = 1; the path is
 * drawn as flow arrows of category "critical_path"), for Perfetto UI.
 */
#ifndef TS_REPORT_CHROME_EXPORT_H
#define TS_REPORT_CHROME_EXPORT_H

#include "graph/critical_path.h"

/* Every slice of every rank, on the graph's aligned clock (pid = rank number),
 * into `path`. On failure nothing useful is left at path and err says why. */
TS_NODISCARD int ts__chrome_export_critical_path(const ts_critical_path *cp, const char *path, ts_error *err);

#endif
