"""Session 41 (from session 31's): one forward shape (B H Nq Nk D, bf16, [B, H, N, D]) run a few times by one
implementation, for Nsight Compute. Usage: one_call.py IMPL B H NQ NK D; IMPL flashvision or cudnn."""
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

import flashvision.torch as fvt

impl = sys.argv[1]
b, h, nq, nk, d = (int(x) for x in sys.argv[2:7])
q = torch.randn(b, h, nq, d, device="cuda", dtype=torch.bfloat16)
k, v = (torch.randn(b, h, nk, d, device="cuda", dtype=torch.bfloat16) for _ in range(2))
for _ in range(6):
    if impl == "flashvision":
        fvt.scaled_dot_product_attention(q, k, v)
    else:
        with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
            F.scaled_dot_product_attention(q, k, v)
torch.cuda.synchronize()
