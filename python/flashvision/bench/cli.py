"""Arguments and the main loop of ``python -m flashvision.bench``."""

import argparse
import contextlib
import math
import os
import secrets
import shlex
import sys

import torch

from . import cases as case_lib
from . import impls as impl_lib
from . import telemetry
from .progress import Progress
from .records import make_meta, speedup, table_header, table_row, write_json
from .runner import Settings, run_case
from .timing import CPU_ROUNDS, timer_name

EPILOG = """examples:
  python -m flashvision.bench --case all --backward --budget 0.1 --json gpu.json --plots plots/
  python -m flashvision.bench --device cpu --quick --json cpu.json
  python -m flashvision.bench --shape 2,8,4096,4096,40 --impl flashvision --impl sdpa-cudnn
  python -m flashvision.bench --resolution-sweep --plots plots/
"""


def _positive_float(text):
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not value > 0 or math.isinf(value):
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
    return value


def _int_list(text):
    try:
        values = [int(part) for part in text.split(",")]
    except ValueError:
        values = []
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"expected positive integers separated by commas, "
                                         f"got {text!r}")
    return values


def _positive_int(text):
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def _shape(text):
    values = _int_list(text) if text else []
    if len(values) != 5:
        raise argparse.ArgumentTypeError(f"expected B,H,Nq,Nk,D (five positive integers), "
                                         f"got {text!r}")
    return case_lib.shape_case(*values)


def build_parser():
    parser = argparse.ArgumentParser(
        prog="python -m flashvision.bench", epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Time flashvision against every PyTorch SDPA backend and a naive "
                    "softmax(q k^T s) v on the cases of BENCH.md, in one run on the same inputs.")
    add = parser.add_argument
    add("--device", choices=("cpu", "cuda"), help="default: cuda if available, else cpu")
    add("--dtype", choices=("bf16", "f16", "f32"), help="default: bf16 on cuda, f32 on cpu")
    add("--case", action="append", metavar="NAME",
        help="a BENCH.md case (repeatable) or 'all' (the default): "
             + ", ".join(case_lib.CASES))
    add("--shape", action="append", type=_shape, metavar="B,H,Nq,Nk,D",
        help="an extra problem (repeatable)")
    add("--impl", action="append", choices=impl_lib.ALL_IMPLS, metavar="NAME",
        help="restrict to these implementations (repeatable): " + ", ".join(impl_lib.ALL_IMPLS))
    add("--kernel", choices=("auto", "sm80", "sm90"),
        help="cuda: flashvision's kernels for both passes, through FLASHVISION_CUDA_KERNEL for "
             "the run (sm90 fails where the Hopper kernels do not apply; default auto)")
    add("--backward", action="store_true", help="also time forward+backward (autograd)")
    add("--cuda-graphs", action="store_true",
        help="cuda: time every implementation's call captured in a CUDA graph and replayed: the "
             "GPU's time without the host's per-call work (Python, dispatch, autograd), which "
             "bounds short calls, fwd+bwd of the small cases above all")
    add("--telemetry", action="store_true",
        help="cuda: sample the GPU's SM clock, board power and clock-event reasons with "
             "nvidia-smi every 50 ms and give each record their means over its timing "
             "(gpu_telemetry in the JSON, a table at the end): whether a rate was measured at "
             "the power limit, and at what clock")
    add("--budget", type=_positive_float, default=0.2, metavar="SECONDS",
        help="time spent repeating each measurement (default 0.2)")
    add("--rounds", type=_positive_int, metavar="R",
        help=f"cpu: time each case's implementations in R interleaved rounds, each round a "
             f"1/R share of the budget per implementation; ratios are medians over the rounds "
             f"(default {CPU_ROUNDS}; 1 times each implementation's repeats in one block)")
    add("--json", metavar="FILE", help="write the results JSON (BENCH.md format)")
    add("--plots", metavar="DIR", help="write PNG plots; also runs the resolution sweep")
    add("--resolution-sweep", action="store_true",
        help="run only the SD self-attention resolution sweep (naive vs flashvision)")
    add("--sweep-sides", type=_int_list, metavar="S,S,...",
        help="latent sides of the sweep (default: %s on cuda, %s on cpu)" % (
            ",".join(map(str, case_lib.SWEEP_SIDES_CUDA)),
            ",".join(map(str, case_lib.SWEEP_SIDES_CPU))))
    add("--quick", action="store_true",
        help=f"a fast subset ({', '.join(case_lib.QUICK_CASES)}) at B={case_lib.QUICK_BATCH}")
    add("--naive-cap-gb", type=_positive_float, metavar="GB",
        help="skip naive and sdpa-math when their score matrix passes this (default 16 on "
             "cuda, 4 on cpu)")
    add("--seed", type=int, help="input seed (default: random; printed and recorded)")
    return parser


