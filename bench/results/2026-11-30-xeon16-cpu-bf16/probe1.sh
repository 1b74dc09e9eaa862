#!/usr/bin/env bash
# Probe (session 9): the Xeon's CPU features, AMX permission, and whether torch's CPU SDPA uses
# AMX/bf16 oneDNN kernels on the BENCH.md CPU cases.
S=$OUT/summary.txt
{ uname -r; lscpu | grep -E "Model name|^CPU\(s\)|Thread|MHz|L1d|L2|L3"; 
  grep -o -w -E "amx_bf16|amx_tile|amx_int8|avx512_bf16|avx512_fp16|avx512_vnni|avx_vnni" /proc/cpuinfo | sort | uniq -c; } > $S 2>&1
python3 - >> $S 2>&1 <<'PY'
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
ARCH_REQ_XCOMP_PERM, ARCH_GET_XCOMP_PERM, XTILEDATA = 0x1023, 0x1022, 18
r = libc.syscall(158, ARCH_REQ_XCOMP_PERM, XTILEDATA)
print("arch_prctl REQ_XCOMP_PERM(18) ->", r, "errno", ctypes.get_errno())
mask = ctypes.c_uint64(0)
r = libc.syscall(158, ARCH_GET_XCOMP_PERM, ctypes.byref(mask))
print("GET_XCOMP_PERM ->", r, hex(mask.value))
import torch, time
print("torch", torch.__version__, "threads", torch.get_num_threads(), "mkldnn", torch.backends.mkldnn.is_available())
print(torch.__config__.show().split("\n")[:3])
import torch.nn.functional as F
for (B,H,N,D) in [(2,8,1024,80),(2,8,256,160),(2,10,4096,64)]:
    q,k,v = (torch.randn(B,H,N,D,dtype=torch.bfloat16) for _ in range(3))
    for _ in range(3): F.scaled_dot_product_attention(q,k,v)
    t=time.perf_counter(); n=10
    for _ in range(n): F.scaled_dot_product_attention(q,k,v)
    dt=(time.perf_counter()-t)/n
    print(f"sdpa bf16 B{B} H{H} N{N} D{D}: {dt*1e3:.3f} ms {4*B*H*N*N*D/dt/1e12:.2f} TFLOP/s")
    a=torch.randn(4096,4096,dtype=torch.bfloat16); b=torch.randn(4096,4096,dtype=torch.bfloat16)
a@b; t=time.perf_counter(); a@b; dt=time.perf_counter()-t
print(f"bf16 matmul 4096^3: {2*4096**3/dt/1e12:.2f} TFLOP/s")
a=a.float(); b=b.float(); a@b; t=time.perf_counter(); a@b; dt=time.perf_counter()-t
print(f"fp32 matmul 4096^3: {2*4096**3/dt/1e12:.2f} TFLOP/s")
PY
ONEDNN_VERBOSE=1 timeout 60 python3 -c "
import torch, torch.nn.functional as F
q,k,v=(torch.randn(2,8,1024,80,dtype=torch.bfloat16) for _ in range(3))
F.scaled_dot_product_attention(q,k,v)" 2>&1 | grep -E "onednn_verbose" | cut -c1-200 | sort | uniq -c | sort -rn | head -12 >> $S
cat $S
