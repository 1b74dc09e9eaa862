"""Scratch (session 20): one forward shape run a few times by one implementation, for ncu.
Usage: one_call.py IMPL B H N D, IMPL flashvision or cudnn."""
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

import flashvision.torch as fvt

impl = sys.argv[1]
b, h, n, d = (int(x) for x in sys.argv[2:6])
q, k, v = (torch.randn(b, h, n, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
for _ in range(6):
    if impl == "flashvision":
        fvt.scaled_dot_product_attention(q, k, v)
    else:
        with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
            F.scaled_dot_product_attention(q, k, v)
torch.cuda.synchronize()
