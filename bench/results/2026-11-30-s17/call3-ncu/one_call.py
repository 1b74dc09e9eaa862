"""Five forward calls of one attention shape, for Nsight Compute: fv (flashvision) or cudnn."""
import sys

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

B, H, N, NK, D = map(int, sys.argv[1:6])
impl = sys.argv[6]
g = torch.Generator(device="cuda").manual_seed(1)
q = torch.randn(B, H, N, D, device="cuda", dtype=torch.bfloat16, generator=g)
k = torch.randn(B, H, NK, D, device="cuda", dtype=torch.bfloat16, generator=g)
v = torch.randn(B, H, NK, D, device="cuda", dtype=torch.bfloat16, generator=g)
if impl == "fv":
    import flashvision.torch as fvt
    call = lambda: fvt.scaled_dot_product_attention(q, k, v)  # noqa: E731
else:
    def call():
        with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
            return torch.nn.functional.scaled_dot_product_attention(q, k, v)
for _ in range(5):
    call()
torch.cuda.synchronize()
