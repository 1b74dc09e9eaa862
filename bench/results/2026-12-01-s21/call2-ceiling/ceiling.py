"""The bf16 matmul rate this H200 gives, measured three ways in one process, with wall-clock
stamps to line up with nvidia-smi's log: KINDS.md's way (mean of ten 8192^3 products after three
warm-ups), triton's do_bench median over 2 s, and 6 s of back-to-back products read every 0.5 s."""
import time

import torch
import triton

N = 8192
FLOP = 2 * N**3


def stamp(text):
    print(f"{time.time():.1f} {text}", flush=True)


def burst(a, b):
    for _ in range(3):
        a @ b
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(10):
        a @ b
    end.record()
    end.synchronize()
    return FLOP * 10 / (start.elapsed_time(end) / 1e3) / 1e12


def stream(a, b, seconds, every):
    t_end = time.time() + seconds
    while time.time() < t_end:
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        count = 0
        t0 = time.time()
        while time.time() - t0 < every:
            for _ in range(8):
                a @ b
            count += 8
            torch.cuda.synchronize()
        end.record()
        end.synchronize()
        stamp(f"stream {FLOP * count / (start.elapsed_time(end) / 1e3) / 1e12:.1f} TFLOP/s")


def main():
    torch.manual_seed(0)
    a = torch.randn(N, N, device="cuda", dtype=torch.bfloat16)
    b = torch.randn_like(a)
    stamp(f"burst (KINDS.md: mean of 10 after 3 warm-ups) {burst(a, b):.1f} TFLOP/s")
    ms = triton.testing.do_bench(lambda: a @ b, warmup=200, rep=2000, return_mode="median")
    stamp(f"do_bench 2 s median {FLOP / ms / 1e9:.1f} TFLOP/s ({ms:.3f} ms)")
    stream(a, b, 6.0, 0.5)
    stamp(f"burst again {burst(a, b):.1f} TFLOP/s")


if __name__ == "__main__":
    main()
