#!/bin/sh
# scale_bounded_path.sh - replay, critical-path and stats from rank files (issue 27):
# the bounded path (the default) prints what --in-memory prints, on the real
# trace_filter pair and on 12 ranks made here from it (6 jittered copies of
# each real rank, Kineto-style names in no rank order, plain and gzip);
# --fold-replicas finds the two groups the copies were made as, prints the
# unmodified replay unchanged, and folds nothing on the real pair (whose
# ranks differ); --max-rss too small stops with exit 2, the message and no
# output; a dangling rank file or two files claiming one rank are named,
# exit 2, no output.
set -e
BIN=${TS_BIN:-build/trainscope}
DATA=${TS_DATA:-../shared/data}
PAIR=$DATA/kineto/trace_filter
[ -r "$PAIR/sampled_rank-0.json.gz" ] || { echo "skip: $PAIR absent (shared data)"; exit 77; }
command -v python3 >/dev/null || { echo "skip: python3 not found"; exit 77; }
tmp=$(mktemp -d /tmp/ts_e2e_scale.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# 12 ranks: copy k of real rank k % 2, its clock stretched by f_k (< 1) and
# shifted; distributedInfo says rank k of 12. Written by Python's json, not
# by trainscope's bench generator.
python3 - "$PAIR" "$tmp/job" <<'PY'
import gzip, json, os, random, sys
src, out = sys.argv[1], sys.argv[2]
os.makedirs(out)
rng = random.Random(7)
ranks = [json.load(gzip.open(f"{src}/sampled_rank-{i}.json.gz")) for i in (0, 1)]
for k in range(12):
    d = json.loads(json.dumps(ranks[k % 2]))
    f, off = 0.999 - 0.02 * rng.random(), 1000 * rng.random()
    t0 = min(e["ts"] for e in d["traceEvents"] if "ts" in e)
    for e in d["traceEvents"]:
        if "ts" in e:
            a = round(t0 + (e["ts"] - t0) * f + off)
            if "dur" in e:
                e["dur"] = float(round(t0 + (e["ts"] + e["dur"] - t0) * f + off) - a)
            e["ts"] = a
    d["distributedInfo"]["rank"], d["distributedInfo"]["world_size"] = k, 12
    name = f"{out}/host{(k * 7919) % 101:03d}_{k}.pt.trace.json" + (".gz" if k % 3 == 0 else "")
    (gzip.open if name.endswith(".gz") else open)(name, "wt").write(json.dumps(d))
PY

same() {   # same ARGS...: the bounded path and --in-memory print the same
    "$BIN" "$@" >"$tmp/a" 2>"$tmp/ae"
    "$BIN" "$@" --in-memory >"$tmp/b" 2>"$tmp/be"
    cmp -s "$tmp/a" "$tmp/b" || { echo "bounded and --in-memory differ: $*"; diff "$tmp/a" "$tmp/b" | head; exit 1; }
    cmp -s "$tmp/ae" "$tmp/be" || { echo "stderr differs: $*"; diff "$tmp/ae" "$tmp/be" | head; exit 1; }
    [ -s "$tmp/a" ] || { echo "no output: $*"; exit 1; }
}
for set in "$PAIR" "$tmp/job"; do
    same replay "$set"
    same replay --format json "$set"
    same replay --bandwidth x0.5 --format json "$set"
    same critical-path --format json "$set"
    same critical-path "$set"
    same stats --format json "$set"
    same stats --by category --format json "$set"
    same stats --window all --by rank "$set"
done

# The copies of real rank 0 (even ranks) and of real rank 1 (odd ranks).
"$BIN" replay --fold-replicas "$tmp/job" >"$tmp/f" 2>"$tmp/fe"
grep -q "12 ranks in 2 groups" "$tmp/fe" || { echo "expected 2 groups:"; cat "$tmp/fe"; exit 1; }
grep -Eq "^  rank [0-9]+: 0 2 4 6 8 10 \(6\)$" "$tmp/fe" || { echo "even ranks not one group:"; cat "$tmp/fe"; exit 1; }
grep -Eq "^  rank [0-9]+: 1 3 5 7 9 11 \(6\)$" "$tmp/fe" || { echo "odd ranks not one group:"; cat "$tmp/fe"; exit 1; }
"$BIN" replay "$tmp/job" >"$tmp/u" 2>/dev/null
cmp -s "$tmp/f" "$tmp/u" || { echo "folded unmodified replay differs from the unfolded one"; diff "$tmp/f" "$tmp/u" | head; exit 1; }
for cmd in replay critical-path; do   # the real pair: two different ranks, nothing folded, same answer
    "$BIN" $cmd --fold-replicas "$PAIR" >"$tmp/f" 2>"$tmp/fe"
    "$BIN" $cmd "$PAIR" >"$tmp/u" 2>/dev/null
    grep -q "2 ranks in 2 groups" "$tmp/fe" || { echo "$cmd: the pair was folded:"; cat "$tmp/fe"; exit 1; }
    cmp -s "$tmp/f" "$tmp/u" || { echo "$cmd --fold-replicas on singletons differs"; exit 1; }
done

# A budget far too small: exit 2, the reason, nothing on stdout.
set +e
"$BIN" replay --max-rss 0.002 "$tmp/job" >"$tmp/o" 2>"$tmp/e"; rc=$?
set -e
[ $rc = 2 ] || { echo "--max-rss 0.002: exit $rc, expected 2"; exit 1; }
grep -q "stopped: needs more than --max-rss 0.002 GB" "$tmp/e" || { echo "no budget message:"; cat "$tmp/e"; exit 1; }
grep -q "while loading rank files" "$tmp/e" || { echo "phase not named:"; cat "$tmp/e"; exit 1; }
[ ! -s "$tmp/o" ] || { echo "--max-rss: partial output"; exit 1; }

# A dangling rank file, and a rank claimed twice: named, exit 2, no output.
mkdir "$tmp/bad" "$tmp/dup"
cp "$PAIR"/*.gz "$tmp/bad/"
ln -s "$tmp/gone.json" "$tmp/bad/rank-2.json"
cp "$PAIR/sampled_rank-0.json.gz" "$PAIR/sampled_rank-1.json.gz" "$tmp/dup/"
cp "$PAIR/sampled_rank-1.json.gz" "$tmp/dup/again.json.gz"
for case in "bad:rank-2.json" "dup:again.json.gz"; do
    d=${case%%:*}; want=${case#*:}
    for cmd in replay critical-path; do
        set +e
        "$BIN" $cmd "$tmp/$d" >"$tmp/o" 2>"$tmp/e"; rc=$?
        set -e
        [ $rc = 2 ] || { echo "$cmd $d: exit $rc, expected 2"; exit 1; }
        grep -q "$want" "$tmp/e" || { echo "$cmd $d: the file is not named:"; cat "$tmp/e"; exit 1; }
        [ ! -s "$tmp/o" ] || { echo "$cmd $d: partial output"; exit 1; }
    done
done
grep -q "claims rank 1" "$tmp/e" || { echo "duplicate rank not said:"; cat "$tmp/e"; exit 1; }

# --fold-replicas is for the graph commands only.
set +e
"$BIN" stats --fold-replicas "$PAIR" >/dev/null 2>"$tmp/e"; rc=$?
set -e
[ $rc = 2 ] && grep -q "applies to replay, critical-path and optimize" "$tmp/e" || { echo "stats --fold-replicas not refused"; exit 1; }
echo "scale_bounded_path: ok"
