"""Per case: the CUDA kernels one FP8 forward launches (the transposition of V and the attention
kernel) and their device time (torch.profiler), beside flashvision's bf16 forward; eager, bhsd,
inputs quantized per tensor, 30 calls after warm-up."""
import sys
import torch
from torch.profiler import profile, ProfilerActivity
import flashvision
from flashvision.bench.impls import quantize_fp8
from flashvision.torch import scaled_dot_product_attention as fv_sdpa

CASES = {
    "vit-b16-224": (256, 12, 197, 197, 64), "vit-l14-336": (64, 16, 577, 577, 64),
    "sdxl-cross": (2, 10, 4096, 77, 64), "sd15-self-16": (2, 8, 256, 256, 160),
    "sweep-d128-n16384": (1, 16, 16384, 16384, 128), "flux-2048": (1, 24, 16896, 16896, 128),
    "video-49f-720p": (1, 24, 32760, 32760, 128),
}


def main(names):
    for name in names:
        b, h, nq, nk, d = CASES[name]
        q = torch.randn(b, h, nq, d, device="cuda", dtype=torch.bfloat16)
        k = torch.randn(b, h, nk, d, device="cuda", dtype=torch.bfloat16)
        v = torch.randn(b, h, nk, d, device="cuda", dtype=torch.bfloat16)
        (q8, sq), (k8, sk), (v8, sv) = (quantize_fp8(x) for x in (q, k, v))

        def fp8():
            return flashvision.attention_fp8(q8, k8, v8, descale_q=sq, descale_k=sk,
                                             descale_v=sv, layout="bhsd")

        calls = 30 if nq < 30000 else 5
        for label, fn in (("flashvision", lambda: fv_sdpa(q, k, v)), ("flashvision-fp8", fp8)):
            for _ in range(3):
                fn()
            torch.cuda.synchronize()
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                for _ in range(calls):
                    fn()
                torch.cuda.synchronize()
            rows = [e for e in prof.key_averages() if e.device_type.name == "CUDA" and e.count > 0]
            total = sum(e.device_time_total for e in rows) / calls
            print(f"{name:18s} {label:16s} device {total:9.2f} us a call")
            for e in sorted(rows, key=lambda e: -e.device_time_total):
                print(f"    {e.count // calls:3d}x {e.device_time_total / e.count:9.2f} us  "
                      f"{e.key[:100]}")


if __name__ == "__main__":
    main(sys.argv[1:] or list(CASES))
