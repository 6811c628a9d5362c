#!/bin/sh
# critical_path_mpi_nonblocking.sh - nonblocking MPI recorded by `trainscope
# record --mpi` (Open MPI, 2 ranks): every MPI_Iallreduce is matched across
# the ranks and completes in the MPI_Wait naming its request (an mpi_request
# edge, and the barrier releases the wait); the Isend/Irecv pair is matched
# as a point-to-point instance; MPI_Waitall records no handles, so the
# requests it completes are warned.
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
    static double a[1 << 16], b[1 << 16], x[4];
    double s = 0;
    for (int it = 0; it < 4; it++) {
        MPI_Request req[2];
        MPI_Iallreduce(a, b, 1 << 16, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &req[0]);
        for (int i = 0; i < 200000 * (rank + 1); i++) s += i * 1e-9;   /* rank 1 computes longer */
        MPI_Wait(&req[0], MPI_STATUS_IGNORE);
        if (rank == 0) MPI_Isend(x, 4, MPI_DOUBLE, 1, it, MPI_COMM_WORLD, &req[1]);
        else MPI_Irecv(x, 4, MPI_DOUBLE, 0, it, MPI_COMM_WORLD, &req[1]);
        MPI_Wait(&req[1], MPI_STATUS_IGNORE);
    }
    MPI_Request last;
    MPI_Iallreduce(a, b, 16, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &last);
    MPI_Waitall(1, &last, MPI_STATUSES_IGNORE);
    printf("done %d %g\n", rank, s > 0 ? 1.0 : 0.0);
    MPI_Finalize();
    return 0;
}
C
mpicc -O1 -std=c11 -o "$tmp/nb" "$tmp/nb.c"
"$BIN" record --mpi -o "$tmp/t" -- mpirun -np 2 --allow-run-as-root --oversubscribe "$tmp/nb" >"$tmp/out" 2>&1 ||
    { echo "record failed"; cat "$tmp/out"; exit 1; }
"$BIN" critical-path --format json "$tmp"/t/*.json >"$tmp/cp" || { echo "critical-path failed"; cat "$tmp/cp"; exit 1; }
/usr/bin/python3 - "$tmp/cp" <<'P'
import json, sys
d = json.load(open(sys.argv[1]))
e = d["edges_by_kind"]
# per rank: 4 Iallreduce + 4 Isend or Irecv, each completed by its MPI_Wait
assert e["mpi_request"] == 2 * 8, e
# 5 Iallreduce instances + 4 p2p instances across the two ranks
assert d["collectives"] == 9, d["collectives"]
w = [x for x in d["graph_warnings"] if "nonblocking MPI requests complete in no MPI_Wait" in x]
assert len(w) == 2 and all("1 of 9" in x for x in w), d["graph_warnings"]
P
echo "critical_path_mpi_nonblocking: ok"
