"""Kernel times of one flashvision forward on vae-mid-512 (torch profiler), per FLASHVISION_SM90_FWD_SPLIT."""
import os, torch, flashvision
from torch.profiler import profile, ProfilerActivity
q, k, v = (torch.randn(1, 1, 4096, 512, device="cuda", dtype=torch.bfloat16) for _ in range(3))
for split in ("auto", "2", "3", "4", "5", "8"):
    os.environ["FLASHVISION_SM90_FWD_SPLIT"] = split
    for _ in range(5):
        flashvision.attention(q, k, v, layout="bhsd")
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(10):
            flashvision.attention(q, k, v, layout="bhsd")
        torch.cuda.synchronize()
    rows = {}
    for e in prof.events():
        if e.device_type.name == "CUDA":
            name = e.name.split("<")[0][:40]
            rows.setdefault(name, []).append(e.device_time_total if hasattr(e, "device_time_total") else e.cuda_time_total)
    print("split", split, "  ".join(f"{n}: n={len(t)} mean={sum(t)/len(t):.1f}us" for n, t in rows.items()))
