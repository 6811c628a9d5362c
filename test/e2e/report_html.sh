#!/bin/sh
# report_html.sh - `trainscope report` opened in a real browser: Debian's
# chromium, headless, offline (in a network namespace of its own when
# unshare allows it), dumps the DOM after the page's script ran; the checks
# read that DOM, not the file:
#   - every section is there (memory only for traces with [memory] events),
#     the sorting script ran (each header got its "click to sort" title);
#   - the breakdown table's numbers equal `breakdown --format json`'s on the
#     same input, the kernel-type table its kernel_types rows, the stragglers
#     table its stragglers' ranks (jobs of several ranks), the critical
#     path table `critical-path --format json`'s categories, the replay table
#     `replay --format json`'s ranks;
#   - the memory table's peaks and event counts equal the largest "Total
#     Allocated" and the number of [memory] events in the raw JSON (python);
#   - nothing in the file refers to a URL (no http, no src=, only #anchors);
#   - clicking a header (report_html_click.py, over the DevTools pipe) sorts
#     the table high to low, then low to high, rows moving whole;
#   - an output that cannot be written: exit 2, the path named, no file.
# Inputs: the Kineto GPU traces (nccl_data, the matched trace_filter pair),
# a CPU-only gloo pair (examples/ddp_gloo), a recorded run with allocator
# events (examples/ddp_memory). A screenshot for a person: build/report.png.
set -e
BIN=${TS_BIN:-build/trainscope}
DATA=${TS_DATA:-../shared/data}
K=$DATA/kineto
command -v chromium >/dev/null 2>&1 || { echo "skip: chromium is not installed"; exit 77; }
[ -f "$K/nccl_parser_config/nccl_data.json.gz" ] || { echo "skip: no $K (TS_DATA)"; exit 77; }
tmp=$(mktemp -d /tmp/ts_e2e_report.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "report_html: $*"; exit 1; }

NET=""
unshare -n true 2>/dev/null && NET="unshare -n"   # no network at all while the page loads
browser() {   # browser OPTION FILE.html: chromium headless, offline
    $NET timeout 120 chromium --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking \
        --disable-component-update --user-data-dir="$tmp/profile" "$1" "file://$2" 2>"$tmp/chromium.err"
}

