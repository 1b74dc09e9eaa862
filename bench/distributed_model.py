"""Communication against compute for context-parallel attention (no GPU needed).

Ring attention, per step on every rank: the forward sends its K/V block (2 * B * N_local * Hkv * D
elements) while it computes one block (4 * B * N_local^2 * H * D FLOPs); the backward sends the
K/V block and the float32 dK/dV block of the previous step while it computes 2.5 times that. The
transfer hides behind the compute when it takes less time; the crossover N_local is where the two
are equal. Ulysses, per layer: four all-to-alls (q, k, v, out), each moving (W - 1) / W of a
[B, N_local, H, D] tensor, against full-sequence attention on H / W heads.

Usage: python bench/distributed_model.py [--fwd-tflops 305] [--link-gbs 450] ...
Defaults: measured sm80 flashvision throughput on an H200 (bench/results/2026-11-29-h200-cuda.md,
sweep-d128-n16384, bf16: fwd 305.4 TFLOP/s, fwd+bwd 237.4 TFLOP/s) and an ASSUMED NVLink 4 link of
450 GB/s per direction per GPU (H200 SXM: 900 GB/s bidirectional), no latency or protocol
overhead.
"""

import argparse

FWD_FLOPS_PER_PAIR = 4  # two GEMMs: forward FLOPs = 4 * B * H * Nq * Nk * D (shared/BENCH.md)
BWD_FACTOR = 2.5  # backward = 2.5 x forward (five GEMMs)
FLOAT32_BYTES = 4


def backward_tflops(fwd_tflops, fwd_bwd_tflops):
    """Throughput of the backward alone from the forward and fwd+bwd figures (3.5 x fwd FLOPs)."""
    seconds_per_fwd_flop = 1 / fwd_tflops
    seconds_fwd_bwd = (1 + BWD_FACTOR) / fwd_bwd_tflops
    return BWD_FACTOR / (seconds_fwd_bwd - seconds_per_fwd_flop)


def ring_step(n_local, args, bwd_tflops):
    """(compute ms, transfer ms) of one ring step, forward and backward."""
    pairs = args.batch * n_local * n_local * args.heads * args.dim
    kv_elements = 2 * args.batch * n_local * args.heads_kv * args.dim
    link = args.link_gbs * 1e9
    fwd_compute = FWD_FLOPS_PER_PAIR * pairs / (args.fwd_tflops * 1e12)
    fwd_comm = kv_elements * args.bytes / link
    bwd_compute = BWD_FACTOR * FWD_FLOPS_PER_PAIR * pairs / (bwd_tflops * 1e12)
    bwd_comm = kv_elements * (args.bytes + FLOAT32_BYTES) / link
    return [1e3 * t for t in (fwd_compute, fwd_comm, bwd_compute, bwd_comm)]


def crossover(args, bytes_per_element, tflops, flop_factor):
    """N_local at which one step's transfer time equals its compute time."""
    # compute = flop_factor * 4 * B * N^2 * H * D / F; transfer = 2 * B * N * Hkv * D * bytes / L
    return (2 * args.heads_kv * bytes_per_element * tflops * 1e12
            / (flop_factor * FWD_FLOPS_PER_PAIR * args.heads * args.link_gbs * 1e9))


def ulysses_layer(n_local, world, args):
    """(compute ms, all-to-all ms) of one Ulysses forward on each rank."""
    tensor_bytes = args.batch * n_local * args.heads * args.dim * args.bytes
    moved = 4 * tensor_bytes * (world - 1) / world  # q, k, v in and out back
    flops = FWD_FLOPS_PER_PAIR * args.batch * world * n_local * n_local * args.heads * args.dim
    return 1e3 * flops / (args.fwd_tflops * 1e12), 1e3 * moved / (args.link_gbs * 1e9)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fwd-tflops", type=float, default=305.4)
    parser.add_argument("--fwd-bwd-tflops", type=float, default=237.4)
    parser.add_argument("--link-gbs", type=float, default=450.0)
    parser.add_argument("--heads", type=int, default=24)
    parser.add_argument("--heads-kv", type=int, default=24)
    parser.add_argument("--dim", type=int, default=128)
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--bytes", type=int, default=2, help="bytes per element (bf16: 2)")
    parser.add_argument("--worlds", type=int, nargs="+", default=[2, 4, 8])
    args = parser.parse_args()
    bwd_tflops = backward_tflops(args.fwd_tflops, args.fwd_bwd_tflops)

    print("Ring attention, communication vs compute per ring step (model, not a measurement)")
    print(f"inputs: B={args.batch} H={args.heads} Hkv={args.heads_kv} D={args.dim}, "
          f"{args.bytes}-byte elements (bf16), dK/dV travel in float32")
    print(f"  attention throughput (measured, H200 sm80 kernels, d128 n16384): fwd "
          f"{args.fwd_tflops:.1f} TFLOP/s, fwd+bwd {args.fwd_bwd_tflops:.1f} -> bwd alone "
          f"{bwd_tflops:.1f} TFLOP/s")
    print(f"  link: {args.link_gbs:.0f} GB/s per direction per GPU (ASSUMED: NVLink 4 on H200), "
          "no latency or protocol overhead")
    fwd_cross = crossover(args, args.bytes, args.fwd_tflops, 1)
    bwd_cross = crossover(args, args.bytes + FLOAT32_BYTES, bwd_tflops, BWD_FACTOR)
    print(f"crossover N_local (transfer = compute): forward {fwd_cross:.0f} tokens, backward "
          f"{bwd_cross:.0f} tokens; above it the transfer hides behind the block's compute")
    print()
    print(f"{'N_local':>8} | {'fwd compute ms':>14} | {'fwd comm ms':>11} | {'ratio':>6} | "
          f"{'bwd compute ms':>14} | {'bwd comm ms':>11} | {'ratio':>6}")
    for n_local in (1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072):
        fc, fm, bc, bm = ring_step(n_local, args, bwd_tflops)
        print(f"{n_local:>8} | {fc:>14.3f} | {fm:>11.3f} | {fc / fm:>6.1f} | {bc:>14.3f} | "
              f"{bm:>11.3f} | {bc / bm:>6.1f}")
    print()
    print("64k tokens per GPU (the issue's weak-scaling target), one attention call:")
    fc, fm, bc, bm = ring_step(65536, args, bwd_tflops)
    for world in args.worlds:
        # Causal, contiguous split: rank W-1 computes W-1 full blocks and a half (diagonal) one,
        # the average rank W/2 blocks.
        causal = world / (2 * world - 1)
        print(f"  W={world}: total {65536 * world} tokens; ring forward {world} steps x "
              f"{fc:.1f} ms compute (transfer {fm:.2f} ms/step hidden), backward {world} x "
              f"{bc:.1f} ms (only the last dK/dV hop, {bm:.1f} ms, is exposed); efficiency "
              f"bound non-causal ~1.00, causal with the contiguous split {causal:.2f} = "
              "W/(2W-1) from the load imbalance")
    print()
    print("Ulysses forward at 64k tokens per GPU (all-to-alls not overlapped with compute):")
    for world in args.worlds:
        compute, comm = ulysses_layer(65536, world, args)
        print(f"  W={world}: compute {compute:.1f} ms, all-to-all {comm:.2f} ms "
              f"(efficiency bound {compute / (compute + comm):.3f})")


if __name__ == "__main__":
    main()