def _check(parser, args):
    """Defaults that depend on the device, and the checks argparse cannot do alone."""
    if args.device is None:
        args.device = "cuda" if torch.cuda.is_available() else "cpu"
    if args.device == "cuda" and not torch.cuda.is_available():
        parser.error("--device cuda: torch.cuda.is_available() is False here; use --device cpu")
    args.dtype = args.dtype or ("bf16" if args.device == "cuda" else "f32")
    allowed = impl_lib.impls_for(args.device, opt_in=True)
    for impl in args.impl or ():
        if impl not in allowed:
            parser.error(f"--impl {impl}: does not run with --device {args.device} "
                         f"(expected one of {', '.join(allowed)})")
    for name in args.case or ():
        if name != "all" and name not in case_lib.CASES:
            parser.error(f"--case {name!r}: unknown case; expected 'all' or one of "
                         f"{', '.join(case_lib.CASES)}")
    if args.resolution_sweep and (args.case or args.shape):
        parser.error("--resolution-sweep runs the sweep alone; drop --case and --shape")
    if args.kernel is not None and args.device != "cuda":
        parser.error(f"--kernel {args.kernel}: picks flashvision's CUDA kernels; use --device "
                     "cuda or drop it")
    if args.cuda_graphs and args.device != "cuda":
        parser.error("--cuda-graphs: captures CUDA graphs; use --device cuda or drop it")
    if args.telemetry and args.device != "cuda":
        parser.error("--telemetry: samples a GPU with nvidia-smi; use --device cuda or drop it")
    if args.rounds is not None and args.device != "cpu":
        parser.error(f"--rounds {args.rounds}: only CPU runs are timed in rounds (GPU timings "
                     "are one block per implementation); drop it or use --device cpu")
    if args.rounds is None:
        args.rounds = CPU_ROUNDS if args.device == "cpu" else 1
    if args.naive_cap_gb is None:
        args.naive_cap_gb = 16.0 if args.device == "cuda" else 4.0
    if args.seed is None:
        args.seed = secrets.randbits(31)


def selected_cases(args):
    """The cases to run, in BENCH.md order, with --quick's batch applied to named cases."""
    if args.resolution_sweep:
        return []
    names = args.case or ([] if args.shape else ["all"])
    if args.quick and (not args.case or "all" in args.case):
        names = list(case_lib.QUICK_CASES)
    elif "all" in names:
        names = list(case_lib.CASES)
    chosen = [case_lib.CASES[n] for n in dict.fromkeys(names)]
    if args.quick:
        chosen = [c.with_batch(min(c.B, case_lib.QUICK_BATCH)) for c in chosen]
    return chosen + list(args.shape or ())


def sweep_cases(args):
    if not (args.resolution_sweep or args.plots):
        return []
    sides = args.sweep_sides
    if sides is None and args.device == "cuda":
        sides = case_lib.SWEEP_SIDES_CUDA
    elif sides is None:
        sides = case_lib.SWEEP_SIDES_CPU_QUICK if args.quick else case_lib.SWEEP_SIDES_CPU
    return [case_lib.sweep_case(s) for s in sides]


def _passes(case, backward):
    return ["fwd"] + (["fwd+bwd"] if backward and not case.fwd_only else [])