check_case() {   # check_case NAME PATH...: report, browser, compare
    name=$1; shift
    "$BIN" report "$@" -o "$tmp/$name.html" >"$tmp/$name.out" 2>"$tmp/$name.err" || fail "$name: report exited $?: $(cat "$tmp/$name.err")"
    [ -s "$tmp/$name.html" ] || fail "$name: no page written"
    ! grep -qi "http" "$tmp/$name.html" || fail "$name: the page names a URL: $(grep -oi '.\{30\}http.\{30\}' "$tmp/$name.html" | head -3)"
    ! grep -Eq "(src|href)=\"[^#]" "$tmp/$name.html" || fail "$name: the page loads or links something outside itself"
    browser --dump-dom "$tmp/$name.html" >"$tmp/$name.dom" || fail "$name: chromium exited $?: $(tail -3 "$tmp/chromium.err")"
    "$BIN" breakdown --format json "$@" >"$tmp/$name.bd.json" || fail "$name: breakdown exited $?"
    "$BIN" critical-path --format json "$@" >"$tmp/$name.cp.json" || fail "$name: critical-path exited $?"
    "$BIN" replay --format json "$@" >"$tmp/$name.rp.json" || fail "$name: replay exited $?"
    python3 - "$tmp/$name" "$@" <<'P' || fail "$name: the DOM disagrees (above)"
import gzip, json, sys
from html.parser import HTMLParser

base, inputs = sys.argv[1], sys.argv[2:]

class Dom(HTMLParser):
    """Sections, th titles, and the text of every table cell by table id."""
    def __init__(self):
        super().__init__()
        self.sections, self.titles, self.tables, self.rects = [], [], {}, {}
        self.table, self.row, self.cell, self.svg = None, None, None, None
        self.sortable, self.n_sortable_th = False, 0
    def handle_starttag(self, tag, a):
        a = dict(a)
        if tag == "section": self.sections.append(a.get("id"))
        if tag == "table":
            self.table = self.tables.setdefault(a.get("id"), [])
            self.sortable = "sortable" in (a.get("class") or "").split()
        if tag == "tr" and self.table is not None: self.row = []; self.table.append(self.row)
        if tag in ("td", "th") and self.row is not None: self.cell = [a.get("data-k"), ""]; self.row.append(self.cell)
        if tag == "th" and self.table is not None and self.row is self.table[0]:
            self.titles.append(a.get("title"))
            self.n_sortable_th += self.sortable
        if tag == "svg": self.svg = a.get("id"); self.rects[self.svg] = 0
        if tag == "rect" and self.svg: self.rects[self.svg] += 1
    def handle_endtag(self, tag):
        if tag == "table": self.table = self.row = None
        if tag in ("td", "th"): self.cell = None
        if tag == "svg": self.svg = None
    def handle_data(self, d):
        if self.cell is not None: self.cell[1] += d

dom = Dom()
dom.feed(open(base + ".dom").read())
bd, cp, rp = (json.load(open(base + s)) for s in (".bd.json", ".cp.json", ".rp.json"))

def opener(p): return gzip.open(p, "rt") if p.endswith(".gz") else open(p)
mem = {}
# Which views (docs/views.md) have something to show, from the files' own events:
# callstack CPU ops, transfers Kineto's Memcpy copies, queues GPU ops, comm
# NCCL kernels, ops with "Collective name", or gloo:/nccl: annotations.
has = set()
for p in inputs:
    d = json.load(opener(p))
    ev = d["traceEvents"] if isinstance(d, dict) else d
    rank = d.get("distributedInfo", {}).get("rank") if isinstance(d, dict) else None
    for e in ev:
        if e.get("name") == "[memory]" and "Total Allocated" in e.get("args", {}):
            m = mem.setdefault(rank, [0, 0]); m[0] += 1; m[1] = max(m[1], e["args"]["Total Allocated"])
        if e.get("ph") != "X": continue
        cat, name = e.get("cat", ""), e.get("name", "")
        if cat in ("cpu_op", "user_annotation", "python_function") or not cat: has.add("callstack")
        if cat == "gpu_memcpy" and name.startswith("Memcpy"): has.add("transfers")
        if cat in ("kernel", "gpu_memcpy", "gpu_memset"): has.add("queues")
        if (cat == "kernel" and "nccl" in name.lower()) or "Collective name" in e.get("args", {}) \
                or name.startswith(("gloo:", "nccl:")):
            has.add("comm")
views = ["view-" + v for v in ("callstack", "allocator", "transfers", "queues", "comm")
         if v in has or (v == "allocator" and mem)]

strag = bd.get("stragglers") or {}
want = ["summary", "breakdown"] + (["stragglers"] if strag.get("ranks") else []) + ["shares", "timeline", "replay", "top-ops"] + (["memory"] if mem else []) + views + ["warnings"]
assert dom.sections == want, ("sections", dom.sections, want)
sortable = dom.n_sortable_th
assert len(dom.titles) >= sortable and dom.titles.count("click to sort") == sortable, ("the sorting script did not run",
                                                                                      dom.titles[:5], sortable)

def num(s): return float(s.replace(",", "")) if s.strip() not in ("-", "") else None

# breakdown: every JSON rank row, cell by cell
rows = {int(r[0][1]): {k: v for k, v in r if k} for r in dom.tables["breakdown-table"][1:]}
assert sorted(rows) == sorted(r["rank"] for r in bd["ranks"]), (sorted(rows), bd["ranks"])
n = 0
for r in bd["ranks"]:
    for k, v in r.items():
        if k in ("rank", "iterations_filtered"): continue
        got = rows[r["rank"]][k]
        if k == "basis": assert got == v, (k, got, v)
        else: assert num(got) == v, (r["rank"], k, got, v)
        n += 1
# kernel types: rank -1 rows when several ranks, else the rank's own
kt = [k for k in bd["kernel_types"] if k["rank"] == (-1 if len(bd["ranks"]) > 1 else bd["ranks"][0]["rank"])]
got = [{k: v for k, v in r if k} for r in dom.tables.get("kernel-types-table", [[]])[1:]]
assert len(got) == len(kt), (got, kt)
for g, w in zip(got, kt):
    assert g["kernel_type"] == w["kernel_type"] and num(g["time_us"]) == w["time_us"] and num(g["pct"]) == w["pct"], (g, w)
# stragglers per rank, as breakdown's JSON
if strag.get("ranks"):
    got = {int(r[0][1]): {k: num(v) for k, v in r if k} for r in dom.tables["stragglers-table"][1:]}
    for r in strag["ranks"]:
        g = got[r["rank"]]
        assert (g["collectives"], g["last"], g["late_us"], g["max_late_us"], g["waited_us"], g["caused_us"]) == \
            (r["collectives"], r["last"], r["late_us"], r["max_late_us"], r["waited_us"], r["caused_us"]), (g, r)
# critical path categories
cat = {r[0][1]: num(r[1][1]) for r in dom.tables["critical-path-table"][1:]}
for k, v in cp["categories"].items():
    assert cat[k[:-3]] == v, ("critical path", k, cat, v)
# replay per rank
rr = {int(r[0][1]): (num(r[1][1]), num(r[2][1]), num(r[4][1])) for r in dom.tables["replay-ranks"][1:]}
for r in rp["ranks"]:
    assert rr[r["rank"]] == (r["measured_iteration_us"], r["predicted_iteration_us"], r["clock_offset_us"]), (rr, r)
# memory: peaks and counts from the raw JSON
if mem:
    got = {int(r[0][1]): (int(r[2][1]), int(r[3][1])) for r in dom.tables["memory-peaks"][1:]}
    assert got == {k: tuple(v) for k, v in mem.items()}, (got, mem)
    assert all(dom.rects.get("memory-curve-%d" % i) is not None for i in range(min(4, len(mem))))
# the timeline is drawn per pixel: at most one rectangle a pixel a lane (+ lanes, legend, path)
lanes = dom.rects["timeline-svg"]
assert 0 < lanes < 96 * 1100, lanes
print("%s: %d sections, %d breakdown numbers as breakdown's JSON, %d timeline rects%s" %
      (base.rsplit("/", 1)[1], len(dom.sections), n, lanes, ", memory peaks of %d ranks as counted" % len(mem) if mem else ""))
P
}

