import torch
x = torch.randn(2048, 2048, device="cuda")
for i in range(20):
    y = (x @ x).cpu()      # a GEMM kernel, then a device-to-host copy
torch.cuda.synchronize()
print("cuda_only done")
