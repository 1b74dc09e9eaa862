"""Scaling of flashvision.distributed (ring or Ulysses) across the ranks of one torchrun job.

  torchrun --nproc-per-node 8 bench/ring_scaling.py --mode weak --tokens 65536 --out weak-w8.json
  torchrun --nproc-per-node 4 bench/ring_scaling.py --mode strong --tokens 262144 --out s-w4.json
  torchrun --nproc-per-node 8 bench/ring_scaling.py --mode max --tokens 65536 --out max-w8.json

--tokens is per rank for weak and max, the total for strong. One run measures one world size;
run it once per world size (1, 2, 4, 8) for a scaling curve. Each record carries the efficiency
against a single-device flashvision call timed in the same run on rank 0:
  efficiency = (FLOPs of the whole attention / W / distributed time) / (baseline TFLOP/s),
the baseline being flashvision on one rank's block, N_local x N_local (weak, max), or on the whole
sequence (strong), with the same causal flag. For non-causal ring attention at N_local well above
the crossover of bench/distributed_model.py it should approach 1; causal ring attention with the
contiguous split is bounded by W / (2W - 1) (load imbalance).

max doubles N_local until a call fails (out of memory) or the next size is predicted (4x the last
time) to exceed --max-seconds. Results: the JSON of shared/BENCH.md, with the extra record fields
world, n_local, tflops_per_rank, baseline_ms and efficiency.
"""

import argparse
import os
import statistics
import sys
import time

import flashvision.distributed as fvd
import torch
import torch.distributed as dist
from flashvision.bench import records as bench_records
from flashvision.torch import _ops

DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}
IMPLS = {"ring": fvd.ring_attention, "ulysses": fvd.ulysses_attention}


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--impl", choices=sorted(IMPLS), default="ring")
    parser.add_argument("--mode", choices=("weak", "strong", "max"), default="weak")
    parser.add_argument("--tokens", type=int, default=65536)
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--heads", type=int, default=24)
    parser.add_argument("--heads-kv", type=int, default=None)
    parser.add_argument("--dim", type=int, default=128)
    parser.add_argument("--dtype", choices=sorted(DTYPES), default="bf16")
    parser.add_argument("--causal", action="store_true")
    parser.add_argument("--backward", action="store_true", help="also time fwd+bwd")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--max-seconds", type=float, default=60.0)
    parser.add_argument("--out", default=None, help="results JSON (written by rank 0)")
    return parser.parse_args(argv)


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def median_ms(call, device, repeats, group=None):
    """Median over repeats (after one warm-up) of the slowest rank's time for call()."""
    times = []
    for _ in range(repeats + 1):
        dist.barrier(group)
        sync(device)
        start = time.perf_counter()
        call()
        sync(device)
        elapsed = torch.tensor([time.perf_counter() - start], dtype=torch.float64, device=device)
        dist.all_reduce(elapsed, op=dist.ReduceOp.MAX, group=group)
        times.append(1e3 * elapsed.item())
    return statistics.median(times[1:])


def make_call(fn, shapes, args, device, pass_):
    """A closure running one pass of fn on fresh inputs of shapes (q, kv) allocated once."""
    dtype = DTYPES[args.dtype]
    q = torch.randn(shapes[0], dtype=dtype, device=device, requires_grad=pass_ != "fwd")
    k, v = (torch.randn(shapes[1], dtype=dtype, device=device, requires_grad=pass_ != "fwd")
            for _ in range(2))
    dout = torch.randn_like(q)

    def call():
        if pass_ == "fwd":
            with torch.no_grad():
                fn(q, k, v)
        else:
            fn(q, k, v).backward(dout)
    return call


def flops(args, n, pass_):
    """BENCH.md FLOPs of attention over n tokens: 4 B H N^2 D, x3.5 with backward, /2 causal."""
    total = 4 * args.batch * args.heads * n * n * args.dim * (3.5 if pass_ == "fwd+bwd" else 1)
    return total / 2 if args.causal else total