check_case nccl "$K/nccl_parser_config/nccl_data.json.gz"
check_case pair "$K/trace_filter/sampled_rank-0.json.gz" "$K/trace_filter/sampled_rank-1.json.gz"
check_case gloo examples/ddp_gloo/rank0.json examples/ddp_gloo/rank1.json
check_case memory examples/ddp_memory/rank-0.json.gz examples/ddp_memory/rank-1.json.gz

# sorting, clicked in the browser (DevTools protocol over a pipe): rows move whole
here=$(dirname "$0")
for c in "nccl top-cpu_op 2" "pair breakdown-table 3" "gloo replay-ranks 1"; do
    set -- $c
    $NET timeout 120 python3 "$here/report_html_click.py" "$tmp/$1.html" "$tmp/profile-click" "$2" "$3" ||
        fail "$1: sorting $2 by column $3 in chromium"
done

# a screenshot for a person to look at (the 2-rank GPU job)
mkdir -p build
browser --screenshot="$PWD/build/report.png" "$tmp/pair.html" --window-size=1400,3000 >/dev/null ||
    fail "screenshot: chromium exited $?"
[ -s build/report.png ] || fail "no screenshot written"

# an iteration the trace lacks: the page without its path, the reason on stderr and in the page
"$BIN" report --iteration 99 examples/ddp_gloo/rank0.json -o "$tmp/it99.html" >/dev/null 2>"$tmp/err" ||
    fail "--iteration 99: exit $?"
grep -q "warning: report: critical path: .*no iteration 99" "$tmp/err" || fail "--iteration 99: $(cat "$tmp/err")"
grep -q '<ul id="analysis-notes"><li>critical path: .*no iteration 99' "$tmp/it99.html" || fail "--iteration 99: no note"
! grep -q 'class="cp"' "$tmp/it99.html" || fail "--iteration 99: a critical path drawn"

# outputs that cannot be written: exit 2, the path named, nothing left behind
set +e
"$BIN" report examples/ddp_gloo/rank0.json -o "$tmp/no/such/dir/r.html" 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q "$tmp/no/such/dir/r.html" "$tmp/err" || fail "missing folder: exit $rc: $(cat "$tmp/err")"
mkdir "$tmp/isdir.html"
"$BIN" report examples/ddp_gloo/rank0.json -o "$tmp/isdir.html" 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q "isdir.html" "$tmp/err" || fail "a folder as output: exit $rc: $(cat "$tmp/err")"
if [ -w /dev/full ]; then
    "$BIN" report examples/ddp_gloo/rank0.json -o /dev/full 2>"$tmp/err"; rc=$?
    [ $rc -eq 2 ] && grep -q "/dev/full" "$tmp/err" || fail "a full disk: exit $rc: $(cat "$tmp/err")"
fi
"$BIN" report examples/ddp_gloo/rank0.json 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q "no output given" "$tmp/err" || fail "no -o: exit $rc: $(cat "$tmp/err")"
set -e
left=$(find "$tmp" -name '*.tmp' | head -3)
[ -z "$left" ] || fail "temporaries left behind: $left"
echo "report_html: ok"
