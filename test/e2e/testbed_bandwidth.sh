#!/bin/sh
# The namespaces testbed end to end (issue 20): 2 DDP ranks of the "wide"
# model over gloo, each in a network namespace, over links shaped to 100 and
# 400 Mbit/s (bench/testbed/testbed.py --preset ci, a few steps, ~30 s).
# Checks only what noise cannot flip: both runs complete and leave no
# namespace behind, the slow link is measured slower, and `replay --bandwidth
# x4` from the slow link's windows (and x0.25 from the fast one's) predicts
# the direction and at least half of the measured change. The accuracy
# figures themselves are bench/testbed_accuracy.sh's, not asserted here.
# Needs root (namespaces, tc): skips (77) only where a namespace cannot be made.
# Another testbed run (a bench, another checkout's tests) holds the testbed's
# lock while it runs: this one waits for it, at most TS_LOCK_WAIT seconds,
# which test/run.sh adds to this test's timeout from the line below; a wait
# that runs out fails naming the run that holds the lock.
# lock-wait: 600
set -e
BIN=${TS_BIN:-build/trainscope}
if [ "$(id -u)" -ne 0 ]; then echo "skip: needs root to create network namespaces"; exit 77; fi
command -v ip >/dev/null 2>&1 && command -v tc >/dev/null 2>&1 || {
    echo "testbed_bandwidth: ip and tc (iproute2) are needed: scripts/install-deps.sh" >&2; exit 1; }
if ! ip netns add "tsprobe$$" 2>/dev/null; then echo "skip: cannot create a network namespace here"; exit 77; fi
ip netns del "tsprobe$$"
/usr/bin/python3 -c "import torch.distributed" || { echo "testbed_bandwidth: needs Debian python3-torch" >&2; exit 1; }
TMP=$(mktemp -d); HOLDER=; trap '[ -z "$HOLDER" ] || kill "$HOLDER" 2>/dev/null; rm -rf "$TMP"' EXIT
# The bounded wait, on a lock file of its own (TS_TESTBED_LOCK; the real one
# may be another run's): a holder that never lets go ends the run after
# --lock-wait 2 s, exit 1, the holder's pid named, no results written.
/usr/bin/python3 -c 'import fcntl, os, sys, time
f = open(sys.argv[1], "a+"); fcntl.flock(f, fcntl.LOCK_EX); f.truncate(0)
f.write("pid %d: a holder\n" % os.getpid()); f.flush(); open(sys.argv[2], "w").close(); time.sleep(300)' \
    "$TMP/lock" "$TMP/held" &
HOLDER=$!
n=0; while [ ! -e "$TMP/held" ] && [ $n -lt 300 ]; do sleep 0.1; n=$((n+1)); done
if TS_TESTBED_LOCK="$TMP/lock" /usr/bin/python3 bench/testbed/testbed.py --preset ci --lock-wait 2 \
    --out "$TMP/none" >"$TMP/wlog" 2>&1; then echo "ran with the lock held"; cat "$TMP/wlog"; exit 1; fi
grep -qF "testbed: waited 2 s for $TMP/lock, still held by another testbed run (pid $HOLDER: a holder)" "$TMP/wlog" &&
    [ ! -e "$TMP/none" ] || { echo "lock wait:"; cat "$TMP/wlog"; exit 1; }
kill "$HOLDER"; HOLDER=
/usr/bin/python3 bench/testbed/testbed.py --preset ci --rounds 1 --warmup 1 --steps 4 --profiled-steps 3 \
    --lock-wait "${TS_LOCK_WAIT:-600}" --out "$TMP/tb" > "$TMP/log" 2>&1 || { cat "$TMP/log"; exit 1; }
# Namespaces are named tstb<pid>-...: one whose run is gone was left behind
# (another testbed run's, live, is not this test's business).
for ns in $(ip netns list | sed -n 's/^\(tstb[0-9]*-[^ ]*\).*/\1/p'); do
    pid=${ns#tstb}; pid=${pid%%-*}
    kill -0 "$pid" 2>/dev/null || { echo "testbed left namespace $ns behind:"; ip netns list; exit 1; }
done
grep -q "link check: 100 Mbit/s set" "$TMP/log" || { cat "$TMP/log"; exit 1; }
export BIN TB="$TMP/tb"
/usr/bin/python3 - <<'PY'
import json, os, subprocess
BIN, TB = os.environ["BIN"], os.environ["TB"]
S = {r: json.load(open(os.path.join(TB, "settings", "wide_w2_r%d_b25.json" % r))) for r in (100, 400)}
med = {r: S[r]["unprofiled"]["median_ms"] for r in S}
assert med[100] > med[400], ("the slow link measured no slower", med)
for src, dst, f in ((100, 400, "x4"), (400, 100, "x0.25")):
    wins = [os.path.join(TB, os.path.dirname(t[0])) for t in S[src]["trace_rounds"]]
    p = subprocess.run([BIN, "replay", "--format", "json", "--windows", "--bandwidth", f, "--gradients",
                        os.path.join(TB, S[src]["gradients"]), *wins], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    pred_change = r["predicted_iteration_us"] / 1e3 - r["measured_iteration_us"] / 1e3
    meas_change = med[dst] - med[src]
    print("%d -> %d Mbit/s (--bandwidth %s): measured %+.1f ms, predicted %+.1f ms" % (src, dst, f, meas_change,
                                                                                     pred_change))
    assert pred_change * meas_change > 0, "wrong direction"
    assert abs(pred_change) >= 0.5 * abs(meas_change), "less than half the measured change"
PY
