#!/bin/sh
# dist_mpi_same_answer.sh - `mpirun -np P trainscope stats|critical-path|replay
# DIR` (docs/distributed.md) prints, byte for byte, what the plain CLI prints,
# for P = 1, 2, 4, in table and json, on the real matched 2-rank pair
# (trace_filter) and on 6 and 12 ranks renumbered from it; the plain CLI links no
# MPI library; faults end the run with the single process's message, exit 2
# and nothing on stdout, never a hang: a file that fails to parse on
# process 1's share, a dangling rank file, two files claiming one rank, a
# process that dies (TS_DIST_TEST_EXIT_PROCESS, a hook for tests only), and
# --distributed without the MPI library.
# Open MPI's own allocations are reported as leaks by LeakSanitizer (in
# components it has unloaded, which no suppression can name): leak checks are
# off in the MPI processes; the serialization they run is leak-checked by
# test_trace's serial tests.
BIN=${TS_BIN:-build/trainscope}
DATA=${TS_DATA:-../shared/data}
PAIR="$DATA/kineto/trace_filter"
[ -r "$PAIR/sampled_rank-0.json.gz" ] || { echo "skip: $PAIR absent (shared data)"; exit 77; }
command -v mpirun >/dev/null || { echo "skip: mpirun not found (openmpi-bin)"; exit 77; }
LIB="$(dirname "$BIN")/libtrainscope_dist.so"
[ -r "$LIB" ] || { echo "dist_mpi: $LIB was not built (libopenmpi-dev)"; exit 1; }
tmp=$(mktemp -d /tmp/ts_e2e_dist.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
fail=0
bad() { echo "FAIL: $*"; fail=1; }
mpi() {   # mpi P ARGS...: the CLI on P processes, 120 s at most (a hang is a failure)
    p=$1; shift
    timeout 120 mpirun --oversubscribe --allow-run-as-root -np "$p" "$BIN" "$@"
}

if ldd "$BIN" | grep -q 'libmpi'; then bad "$BIN links an MPI library: $(ldd "$BIN" | grep mpi)"; fi

# 6 ranks: the pair's files with distributedInfo renumbered 0..5 (world 6);
# 12 copies of nccl_data so (each rank's local graph warns: no cuda_sync
# events), beside a file and a folder a load skips: rank-10 sorts before
# rank-2 by name, so process 0 (which adds each rank to the graph as it
# arrives) must give the local graphs' warnings, and the note on the skipped
# entries, in the single process's order.
NCCL=$DATA/kineto/nccl_parser_config/nccl_data.json.gz
[ -r "$NCCL" ] || { echo "skip: $NCCL absent (shared data)"; exit 77; }
mkdir "$tmp/six" "$tmp/twelve" "$tmp/twelve/notes"
echo "not a trace" >"$tmp/twelve/README.txt"
python3 - "$PAIR" "$tmp/six" "$NCCL" "$tmp/twelve" <<'PY' || exit 1
import gzip, sys
pair, six, nccl, twelve = sys.argv[1:5]
def write(text, old, new, path):
    assert text.count(old) == 1, old
    with open(path, "w") as f:
        f.write(text.replace(old, new))
for r in range(6):
    text = gzip.open("%s/sampled_rank-%d.json.gz" % (pair, r % 2), "rt").read()
    write(text, '"rank": %d, "world_size": 128' % (r % 2), '"rank": %d, "world_size": 6' % r, "%s/rank-%d.json" % (six, r))
text = gzip.open(nccl, "rt").read()
for r in range(12):
    write(text, '"rank": 0, "world_size": 2', '"rank": %d, "world_size": 12' % r, "%s/rank-%d.json" % (twelve, r))
PY

for dir in "$PAIR" "$tmp/six" "$tmp/twelve"; do
    procs="1 2 4"; [ "$dir" = "$tmp/twelve" ] && procs=3
    for cmd in stats critical-path replay; do
        for fmt in table json; do
            "$BIN" $cmd --format $fmt "$dir" >"$tmp/one.out" 2>"$tmp/one.err"
            want=$?
            [ -s "$tmp/one.out" ] || bad "$cmd --format $fmt $dir: the plain CLI printed nothing"
            [ "$dir" != "$tmp/twelve" ] || [ $fmt = json ] || grep -q "skipped entries .*README.txt" "$tmp/one.err" ||
                bad "$cmd $dir: no note on the skipped entries: $(cat "$tmp/one.err")"
            for p in $procs; do
                mpi $p $cmd --format $fmt "$dir" >"$tmp/p.out" 2>"$tmp/p.err"
                got=$?
                [ $got -eq $want ] || bad "$cmd --format $fmt $dir -np $p: exit $got, plain CLI $want: $(tail -3 "$tmp/p.err")"
                cmp -s "$tmp/one.out" "$tmp/p.out" || bad "$cmd --format $fmt $dir -np $p: stdout differs from the plain CLI's"
                cmp -s "$tmp/one.err" "$tmp/p.err" || bad "$cmd --format $fmt $dir -np $p: stderr differs: $(diff "$tmp/one.err" "$tmp/p.err" | head -4)"
            done
        done
    done
done
# the graph commands' other processes send condensed ranks (local graph +
# compact rank); TS_DIST_SEND=ranks sends whole ranks, which process 0
# condenses (bench/dist.sh's comparison): the same bytes either way, fewer
# of them exchanged condensed (nccl_data: a local graph with warnings, 3
# iterations a rank)
for cmd in critical-path replay; do
    "$BIN" $cmd --format json "$tmp/twelve" >"$tmp/one.out" 2>"$tmp/one.err"
    for send in parts ranks; do
        TS_DIST_SEND=$send TS_DIST_TIMES=1 timeout 120 mpirun --oversubscribe --allow-run-as-root -np 2 -x TS_DIST_SEND \
            -x TS_DIST_TIMES "$BIN" $cmd --format json "$tmp/twelve" >"$tmp/p.out" 2>"$tmp/p.err" || bad "$cmd TS_DIST_SEND=$send -np 2: exit $?: $(tail -3 "$tmp/p.err")"
        cmp -s "$tmp/one.out" "$tmp/p.out" || bad "$cmd TS_DIST_SEND=$send -np 2: stdout differs from the plain CLI's"
        grep -v '^dist: ' "$tmp/p.err" | cmp -s "$tmp/one.err" - || bad "$cmd TS_DIST_SEND=$send -np 2: stderr differs"
        grep -o 'exchange_mb [0-9.]*' "$tmp/p.err" | cut -d' ' -f2 >"$tmp/mb.$send"
    done
    awk -v a="$(cat "$tmp/mb.parts")" -v b="$(cat "$tmp/mb.ranks")" 'BEGIN { exit !(a > 0 && a < b / 2) }' ||
        bad "$cmd: $(cat "$tmp/mb.parts") MB exchanged condensed, $(cat "$tmp/mb.ranks") MB whole: not under half"
done

# --distributed without mpirun: one process (MPI's singleton), the same answer
"$BIN" replay --distributed "$tmp/six" >"$tmp/p.out" 2>"$tmp/p.err" || bad "replay --distributed: exit $?: $(cat "$tmp/p.err")"
"$BIN" replay "$tmp/six" 2>/dev/null | cmp -s - "$tmp/p.out" || bad "replay --distributed differs from replay"

# faults: the plain CLI's message (it names the file), exit 2, nothing on stdout
fault() {   # fault NAME P DIR [CMD]: expects the plain CLI's stderr and exit
    name=$1 p=$2 dir=$3 cmd=${4:-replay}
    "$BIN" $cmd "$dir" >/dev/null 2>"$tmp/one.err"
    want=$?
    [ $want -eq 2 ] || bad "$name: plain CLI exit $want, expected 2"
    mpi $p $cmd "$dir" >"$tmp/p.out" 2>"$tmp/p.err"
    got=$?
    [ $got -eq 2 ] || bad "$name: -np $p exit $got, expected 2"
    [ -s "$tmp/p.out" ] && bad "$name: -np $p printed an answer"
    grep -q "^trainscope: " "$tmp/one.err" || bad "$name: the plain CLI gave no message"
    # mpirun adds its own lines (a process returned non-zero): ours must be the plain CLI's
    grep '^trainscope: ' "$tmp/p.err" | cmp -s "$tmp/one.err" - ||
        bad "$name: -np $p said '$(cat "$tmp/p.err")', the plain CLI '$(cat "$tmp/one.err")'"
}
cp -r "$tmp/six" "$tmp/cut"
head -c 100000 "$tmp/six/rank-3.json" >"$tmp/cut/rank-3.json"   # file 3: process 1's share of 2
fault "rank-3.json cut short" 2 "$tmp/cut"
grep -q "rank-3.json: byte" "$tmp/p.err" || bad "cut file: message does not name rank-3.json and the byte: $(cat "$tmp/p.err")"
cp -r "$tmp/six" "$tmp/dangling"
ln -s "$tmp/nowhere.json" "$tmp/dangling/rank-6.json"
fault "dangling rank file" 4 "$tmp/dangling"
cp -r "$tmp/six" "$tmp/twice"
cp "$tmp/six/rank-2.json" "$tmp/twice/rank-2b.json"   # claims rank 2 too (distributedInfo)
fault "rank claimed twice" 2 "$tmp/twice" stats
grep -q "claims rank 2" "$tmp/p.err" || bad "rank claimed twice: $(cat "$tmp/p.err")"

# a process that dies after loading its share (process 1 of 2, process 0
# of 2, process 2 of 4): the job ends, no answer, mpirun names the process
for k in 1:2 0:2 2:4; do
    TS_DIST_TEST_EXIT_PROCESS=${k%:*} mpi ${k#*:} critical-path "$tmp/six" >"$tmp/p.out" 2>"$tmp/p.err"
    got=$?
    [ $got -ne 0 ] && [ $got -ne 124 ] || bad "process ${k%:*} of ${k#*:} dead: exit $got (124 = hung)"
    [ -s "$tmp/p.out" ] && bad "process ${k%:*} of ${k#*:} dead: an answer was printed"
    grep -q "Process name: \[\[[0-9]*,1\],${k%:*}\]" "$tmp/p.err" && grep -q "Exit code: *3" "$tmp/p.err" ||
        bad "process ${k%:*} of ${k#*:} dead: mpirun did not name it: $(cat "$tmp/p.err")"
done

# options that load several sets of traces (replay --windows) are refused, not half done
mpi 2 replay --windows "$PAIR" "$tmp/six" >"$tmp/p.out" 2>"$tmp/p.err"
got=$?
[ $got -eq 2 ] || bad "replay --windows under mpirun: exit $got, expected 2"
[ -s "$tmp/p.out" ] && bad "replay --windows under mpirun printed an answer"
grep -q "loads one set of traces" "$tmp/p.err" || bad "replay --windows under mpirun: $(cat "$tmp/p.err")"

# issue 27's options (docs/scale.md): a distributed run gathers whole ranks,
# so --in-memory changes nothing; --fold-replicas needs the bounded path and
# is refused before any load; --max-rss holds in every process
for cmd in stats replay; do
    "$BIN" $cmd "$tmp/six" >"$tmp/one.out" 2>/dev/null
    mpi 2 $cmd --in-memory "$tmp/six" >"$tmp/p.out" 2>"$tmp/p.err" || bad "$cmd --in-memory -np 2: exit $?: $(tail -3 "$tmp/p.err")"
    cmp -s "$tmp/one.out" "$tmp/p.out" || bad "$cmd --in-memory -np 2: stdout differs from the plain CLI's"
done
for cmd in replay critical-path; do
    mpi 2 $cmd --fold-replicas "$tmp/six" >"$tmp/p.out" 2>"$tmp/p.err"
    got=$?
    [ $got -eq 2 ] || bad "$cmd --fold-replicas -np 2: exit $got, expected 2"
    [ -s "$tmp/p.out" ] && bad "$cmd --fold-replicas -np 2 printed an answer"
    [ "$(grep -c '^trainscope: ' "$tmp/p.err")" -eq 1 ] && grep -q "^trainscope: --fold-replicas needs the bounded path: not with a distributed run" "$tmp/p.err" ||
        bad "$cmd --fold-replicas -np 2: $(cat "$tmp/p.err")"
done
mpi 2 replay --max-rss 0.002 "$tmp/six" >"$tmp/p.out" 2>"$tmp/p.err"
got=$?
[ $got -eq 2 ] || bad "replay --max-rss 0.002 -np 2: exit $got, expected 2"
[ -s "$tmp/p.out" ] && bad "replay --max-rss 0.002 -np 2 printed an answer"
grep -q "^trainscope: stopped: needs more than --max-rss 0.002 GB: .* held while loading rank files" "$tmp/p.err" ||
    bad "replay --max-rss 0.002 -np 2: $(cat "$tmp/p.err")"

# the MPI library missing: said, exit 2
TS_DIST_LIB=$tmp/none.so "$BIN" stats --distributed "$PAIR" >"$tmp/p.out" 2>"$tmp/p.err"
got=$?
[ $got -eq 2 ] || bad "missing libtrainscope_dist.so: exit $got"
grep -q "libtrainscope_dist.so" "$tmp/p.err" || bad "missing libtrainscope_dist.so: $(cat "$tmp/p.err")"
# and a command without a distributed form refuses the flag
"$BIN" breakdown --distributed "$PAIR" >/dev/null 2>&1 && bad "breakdown --distributed accepted"
exit $fail