def _set_threads(device):
    """All cores of this process for PyTorch's CPU kernels (flashvision's OpenMP takes all)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    if device == "cpu":
        torch.set_num_threads(cores)
    return torch.get_num_threads()


def _summary(records):
    ratios = [speedup(records, c, p) for c, p in dict.fromkeys((r["case"], r["pass"])
                                                                for r in records)]
    ratios = [r[0] for r in ratios if r is not None]
    if not ratios:
        return "flashvision vs best peer: n/a"
    geomean = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
    return (f"flashvision vs best peer: geometric mean {geomean:.2f}x over {len(ratios)} "
            f"case/pass pairs (min {min(ratios):.2f}x, max {max(ratios):.2f}x)")


@contextlib.contextmanager
def _cuda_kernel(kernel):
    """FLASHVISION_CUDA_KERNEL set to `kernel` (None: left as it is) while the run lasts."""
    name = "FLASHVISION_CUDA_KERNEL"
    saved = os.environ.get(name)
    if kernel is not None:
        os.environ[name] = kernel
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = saved


def main(argv=None):
    """Runs the benchmark; returns the exit status."""
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    args = parser.parse_args(argv)
    _check(parser, args)
    with _cuda_kernel(args.kernel):
        return _run(args, argv)


def _run(args, argv):
    """The run main() set up: every case and implementation, the table, JSON and plots."""
    impls = [i for i in impl_lib.impls_for(args.device, opt_in=bool(args.impl))
             if not args.impl or i in args.impl]
    main_cases, sweep = selected_cases(args), sweep_cases(args)
    threads = _set_threads(args.device)
    command = f"{os.path.basename(sys.executable)} -m flashvision.bench {shlex.join(argv)}"
    meta = make_meta(args.device, command, args.seed, threads,
                     timer_name(args.device, args.cuda_graphs), args.rounds)
    sampler = None
    if args.telemetry:
        try:
            sampler = telemetry.Sampler(telemetry.device_selectors(torch.cuda.current_device()))
        except telemetry.TelemetryError as exc:
            print(f"--telemetry: {exc}", file=sys.stderr)
            return 2
        meta["telemetry"] = sampler.meta
    settings = Settings(args.device, args.dtype, args.budget, int(args.naive_cap_gb * 2**30),
                        args.rounds, args.cuda_graphs, sampler)
    try:
        return _run_jobs(args, impls, main_cases, sweep, settings, meta)
    finally:
        if sampler is not None:
            sampler.close()


def _run_jobs(args, impls, main_cases, sweep, settings, meta):
    """The cases of the run _run set up, then the summary, the telemetry table, JSON and plots."""
    sweep_impls = ["flashvision", "naive"]
    where = meta["gpu"] or meta["devices"][0]
    rounds = f", {args.rounds} interleaved rounds" if args.rounds > 1 else ""
    print(f"flashvision.bench: {args.device} ({where}, {meta['threads']} threads), {args.dtype}, "
          f"timer {meta['timer']}{rounds}, seed {args.seed}",
          flush=True)

    jobs = [(c, impls, _passes(c, args.backward)) for c in main_cases]
    jobs += [(c, sweep_impls, ["fwd"]) for c in sweep]
    progress = Progress(sum(len(i) * len(p) for _, i, p in jobs))
    progress.write(table_header(args.device))
    records, sweep_records = [], []
    for index, (case, case_impls, passes) in enumerate(jobs):
        new = run_case(case, case_impls, passes, settings, args.seed + index, progress)
        (sweep_records if case.side else records).extend(new)
        for record in new:
            progress.write(table_row(record, new))
        if args.json:  # after every case, so an interrupted run keeps what it measured
            write_json(args.json, meta, records + sweep_records)
    progress.close()
    print(_summary(records))
    if settings.telemetry is not None:
        settings.telemetry.close()
        print(f"GPU telemetry (nvidia-smi every {settings.telemetry.meta['period_ms']} ms during "
              f"each timing; power limit {settings.telemetry.meta['power_limit_w']} W, maximum SM "
              f"clock {settings.telemetry.meta['max_sm_mhz']} MHz):")
        for record in records + sweep_records:
            print(telemetry.telemetry_row(record))
        if args.json:
            write_json(args.json, meta, records + sweep_records)
    if args.json:
        print(f"wrote {args.json}")
    if args.plots:
        from .plots import write_plots

        paths = write_plots(args.plots, records, sweep_records, impls, args.device)
        print(f"wrote {', '.join(paths)}" if paths else "--plots: matplotlib is not installed")
    return 0
