"""Session 15: the kernel names and mean device times of one cuDNN SDPA fwd+bwd call (bf16)."""
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.profiler import ProfilerActivity, profile

q, k, v = (torch.randn(4, 16, 4096, 128, device="cuda", dtype=torch.bfloat16).requires_grad_()
           for _ in range(3))
dout = torch.randn_like(q)
def call():
    with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
        out = F.scaled_dot_product_attention(q, k, v)
    torch.autograd.grad(out, (q, k, v), dout)
for _ in range(3):
    call()
torch.cuda.synchronize()
with profile(activities=[ProfilerActivity.CUDA]) as prof:
    call()
    torch.cuda.synchronize()
for e in prof.key_averages():
    if e.device_type.name == "CUDA":
        print(f"{e.device_time:10.1f} us  {e.key[:160]}")
