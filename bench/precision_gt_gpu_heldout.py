#!/usr/bin/env python3
"""precision_gt_gpu_heldout.py - a held-out GPU ground truth for the precision
what-if: bench/precision_gt_gpu.py's method, measurements and files, on three
models and a plan that the GPU predictor was not designed on (its rules were
made looking at precision_gt_gpu.py's mlp, cnn and tfm). Not for: anything
precision_gt_gpu.py does not do; this file only adds models and a plan.

  python3 bench/precision_gt_gpu_heldout.py --out DIR [precision_gt_gpu.py's options]

Models (each step 5-50 ms on an H200 at fp32):
  resnet  residual blocks (conv-BatchNorm-ReLU x2 plus the skip), 96x96
          images, batch 64: BatchNorm is in autocast's fp32 list;
  mlpln   six 2048-wide Linear + LayerNorm + GELU blocks, batch 8192;
  tfmw    three encoder layers (precision_gt_gpu.Encoder) of d_model 1536,
          12 heads, seq 256, batch 32.
Plans: precision_gt_gpu.py's (fp32, bf16, fp16, mixA, mixB) and mixC, every
other module (by position) in bf16, which puts a cast between every pair.
"""
import collections
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import precision_gt_gpu as gt   # noqa: E402


class Res(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c1, self.b1 = nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c)
        self.c2, self.b2 = nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c)

    def forward(self, x):
        return torch.relu(x + self.b2(self.c2(torch.relu(self.b1(self.c1(x))))))


class LnBlock(nn.Module):
    def __init__(self, w):
        super().__init__()
        self.fc, self.ln = nn.Linear(w, w), nn.LayerNorm(w)

    def forward(self, x):
        return nn.functional.gelu(self.ln(self.fc(x).float()))


def build(name, tiny, dev):
    torch.manual_seed(0)
    od = collections.OrderedDict
    if name == "resnet":
        c, hw, b = (8, 16, 4) if tiny else (64, 96, 64)
        m = nn.Sequential(od(stem=nn.Conv2d(3, c, 3, padding=1), res1=Res(c), res2=Res(c), down=nn.Conv2d(c, 2 * c, 3, 2, 1),
                             res3=Res(2 * c), res4=Res(2 * c), gap=nn.AdaptiveAvgPool2d(1), flat=nn.Flatten(),
                             head=nn.Linear(2 * c, 16)))
        x = torch.randn(b, 3, hw, hw)
    elif name == "mlpln":
        w, b = (64, 32) if tiny else (2048, 8192)
        m = nn.Sequential(od([("inp", nn.Linear(w, w))] + [("blk%d" % i, LnBlock(w)) for i in range(1, 6)]
                             + [("head", nn.Linear(w, 16))]))
        x = torch.randn(b, w)
    elif name == "tfmw":
        d, heads, seq, b = (64, 4, 16, 2) if tiny else (1536, 12, 256, 32)
        m = nn.Sequential(od(inp=nn.Linear(d, d), enc1=gt.Encoder(d, heads), enc2=gt.Encoder(d, heads),
                             enc3=gt.Encoder(d, heads), head=nn.Linear(d, 16)))
        x = torch.randn(b, seq, d)
    else:
        return base_build(name, tiny, dev)
    return m.to(dev), x.to(dev)


def plans(model, dev):
    out = base_plans(model, dev)
    names = [n for n, _ in model.named_children()]
    out["mixC"] = {n: "bf16" for n in names[::2]}
    return out


base_build, base_plans = gt.build, gt.plans
gt.build, gt.plans, gt.MODELS = build, plans, ("resnet", "mlpln", "tfmw")

if __name__ == "__main__":
    sys.exit(gt.main())