def baseline_ms(args, n, device, pass_):
    """Single-device flashvision on n tokens, timed on rank 0 (the others wait)."""
    heads_kv = args.heads_kv or args.heads
    shapes = ((args.batch, n, args.heads, args.dim), (args.batch, n, heads_kv, args.dim))
    fn = lambda q, k, v: _ops.fwd(q, k, v, None, None, 0, 0, 0.0, args.causal)[0]  # noqa: E731
    result = torch.zeros(1, dtype=torch.float64, device=device)
    solo = dist.new_group([0]) if dist.get_world_size() > 1 else None  # collective: every rank
    if dist.get_rank() == 0:
        result[0] = median_ms(make_call(fn, shapes, args, device, pass_), device, args.repeats,
                              solo)
    dist.broadcast(result, 0)
    return result.item()


def measure(args, n_local, device, pass_):
    """One record for this world size at n_local tokens per rank."""
    world = dist.get_world_size()
    heads_kv = args.heads_kv or args.heads
    shapes = ((args.batch, n_local, args.heads, args.dim),
              (args.batch, n_local, heads_kv, args.dim))
    fn = lambda q, k, v: IMPLS[args.impl](q, k, v, causal=args.causal)  # noqa: E731
    n = world * n_local
    record = {"case": f"{args.impl}-{args.mode}-w{world}", "B": args.batch, "H": args.heads,
              "Hkv": heads_kv, "Nq": n, "Nk": n, "D": args.dim, "dtype": args.dtype,
              "causal": args.causal, "device": device.type, "impl": f"flashvision-{args.impl}",
              "pass": pass_, "world": world, "n_local": n_local}
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
    ms = median_ms(make_call(fn, shapes, args, device, pass_), device, args.repeats)
    base_n = n if args.mode == "strong" else n_local
    base = baseline_ms(args, base_n, device, pass_)
    per_rank = flops(args, n, pass_) / world / (ms * 1e-3) / 1e12
    record.update(ms=ms, tflops=per_rank * world, tflops_per_rank=per_rank, baseline_ms=base,
                  efficiency=per_rank / (flops(args, base_n, pass_) / (base * 1e-3) / 1e12))
    if device.type == "cuda":
        record["peak_bytes"] = torch.cuda.max_memory_allocated(device)
    return record


def everyone_ok(ok, device):
    flag = torch.tensor([0 if ok else 1], device=device)
    dist.all_reduce(flag)
    return flag.item() == 0


def run(args, device):
    passes = ["fwd", "fwd+bwd"] if args.backward else ["fwd"]
    world = dist.get_world_size()
    if args.mode == "strong":
        if args.tokens % world:
            raise ValueError(f"--tokens {args.tokens} does not divide by the world size {world}")
        return [measure(args, args.tokens // world, device, p) for p in passes]
    if args.mode == "weak":
        return [measure(args, args.tokens, device, p) for p in passes]
    records, n_local = [], args.tokens
    while True:
        try:
            batch, error = [measure(args, n_local, device, p) for p in passes], None
        except torch.cuda.OutOfMemoryError as exc:
            batch, error = [], f"out of memory: {str(exc).splitlines()[0]}"
        if not everyone_ok(error is None, device):
            records.append({"case": f"{args.impl}-max-w{world}", "n_local": n_local,
                            "Nq": world * n_local, "pass": passes[-1],
                            "error": error or "another rank failed"})
            return records
        records += batch
        if 4 * max(r["ms"] for r in batch) / 1e3 > args.max_seconds:
            return records
        n_local *= 2


def main(argv=None):
    args = parse_args(argv)
    backend = "nccl" if torch.cuda.is_available() else "gloo"
    dist.init_process_group(backend)
    if backend == "nccl":
        device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")))
        torch.cuda.set_device(device)
    else:
        device = torch.device("cpu")
    try:
        records = run(args, device)
        if dist.get_rank() == 0:
            for r in records:
                shown = {k: (round(v, 3) if isinstance(v, float) else v) for k, v in r.items()}
                print(shown, flush=True)
            if args.out:
                command = "torchrun ... " + " ".join([sys.argv[0]] + (argv or sys.argv[1:]))
                meta = bench_records.make_meta(device.type, command, None, torch.get_num_threads(),
                                               "perf_counter, slowest rank, median")
                meta["world"] = dist.get_world_size()
                bench_records.write_json(args.out, meta, records)
    finally:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
