#!/bin/sh
# record_c.sh - `trainscope record` on a small C program that uses the tracing
# API from two threads, forks a child, and exits with code 7; then the same
# program killed by SIGTERM. Checks: output and exit code unchanged, one
# valid JSON file per process with the right events, the child's events only
# in the child's file, a killed program still leaves a readable trace, and
# `trainscope stats` reads the result.
set -e
TS_BIN=${TS_BIN:-build/trainscope}
LIB=$(dirname "$TS_BIN")
PY=/usr/bin/python3
tmp=$(mktemp -d /tmp/ts_e2e_record_c.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/prog.c" <<'C'
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "trainscope/trace.h"
static void cleanup_then_die(int sig)   /* a common pattern: tidy up, then die by the signal */
{
    ssize_t w = write(1, "cleanup\n", 8);
    (void)w;
    signal(sig, SIG_DFL);
    raise(sig);
}
static void *worker(void *arg)
{
    ts_trace_thread_name("loader");
    for (int i = 0; i < 100; i++) { ts_trace_push("cpu_op", "load_batch"); ts_trace_pop(); }
    return NULL;
}
int main(int argc, char **argv)
{
    pthread_t t;
    ts_trace_push("user_annotation", "ProfilerStep#0");
    pthread_create(&t, NULL, worker, NULL);
    ts_trace_push("cpu_op", "aten::mm");
    ts_trace_pop();
    pthread_join(t, NULL);
    pid_t pid = fork();
    if (pid == 0) { ts_trace_push("cpu_op", "child_work"); ts_trace_pop(); _exit(0); }
    waitpid(pid, NULL, 0);
    ts_trace_pop();
    printf("prog says %s\n", argc > 1 ? argv[1] : "nothing");
    fflush(stdout);
    if (argc > 1 && !strcmp(argv[1], "term")) raise(SIGTERM);
    if (argc > 1 && !strcmp(argv[1], "handler")) {   /* installed after tracing started */
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = cleanup_then_die;
        sigaction(SIGTERM, &sa, NULL);
        raise(SIGTERM);
    }
    if (argc > 1 && !strcmp(argv[1], "exec")) {   /* the same pid runs a new image */
        ts_trace_instant("test", "before_exec");
        execl(argv[0], argv[0], "after_exec", (char *)NULL);
        return 99;
    }
    return 7;
}
C
cc -std=c11 -D_GNU_SOURCE -Iinclude -o "$tmp/prog" "$tmp/prog.c" -L"$LIB" -ltrainscope-trace -Wl,-rpath,"$(cd "$LIB" && pwd)" -pthread

# Normal exit: same output, same exit code, two files (parent, forked child).
set +e
out=$("$TS_BIN" record -o "$tmp/t1" -- "$tmp/prog" hello 2>"$tmp/err")
rc=$?
set -e
[ "$out" = "prog says hello" ] || { echo "output changed: $out"; exit 1; }
[ $rc -eq 7 ] || { echo "exit code $rc, expected 7"; cat "$tmp/err"; exit 1; }
grep -q "2 trace files in" "$tmp/err" || { echo "record did not say where the traces are"; cat "$tmp/err"; exit 1; }
$PY - "$tmp/t1" <<'P'
import glob, json, sys
files = sorted(glob.glob(sys.argv[1] + "/pid-*.json"))
assert len(files) == 2, files
traces = [json.load(open(f)) for f in files]
names = [[e["name"] for e in t["traceEvents"]] for t in traces]
parent = [n for n in names if "aten::mm" in n]
child = [n for n in names if "child_work" in n]
assert len(parent) == 1 and len(child) == 1, names
p, c = parent[0], child[0]
assert p.count("load_batch") == 100, p.count("load_batch")
assert "ProfilerStep#0" in p and "child_work" not in p and "aten::mm" not in c
tp = [t for t in traces if "aten::mm" in [e["name"] for e in t["traceEvents"]]][0]
loader = [e for e in tp["traceEvents"] if e["ph"] == "M" and e["name"] == "thread_name"]
assert loader and loader[0]["args"]["name"] == "loader", loader
assert tp["trainscope"]["dropped_events"] == 0
step = [e for e in tp["traceEvents"] if e["name"] == "ProfilerStep#0"][0]
mm = [e for e in tp["traceEvents"] if e["name"] == "aten::mm"][0]
assert step["ts"] <= mm["ts"] and mm["ts"] + mm["dur"] <= step["ts"] + step["dur"], (step, mm)
ts = [e["ts"] for e in tp["traceEvents"] if e["ph"] != "M"]
assert ts == sorted(ts), "events not in time order"
P
"$TS_BIN" stats "$tmp"/t1/pid-*.json >"$tmp/stats" || { echo "stats failed"; exit 1; }
grep -q "load_batch" "$tmp/stats" || { echo "stats does not show load_batch"; cat "$tmp/stats"; exit 1; }

# Killed by SIGTERM after its output: exit 128+15, the trace still readable.
set +e
out=$("$TS_BIN" record -o "$tmp/t2" -- "$tmp/prog" term 2>"$tmp/err")
rc=$?
set -e
[ "$out" = "prog says term" ] || { echo "output changed: $out"; exit 1; }
[ $rc -eq 143 ] || { echo "exit code $rc, expected 143"; cat "$tmp/err"; exit 1; }
$PY - "$tmp/t2" <<'P'
import glob, json, sys
names = [e["name"] for f in glob.glob(sys.argv[1] + "/pid-*.json") for e in json.load(open(f))["traceEvents"]]
assert "aten::mm" in names and "ProfilerStep#0" in names, names
P
[ ! -d "$tmp/t2/.raw" ] || { echo "raw streams left behind"; ls -la "$tmp/t2/.raw"; exit 1; }

# The program's own SIGTERM handler, installed after tracing started, still
# runs, and the events are flushed before the signal's default action.
set +e
out=$("$TS_BIN" record -o "$tmp/t4" -- "$tmp/prog" handler 2>"$tmp/err")
rc=$?
set -e
[ "$out" = "prog says handler
cleanup" ] || { echo "program's handler did not run: $out"; exit 1; }
[ $rc -eq 143 ] || { echo "exit code $rc, expected 143"; cat "$tmp/err"; exit 1; }
$PY - "$tmp/t4" <<'P'
import glob, json, sys
names = [e["name"] for f in glob.glob(sys.argv[1] + "/pid-*.json") for e in json.load(open(f))["traceEvents"]]
assert "aten::mm" in names and names.count("load_batch") == 100, names[:10]
P
# exec: the image before exec finishes its trace, the new image starts another
# for the same pid (pid-N.json and pid-N.1.json).
set +e
out=$("$TS_BIN" record -o "$tmp/t3" -- "$tmp/prog" exec 2>"$tmp/err")
rc=$?
set -e
[ $rc -eq 7 ] || { echo "exit code $rc after exec, expected 7"; cat "$tmp/err"; exit 1; }
[ "$out" = "prog says exec
prog says after_exec" ] || { echo "output changed: $out"; exit 1; }
$PY - "$tmp/t3" <<'P'
import glob, json, os, sys
files = glob.glob(sys.argv[1] + "/pid-*.json")
by_pid = {}
for f in files:
    t = json.load(open(f))
    by_pid.setdefault(t["trainscope"]["pid"], []).append([e["name"] for e in t["traceEvents"]])
images = [v for v in by_pid.values() if len(v) == 2]
assert len(images) == 1, (files, by_pid.keys())
before = [n for n in images[0] if "before_exec" in n]
assert len(before) == 1 and all(n.count("aten::mm") == 1 for n in images[0]), images
P
echo "record_c: ok"
