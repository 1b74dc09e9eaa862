"""Runs one case's forward `calls` times (for ncu): python one_case.py NAME IMPL CALLS."""
import sys
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
sys.path.insert(0, __file__.rsplit("/", 1)[0])
from kernels import CASES
from flashvision.torch import scaled_dot_product_attention as fv_sdpa

name, impl, calls = sys.argv[1], sys.argv[2], int(sys.argv[3])
b, h, nq, nk, d = CASES[name]
q = torch.randn(b, h, nq, d, device="cuda", dtype=torch.bfloat16)
k = torch.randn(b, h, nk, d, device="cuda", dtype=torch.bfloat16)
v = torch.randn(b, h, nk, d, device="cuda", dtype=torch.bfloat16)
torch.cuda.synchronize()
for _ in range(calls):
    if impl == "flashvision":
        fv_sdpa(q, k, v)
    else:
        with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
            F.scaled_dot_product_attention(q, k, v)
torch.cuda.synchronize()
