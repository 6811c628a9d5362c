/* trainscope.h - the umbrella header: include this one. */
#ifndef TRAINSCOPE_H
#define TRAINSCOPE_H
#include "trainscope/common.h"
#include "trainscope/model.h"
#include "trainscope/ingest.h"
#include "trainscope/analyze.h"
#include "trainscope/report.h"
#include "trainscope/graph.h"
#include "trainscope/replay.h"
#include "trainscope/memory.h"
#include "trainscope/precision.h"
#include "trainscope/optimize.h"
#include "trainscope/record.h"
#include "trainscope/report_replay.h"
#include "trainscope/report_memory.h"
#include "trainscope/report_record.h"
#include "trainscope/export.h"
#include "trainscope/html.h"
#include "trainscope/views.h"
/* trainscope/trace.h, the capture-side tracing API, is separate: programs that
 * emit events link libtrainscope-trace, not the analysis library. */
#endif
