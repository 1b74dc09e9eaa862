"""Session 15 (prepared in 14): a few fwd+bwd calls of one BENCH.md-shaped problem through
flashvision (default kernels) or SDPA's cuDNN backend, for Nsight Compute to profile.
Usage: one_call.py B H N D {flashvision|cudnn}"""
import sys
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

import flashvision.torch as fvt

b, h, n, d = (int(x) for x in sys.argv[1:5])
impl = sys.argv[5]
q, k, v = (torch.randn(b, h, n, d, device="cuda", dtype=torch.bfloat16).requires_grad_()
           for _ in range(3))
dout = torch.randn(b, h, n, d, device="cuda", dtype=torch.bfloat16)
for _ in range(3):
    if impl == "cudnn":
        with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
            out = F.scaled_dot_product_attention(q, k, v)
    else:
        out = fvt.scaled_dot_product_attention(q, k, v)
    torch.autograd.grad(out, (q, k, v), dout)
torch.cuda.synchronize()
