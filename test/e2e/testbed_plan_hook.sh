#!/bin/sh
# The testbed's plan hook (bench/testbed/rank.py, GroupHook): explicit gradient
# groups all-reduced by a DDP communication hook must train exactly as DDP's own
# buckets do (the reference: DDP's averaging), here 2 gloo ranks on 127.0.0.1,
# mlp, one group per layer, 3 SGD steps: the parameters are compared bit for bit.
# A plan that misses a parameter is refused naming the file (exit 2).
set -e
/usr/bin/python3 -c "import torch.distributed" 2>/dev/null || { echo "skip: needs Debian python3-torch"; exit 77; }
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
cat > "$TMP/check.py" <<'PY'
import os, sys
os.environ["OMP_NUM_THREADS"] = "1"
sys.path.insert(0, os.path.join(os.getcwd(), "bench", "testbed"))
import torch, torch.distributed as dist, torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP


def run(rank, port, out):
    sys.argv = ["rank.py"]
    import rank as R
    from models import MODELS
    os.environ["GLOO_SOCKET_IFNAME"] = "lo"
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:%d" % port, rank=rank, world_size=2)
    params = []
    for plan in (False, True):
        torch.manual_seed(0)
        net = MODELS["mlp"][0]()
        if plan:
            groups = [["6.weight", "6.bias"], ["4.weight", "4.bias"], ["2.weight", "2.bias"], ["0.weight", "0.bias"]]
            dist._DEFAULT_FIRST_BUCKET_BYTES = 1
            model = DDP(net, bucket_cap_mb=1e-6)
            model.register_comm_hook(R.GroupHook(net, groups, 2), R.group_hook)
        else:
            model = DDP(net, bucket_cap_mb=25)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        g = torch.Generator().manual_seed(5 + rank)
        for _ in range(3):
            R.train_step(model, opt, torch.randn(8, 1024, generator=g), torch.randint(0, 10, (8,), generator=g))
        params.append(torch.cat([p.detach().reshape(-1) for p in net.parameters()]))
    if rank == 0:
        torch.save(params, out)
    dist.destroy_process_group()


if __name__ == "__main__":
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    mp.spawn(run, args=(port, sys.argv[1]), nprocs=2)
    ddp, hook = torch.load(sys.argv[1])
    torch.manual_seed(0)
    init = torch.cat([p.detach().reshape(-1) for p in __import__("models").MODELS["mlp"][0]().parameters()])
    assert (ddp - init).abs().max().item() > 0, "DDP did not train"
    assert (ddp - hook).abs().max().item() == 0, "the plan hook trained otherwise than DDP"
    # A plan that misses a parameter: refused, naming the file.
    import json, subprocess
    bad = os.path.join(os.path.dirname(sys.argv[1]), "bad_plan.json")
    json.dump({"ddp": {"bucket_cap_mb": None, "groups": [["0.weight"]]}}, open(bad, "w"))
    p = subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, 'bench/testbed'); sys.argv=['x']; import rank, models; "
                        "rank.load_plan(sys.argv[1] if len(sys.argv) > 1 else %r, models.MODELS['mlp'][0]())" % bad],
                       capture_output=True, text=True)
    assert p.returncode == 2 and bad in p.stderr and "missing" in p.stderr, (p.returncode, p.stderr)
    print("ok")
PY
/usr/bin/python3 "$TMP/check.py" "$TMP/params.pt"
