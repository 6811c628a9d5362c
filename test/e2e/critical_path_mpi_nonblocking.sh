#!/bin/sh
# critical_path_mpi_nonblocking.sh - nonblocking MPI recorded by `trainscope
# record --mpi` (Open MPI, 2 ranks): every nonblocking call is matched across
# the ranks and completes in the wait that names its request handle: MPI_Wait
# ("request"), MPI_Waitall / MPI_Waitany / MPI_Testsome (a "requests" array
# read before the call, with "index" / "indices" saying which completed). Each
# completion is an mpi_request edge and the barrier releases the wait; the
# Isend/Irecv pair is matched as a point-to-point instance. Nothing is left
# unfollowed, so no warning about requests.
set -e
BIN=${TS_BIN:-build/trainscope}
command -v mpicc >/dev/null || { echo "critical_path_mpi_nonblocking: mpicc not found"; exit 1; }
tmp=$(mktemp -d /tmp/ts_e2e_mpi_nb.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/nb.c" <<'C'
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    static double a[1 << 16], b[1 << 16], c[16], d[16], x[4];
    double s = 0;
    for (int it = 0; it < 4; it++) {
        MPI_Request req[3];
        MPI_Iallreduce(a, b, 1 << 16, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &req[0]);
        for (int i = 0; i < 200000 * (rank + 1); i++) s += i * 1e-9;   /* rank 1 computes longer */
        MPI_Wait(&req[0], MPI_STATUS_IGNORE);
        if (rank == 0) MPI_Isend(x, 4, MPI_DOUBLE, 1, it, MPI_COMM_WORLD, &req[1]);
        else MPI_Irecv(x, 4, MPI_DOUBLE, 0, it, MPI_COMM_WORLD, &req[1]);
        MPI_Iallreduce(c, d, 16, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &req[2]);
        MPI_Waitall(2, &req[1], MPI_STATUSES_IGNORE);
    }
    MPI_Request two[2];
    int idx, out, ind[1];
    MPI_Iallreduce(c, d, 16, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &two[0]);
    MPI_Iallreduce(a, b, 16, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &two[1]);
    MPI_Waitany(2, two, &idx, MPI_STATUS_IGNORE);
    MPI_Waitany(2, two, &idx, MPI_STATUS_IGNORE);
    MPI_Request last;
    MPI_Iallreduce(a, b, 16, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &last);
    do MPI_Testsome(1, &last, &out, ind, MPI_STATUSES_IGNORE); while (out == 0);
    printf("done %d %g\n", rank, s > 0 ? 1.0 : 0.0);
    MPI_Finalize();
    return 0;
}
C
mpicc -O1 -std=c11 -o "$tmp/nb" "$tmp/nb.c"
"$BIN" record --mpi -o "$tmp/t" -- mpirun -np 2 --allow-run-as-root --oversubscribe "$tmp/nb" >"$tmp/out" 2>&1 ||
    { echo "record failed"; cat "$tmp/out"; exit 1; }
"$BIN" critical-path --format json "$tmp"/t/*.json >"$tmp/cp" || { echo "critical-path failed"; cat "$tmp/cp"; exit 1; }
/usr/bin/python3 - "$tmp/cp" "$tmp"/t/*.json <<'P'
import json, sys
# the collector writes the handles as JSON arrays, the completed positions too
for f in sys.argv[2:]:
    ev = json.load(open(f))["traceEvents"]
    wa = [e for e in ev if e.get("name") == "MPI_Waitall"]
    assert len(wa) == 4 and all(isinstance(e["args"]["requests"], list) and len(e["args"]["requests"]) == 2
                                and e["args"]["n_requests"] == 2 for e in wa), wa
    wy = [e for e in ev if e.get("name") == "MPI_Waitany"]
    assert sorted(e["args"]["index"] for e in wy) == [0, 1], wy
    ts = [e for e in ev if e.get("name") == "MPI_Testsome" and e["args"]["completed"] == 1]
    assert len(ts) == 1 and ts[0]["args"]["indices"] == [0], ts
d = json.load(open(sys.argv[1]))
e = d["edges_by_kind"]
# per rank: 4 x (Iallreduce by MPI_Wait, Isend or Irecv and a small Iallreduce by MPI_Waitall),
# 2 Iallreduce by MPI_Waitany, 1 by MPI_Testsome
assert e["mpi_request"] == 2 * 15, e
# 11 Iallreduce instances + 4 p2p instances across the two ranks
assert d["collectives"] == 15, d["collectives"]
w = [x["first"] for x in d["warnings"] if x["kind"] == "graph" and "nonblocking MPI requests" in x["first"]]
assert not w, w
P
# distributed (docs/distributed.md): process 1 sends its rank condensed, the
# nonblocking calls' completions (mpi_done) inside its local graph; process 0
# prints the plain CLI's bytes
if [ -r "$(dirname "$BIN")/libtrainscope_dist.so" ]; then
    for cmd in critical-path replay; do
        "$BIN" $cmd --format json "$tmp"/t/*.json >"$tmp/one" 2>"$tmp/one.err"
        ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" timeout 120 mpirun --oversubscribe --allow-run-as-root \
            -np 2 "$BIN" $cmd --format json "$tmp"/t/*.json >"$tmp/two" 2>"$tmp/two.err" ||
            { echo "$cmd -np 2 failed"; cat "$tmp/two.err"; exit 1; }
        cmp -s "$tmp/one" "$tmp/two" && cmp -s "$tmp/one.err" "$tmp/two.err" ||
            { echo "$cmd -np 2 differs from the plain CLI"; diff "$tmp/one" "$tmp/two" | head; exit 1; }
    done
fi
echo "critical_path_mpi_nonblocking: ok"
