# train.py - a 2-rank DDP training over gloo on CPU (3-layer MLP, 399,370
# parameters, 2 buckets), recorded by make_trace.sh with allocator events:
# the real input of `trainscope report`'s memory section (test/e2e/report_html.sh).
import sys
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

rank, world, port = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
torch.set_num_threads(1)
torch.manual_seed(0)
dist.init_process_group("gloo", init_method="tcp://127.0.0.1:" + port, rank=rank, world_size=world)
model = DDP(torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(),
                                torch.nn.Linear(512, 512), torch.nn.ReLU(),
                                torch.nn.Linear(512, 10)), bucket_cap_mb=1)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
gen = torch.Generator().manual_seed(1000 + rank)
for step in range(6):
    x, y = torch.randn(64, 256, generator=gen), torch.randint(0, 10, (64,), generator=gen)
    opt.zero_grad()
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
print("rank %d done" % rank)
dist.destroy_process_group()
