# ddp_hook.py - written by `trainscope optimize`: all-reduce DDP's gradients in the
# plan's buckets, which no bucket_cap_mb gives (DDP rebuilds its buckets from the order
# gradients became ready, so parameter order cannot either). Usage:
#     model = DistributedDataParallel(module)
#     import ddp_hook; ddp_hook.register(model)
# Each plan group is all-reduced once its last gradient is in, whichever DDP bucket
# brought it; a DDP bucket is done once every group it touches is.
GROUPS = [
    ["head.bias", "head.weight", "encoder.layers.3.norm2.bias", "encoder.layers.3.norm2.weight", "encoder.layers.3.norm1.bias", "encoder.layers.3.norm1.weight", "encoder.layers.3.linear2.bias"],
    ["encoder.layers.3.linear2.weight", "encoder.layers.3.linear1.bias"],
    ["encoder.layers.3.linear1.weight"],
    ["encoder.layers.3.self_attn.out_proj.bias", "encoder.layers.3.self_attn.out_proj.weight", "encoder.layers.3.self_attn.in_proj_bias", "encoder.layers.3.self_attn.in_proj_weight", "encoder.layers.2.norm2.bias", "encoder.layers.2.norm2.weight", "encoder.layers.2.norm1.bias", "encoder.layers.2.norm1.weight"],
    ["encoder.layers.2.linear2.bias", "encoder.layers.2.linear2.weight"],
    ["encoder.layers.2.linear1.bias"],
    ["encoder.layers.2.linear1.weight", "encoder.layers.2.self_attn.out_proj.bias", "encoder.layers.2.self_attn.out_proj.weight", "encoder.layers.2.self_attn.in_proj_bias", "encoder.layers.2.self_attn.in_proj_weight", "encoder.layers.1.norm2.bias", "encoder.layers.1.norm2.weight", "encoder.layers.1.norm1.bias", "encoder.layers.1.norm1.weight", "encoder.layers.1.linear2.bias", "encoder.layers.1.linear2.weight", "encoder.layers.1.linear1.bias"],
    ["encoder.layers.1.linear1.weight", "encoder.layers.1.self_attn.out_proj.bias", "encoder.layers.1.self_attn.out_proj.weight", "encoder.layers.1.self_attn.in_proj_bias", "encoder.layers.1.self_attn.in_proj_weight"],
    ["encoder.layers.0.norm2.bias", "encoder.layers.0.norm2.weight", "encoder.layers.0.norm1.bias", "encoder.layers.0.norm1.weight", "encoder.layers.0.linear2.bias", "encoder.layers.0.linear2.weight", "encoder.layers.0.linear1.bias", "encoder.layers.0.linear1.weight", "encoder.layers.0.self_attn.out_proj.bias", "encoder.layers.0.self_attn.out_proj.weight", "encoder.layers.0.self_attn.in_proj_bias", "encoder.layers.0.self_attn.in_proj_weight"],
    ["embed.weight"],
]

import torch
import torch.distributed as dist


class _Plan:
    def __init__(self, model, process_group):
        names = {id(p): n for n, p in model.module.named_parameters()}
        self.names = names
        self.pg = process_group
        self.world = dist.get_world_size(process_group)
        self.group_of = {n: g for g, grp in enumerate(GROUPS) for n in grp}
        missing = [n for n in names.values() if n not in self.group_of]
        if missing:
            raise ValueError('ddp_hook: the plan does not name ' + ', '.join(missing[:5]))
        self.pending = {}   # group -> {name: view of a DDP bucket}
        self.waiters = {}   # group -> [(bucket future, groups left, buffer)]

    def group_done(self, g):
        for w in self.waiters.pop(g, []):
            w[1].discard(g)
            if not w[1]:
                w[0].set_result(w[2])

    def launch(self, g):
        members = self.pending.pop(g)
        flat = torch.cat([members[n].reshape(-1) for n in GROUPS[g]]).div_(self.world)
        fut = dist.all_reduce(flat, group=self.pg, async_op=True).get_future()

        def done(f):
            out, off = f.value()[0], 0
            for n in GROUPS[g]:
                v = members[n]
                v.copy_(out[off:off + v.numel()].view_as(v))
                off += v.numel()
            self.group_done(g)
        fut.then(done)


def _hook(plan, bucket):
    buf, off, groups = bucket.buffer(), 0, set()
    for p in bucket.parameters():
        n = plan.names[id(p)]
        g = plan.group_of[n]
        plan.pending.setdefault(g, {})[n] = buf[off:off + p.numel()]
        off += p.numel()
        groups.add(g)
    fut = torch.futures.Future()
    w = (fut, set(groups), buf)
    for g in groups:
        plan.waiters.setdefault(g, []).append(w)
    for g in sorted(groups):
        if len(plan.pending.get(g, ())) == len(GROUPS[g]):
            plan.launch(g)
    return fut


def register(model, process_group=None):
    """Register the plan's grouping on a DistributedDataParallel model."""
    model.register_comm_hook(_Plan(model, process_group), _hook)
