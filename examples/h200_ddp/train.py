import os, sys, torch, torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
local = int(os.environ.get("LOCAL_RANK", rank))
gpu = torch.cuda.is_available()
dev = torch.device("cuda", local) if gpu else torch.device("cpu")
if gpu:
    torch.cuda.set_device(dev)
torch.manual_seed(0)
dist.init_process_group("nccl" if gpu else "gloo")
h = 4096 if gpu else 512
model = DDP(torch.nn.Sequential(torch.nn.Linear(1024, h), torch.nn.ReLU(), torch.nn.Linear(h, h),
                                torch.nn.ReLU(), torch.nn.Linear(h, 10)).to(dev),
            device_ids=[local] if gpu else None, bucket_cap_mb=8)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(int(sys.argv[1])):
    x, y = torch.randn(256, 1024, device=dev), torch.randint(0, 10, (256,), device=dev)
    opt.zero_grad()
    torch.nn.functional.cross_entropy(model(x), y).backward()
    opt.step()
if gpu:
    torch.cuda.synchronize()
print("rank %d trained" % rank)
dist.destroy_process_group()
