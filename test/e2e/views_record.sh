#!/bin/sh
# views_record.sh - the views on traces recorded here: the allocator view of
# `record --torch --memory` (a small CPU training loop) equals the [memory]
# events' own Total Allocated and Bytes, and the comm view of `record --mpi`
# (a 2-rank program with blocking sends, MPI_Isend/MPI_Irecv completed by
# MPI_Waitall and MPI_Wait, and all-reduces) pairs each send with its receive
# as scripts/views_check.py does from the two JSON files.
set -e
BIN=${TS_BIN:-build/trainscope}
PY=/usr/bin/python3
command -v mpicc >/dev/null || { echo "views_record: mpicc not found"; exit 1; }
if ! $PY -c "import torch" 2>/dev/null; then echo "skip: $PY has no torch"; exit 77; fi
tmp=$(mktemp -d /tmp/ts_e2e_views_record.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "views_record: $*"; exit 1; }

cat >"$tmp/train.py" <<'P'
import torch
torch.set_num_threads(1)
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(128, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(6):
    x, y = torch.randn(32, 128), torch.randint(0, 10, (32,))
    opt.zero_grad()
    torch.nn.functional.cross_entropy(model(x), y).backward()
    opt.step()
P
"$BIN" record --torch --steps 1:4 --memory -o "$tmp/t" -- $PY "$tmp/train.py" >/dev/null 2>"$tmp/err" ||
    fail "record --torch exited $?: $(cat "$tmp/err")"
"$BIN" views --view allocator --format json "$tmp/t" >"$tmp/alloc.json" 2>/dev/null || fail "allocator exited $?"
$PY scripts/views_check.py memtrace "$tmp/t" "$tmp/alloc.json" || fail "the allocator view differs from the [memory] events"
"$BIN" views --view callstack "$tmp/t" 2>/dev/null | grep -q "ProfilerStep#" || fail "callstack shows no step"

cat >"$tmp/p2p.c" <<'C'
#include <mpi.h>
#include <unistd.h>
int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, sizes[3] = {1024, 65536, 1 << 20};
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    static char buf[4][1 << 20];
    for (int i = 0; i < 3; i++) {
        if (rank == 0) MPI_Send(buf[0], sizes[i], MPI_CHAR, 1, 7, MPI_COMM_WORLD);
        else { usleep(2000); MPI_Recv(buf[0], sizes[i], MPI_CHAR, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE); }
    }
    MPI_Request rq[3];
    if (rank == 1) {
        for (int i = 0; i < 3; i++) MPI_Isend(buf[i], 4096 * (i + 1), MPI_CHAR, 0, 9, MPI_COMM_WORLD, &rq[i]);
        MPI_Waitall(3, rq, MPI_STATUSES_IGNORE);
    } else {
        for (int i = 0; i < 2; i++) MPI_Irecv(buf[i], 4096 * (i + 1), MPI_CHAR, 1, 9, MPI_COMM_WORLD, &rq[i]);
        usleep(1000);
        MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
        MPI_Irecv(buf[2], 4096 * 3, MPI_CHAR, 1, 9, MPI_COMM_WORLD, &rq[2]);
        MPI_Wait(&rq[2], MPI_STATUS_IGNORE);
    }
    float x = 1, y;
    for (int i = 0; i < 4; i++) MPI_Allreduce(&x, &y, 1, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
C
mpicc -O2 -o "$tmp/p2p" "$tmp/p2p.c"
"$BIN" record --mpi -o "$tmp/m" -- mpirun -np 2 --allow-run-as-root --oversubscribe "$tmp/p2p" >/dev/null 2>"$tmp/err" ||
    fail "record --mpi exited $?: $(cat "$tmp/err")"
"$BIN" views --view comm --format json "$tmp/m" >"$tmp/comm.json" || fail "comm exited $?"
$PY scripts/views_check.py mpi "$tmp/m" "$tmp/comm.json" || fail "the comm view differs from the MPI traces"
# by hand: 3 blocking pairs 0>1 (1 KiB + 64 KiB + 1 MiB), 3 nonblocking pairs 1>0 (4 + 8 + 12 KiB), nothing unpaired
$PY - "$tmp/comm.json" <<'P' || fail "pairs by hand"
import json, sys
t = json.load(open(sys.argv[1]))["tables"]["latency"]
p = {(r["src"], r["peer"]): r for r in t if r["what"] == "pair"}
assert p[(0, 1)]["count"] == 3 and p[(0, 1)]["bytes"] == 1024 + 65536 + (1 << 20), p
assert p[(1, 0)]["count"] == 3 and p[(1, 0)]["bytes"] == 4096 * 6, p
assert all(r["negative"] == 0 for r in p.values()), p
a = [r for r in t if r["kind"] == "allreduce"]
assert len(a) == 1 and a[0]["count"] == 8 and a[0]["bytes"] == 8 * 4, a
P
"$BIN" views --view comm "$tmp/m" | grep -q "unpaired: 0" || fail "a send or receive left unpaired"
echo "views_record: allocator and comm views equal the recorded files"
