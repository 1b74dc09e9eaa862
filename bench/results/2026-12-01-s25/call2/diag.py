import os, sys, time
import torch, flashvision
b, nq, nk, h, d = map(int, sys.argv[1:6])
torch.manual_seed(0)
q = torch.randn(b, nq, h, d, device="cuda", dtype=torch.bfloat16)
k = torch.randn(b, nk, h, d, device="cuda", dtype=torch.bfloat16)
v = torch.randn(b, nk, h, d, device="cuda", dtype=torch.bfloat16)
ref = torch.nn.functional.scaled_dot_product_attention(q.transpose(1, 2).float(), k.transpose(1, 2).float(), v.transpose(1, 2).float()).transpose(1, 2)
for i in range(3):
    t = time.time()
    o = flashvision.attention(q, k, v)
    torch.cuda.synchronize()
    print(f"run {i}: {1e3*(time.time()-t):.2f} ms err {(o.float()-ref).abs().max().item():.3e}", flush=True)
