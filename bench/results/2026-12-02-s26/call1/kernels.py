"""Per case: the CUDA kernels one forward launches and their device time (torch.profiler), for
flashvision and SDPA's cuDNN backend, eager, bhsd bf16, 30 calls after warm-up."""
import sys
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.profiler import profile, ProfilerActivity
from flashvision.torch import scaled_dot_product_attention as fv_sdpa

CASES = {
    "sd15-cross-64": (2, 8, 4096, 77, 40), "sd15-self-16": (2, 8, 256, 256, 160),
    "sd15-self-32": (2, 8, 1024, 1024, 80), "vit-l14-336": (64, 16, 577, 577, 64),
    "sdxl-cross": (2, 10, 4096, 77, 64), "sdxl-self-128": (2, 10, 4096, 4096, 64),
    "dit-xl2-512": (16, 16, 1024, 1024, 72), "flux-1024": (1, 24, 4608, 4608, 128),
}
def main(names):
  for name in names:
      b, h, nq, nk, d = CASES[name]
      q = torch.randn(b, h, nq, d, device="cuda", dtype=torch.bfloat16)
      k = torch.randn(b, h, nk, d, device="cuda", dtype=torch.bfloat16)
      v = torch.randn(b, h, nk, d, device="cuda", dtype=torch.bfloat16)
      def cudnn():
          with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
              return F.scaled_dot_product_attention(q, k, v)
      for label, fn in (("flashvision", lambda: fv_sdpa(q, k, v)), ("sdpa-cudnn", cudnn)):
          for _ in range(5):
              fn()
          torch.cuda.synchronize()
          with profile(activities=[ProfilerActivity.CUDA]) as prof:
              for _ in range(30):
                  fn()
              torch.cuda.synchronize()
          rows = [e for e in prof.key_averages() if e.device_type.name == "CUDA" and e.count > 0]
          total = sum(e.device_time_total for e in rows) / 30
          print(f"{name:14s} {label:12s} device {total:8.2f} us a call")
          for e in sorted(rows, key=lambda e: -e.device_time_total):
              print(f"    {e.count // 30:3d}x {e.device_time_total / e.count:8.2f} us  {e.key[:110]}")


if __name__ == "__main__":
    main(sys.argv[1:] or list(CASES))
