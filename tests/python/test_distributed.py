"""flashvision.distributed against single-process attention: ring and Ulysses context
parallelism with 1, 2 and 4 CPU processes over gloo (and 2 GPUs over NCCL where present), forward
and gradients, causal and GQA, and the argument errors.

Each world size is one launch of its processes, which run every case and save their slices of
out, dq, dk and dv; the tests here concatenate the slices and compare them with flashvision on the
whole sequence and with a float64 torch reference. Inputs are fresh per run (the module's seed is
printed on failure; FLASHVISION_TEST_SEED=<seed> reproduces it).

The processes are spawned (fresh interpreters, which re-import torch: seconds per launch). Forking
pytest is unsafe once the library's OpenMP pool has run (libgomp does not survive fork), and a
forkserver that preloads this module failed on the GPU machine: torch's autograd engine, once it
has run in the server, starts per-device threads when CUDA is present, and the forked ranks then
refuse to run backward ("autograd's threading in combination with fork-based multiprocessing").
"""

import contextlib
import json
import os
import secrets
import sys
import traceback

import pytest

torch = pytest.importorskip("torch")
dist = pytest.importorskip("torch.distributed")
if not dist.is_available():
    pytest.skip("torch.distributed is not available in this torch build", allow_module_level=True)

import flashvision  # noqa: E402
import flashvision.distributed as fvd  # noqa: E402
import fv_torch_reference as tref  # noqa: E402
import torch.multiprocessing as tmp_mp  # noqa: E402
from flashvision.torch import _ops  # noqa: E402

B, D = 1, 16
# (method, causal, H, Hkv, N_local, custom scale): GQA cases have two query heads per K/V head;
# H and Hkv divide by 4 so Ulysses runs at every world size; N_local is not a multiple of 16 in
# some cases so the kernels' partial tiles are part of every ring step.
CASES = [(method, causal, heads, heads_kv, n_local, scale)
         for method in ("ring", "ulysses")
         for causal in (False, True)
         for heads, heads_kv, n_local, scale in ((4, 4, 16, None), (8, 4, 23, 0.3))]
WORLDS = (1, 2, 4)
METHODS = {"ring": fvd.ring_attention, "ulysses": fvd.ulysses_attention}


def _case_id(case):
    method, causal, heads, heads_kv, n_local, scale = case
    return (f"{method}-{'causal' if causal else 'full'}-h{heads}kv{heads_kv}-n{n_local}"
            f"{'-scaled' if scale else ''}")


def _full_inputs(seed, index, world, case, dtype=torch.float32, device="cpu"):
    """q, k, v, dout over the whole sequence for case, the same on every rank and in pytest."""
    _, _, heads, heads_kv, n_local, _ = case
    gen = torch.Generator().manual_seed(seed * 1000 + index)
    n = world * n_local
    shapes = ((B, n, heads, D), (B, n, heads_kv, D), (B, n, heads_kv, D), (B, n, heads, D))
    return [tref.randn(gen, shape, dtype, device) for shape in shapes]


def _poison_outputs():
    """Every op output starts as NaN in the worker processes too (conftest's fixture does it in
    pytest's process only)."""
    _ops._empty_like = lambda x, dtype=None: torch.full_like(x, float("nan"), dtype=dtype)
    _ops._empty_lse = lambda q, varlen, heads_first=False: torch.full(
        _ops._lse_shape(q, varlen, heads_first), float("nan"), device=q.device)


def _init(rank, world, store_path, backend):
    from datetime import timedelta

    torch.set_num_threads(1)
    store = dist.FileStore(store_path, world)
    dist.init_process_group(backend, store=store, rank=rank, world_size=world,
                            timeout=timedelta(seconds=60))


def _expect_value_error(call):
    """The message of the ValueError call raises, or a description of what happened instead."""
    try:
        call()
    except ValueError as exc:
        return {"type": "ValueError", "message": str(exc)}
    except Exception as exc:  # noqa: BLE001 (reported to pytest, which fails the test)
        return {"type": type(exc).__name__, "message": str(exc)}
    return {"type": None, "message": "no exception"}


def _error_cases(rank, world):
    """Argument errors, each raised on every rank (a rank that went on would hang the group)."""
    x = lambda n, h: torch.randn(B, n, h, D)  # noqa: E731
    n_q = 16 if rank == 0 else 17
    heads_bad = world + 1 if world > 1 else None
    cases = {
        "ring-unequal-q": lambda: fvd.ring_attention(x(n_q, 4), x(n_q, 4), x(n_q, 4)),
        "ulysses-unequal-q": lambda: fvd.ulysses_attention(x(n_q, 4), x(n_q, 4), x(n_q, 4)),
        "ring-k-length": lambda: fvd.ring_attention(x(16, 4), x(15, 4), x(15, 4)),
    }
    if heads_bad:
        cases["ulysses-q-heads"] = lambda: fvd.ulysses_attention(
            x(16, heads_bad), x(16, heads_bad), x(16, heads_bad))
        cases["ulysses-k-heads"] = lambda: fvd.ulysses_attention(
            x(16, 2 * world), x(16, 1), x(16, 1))
    return {name: _expect_value_error(call) for name, call in cases.items()}


def _gloo_worker(rank, world, store_path, out_dir, seed):
    _init(rank, world, store_path, "gloo")
    _poison_outputs()
    try:
        for index, case in enumerate(CASES):
            method, causal, _, _, n_local, scale = case
            q, k, v, dout = _full_inputs(seed, index, world, case)
            rows = slice(rank * n_local, (rank + 1) * n_local)
            q, k, v = (x[:, rows].clone().requires_grad_() for x in (q, k, v))
            out = METHODS[method](q, k, v, scale=scale, causal=causal)
            out.backward(dout[:, rows])
            result = {"out": out.detach(), "dq": q.grad, "dk": k.grad, "dv": v.grad}
            torch.save(result, os.path.join(out_dir, f"case{index}-rank{rank}.pt"))
        errors = _error_cases(rank, world)
        with open(os.path.join(out_dir, f"errors-rank{rank}.json"), "w") as f:
            json.dump(errors, f)
        dist.barrier()
    except BaseException:
        dist.destroy_process_group()
        raise
    # Every rank is past its last collective: leave without tearing gloo down. Teardowns that ran
    # while a peer's did aborted a rank in CI ("terminate called without an active exception",
    # SIGABRT), with and without a barrier before destroy_process_group.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


@contextlib.contextmanager
def _rank_environment():
    """The environment the ranks start with: this directory on PYTHONPATH, so that they can import
    this module (the worker's home); one OpenMP thread per rank, because the ranks share the
    machine's cores."""
    saved = {name: os.environ.get(name) for name in ("PYTHONPATH", "OMP_NUM_THREADS")}
    here = os.path.dirname(os.path.abspath(__file__))
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (here, saved["PYTHONPATH"]) if p)
    os.environ["OMP_NUM_THREADS"] = "1"
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _launch(worker, world, args):
    """Runs worker(rank, world, *args) in world processes; raises with a rank's traceback."""
    try:
        with _rank_environment():
            tmp_mp.start_processes(worker, args=(world, *args), nprocs=world,
                                   start_method="spawn")
    except tmp_mp.ProcessRaisedException as exc:
        raise AssertionError(f"a rank failed:\n{exc}") from None


@pytest.fixture(scope="module")
def module_seed():
    fixed = os.environ.get("FLASHVISION_TEST_SEED")
    return int(fixed) if fixed else secrets.randbits(20)


@pytest.fixture(scope="module")
def runs(tmp_path_factory, module_seed):
    """world -> the directory its gloo run wrote, launched on first use."""
    done = {}

    def get(world):
        if world not in done:
            out_dir = tmp_path_factory.mktemp(f"world{world}")
            _launch(_gloo_worker, world, (str(out_dir / "store"), str(out_dir), module_seed))
            done[world] = out_dir
        return done[world]

    return get


@pytest.fixture
def seed(request, module_seed):
    request.node.flashvision_seed = module_seed
    return module_seed


def _gathered(out_dir, index, world):
    """{out, dq, dk, dv} over the whole sequence from the ranks' slices."""
    parts = [torch.load(os.path.join(out_dir, f"case{index}-rank{r}.pt")) for r in range(world)]
    return {key: torch.cat([p[key] for p in parts], dim=1) for key in parts[0]}


def _single_process(q, k, v, dout, scale, causal):
    """out, dq, dk, dv of flashvision on the whole sequence, and of the float64 reference."""
    leaves = [x.clone().requires_grad_() for x in (q, k, v)]
    out, _ = _ops.fwd(*leaves, None, None, 0, 0, 0.0 if scale is None else scale, causal)
    out.backward(dout)
    fv = {"out": out.detach(), "dq": leaves[0].grad, "dk": leaves[1].grad, "dv": leaves[2].grad}
    leaves64 = [tref.float64_leaf(x.requires_grad_()) for x in (q, k, v)]
    out64 = tref.attention_bshd(*leaves64, scale=scale, causal=causal)
    out64.backward(dout.to(torch.float64))
    ref = {"out": out64.detach(), "dq": leaves64[0].grad, "dk": leaves64[1].grad,
           "dv": leaves64[2].grad}
    return fv, ref


@pytest.mark.parametrize("world", WORLDS)
@pytest.mark.parametrize("index", range(len(CASES)), ids=[_case_id(c) for c in CASES])
def test_matches_single_process(runs, seed, world, index):
    case = CASES[index]
    _, causal, _, _, _, scale = case
    got = _gathered(runs(world), index, world)
    q, k, v, dout = _full_inputs(seed, index, world, case)
    fv, ref = _single_process(q, k, v, dout, scale, causal)
    for key in ("out", "dq", "dk", "dv"):
        what = f"{_case_id(case)} world {world} {key} (seed {seed})"
        assert not torch.isnan(got[key]).any(), f"{what}: NaN"
        tref.assert_close(got[key], fv[key], atol=1e-5, rtol=1e-5, what=f"{what} vs flashvision")
        tref.assert_close(got[key], ref[key], atol=5e-5, rtol=1e-4, what=f"{what} vs float64")


ERROR_ARGUMENT = {"ring-unequal-q": "q", "ulysses-unequal-q": "q", "ring-k-length": "k",
                  "ulysses-q-heads": "q", "ulysses-k-heads": "k"}


@pytest.mark.parametrize("world", (2, 4))
@pytest.mark.parametrize("name", sorted(ERROR_ARGUMENT))
def test_errors_name_the_argument(runs, seed, world, name):
    out_dir = runs(world)
    for rank in range(world):
        with open(os.path.join(out_dir, f"errors-rank{rank}.json")) as f:
            error = json.load(f)[name]
        assert error["type"] == "ValueError", f"{name} rank {rank}: {error}"
        argument = ERROR_ARGUMENT[name]
        assert error["message"].startswith(f"{argument} "), (
            f"{name} rank {rank}: the message should name {argument}: {error['message']}")


def test_needs_a_process_group():
    if dist.is_initialized():
        pytest.skip("a process group is initialized in this process")
    x = torch.randn(B, 16, 4, D)
    with pytest.raises(RuntimeError, match="init_process_group"):
        fvd.ring_attention(x, x, x)


# --- NCCL on two GPUs -------------------------------------------------------------------------

def _nccl_worker(rank, world, store_path, out_dir, seed):
    torch.cuda.set_device(rank)
    _init(rank, world, store_path, "nccl")
    report = {}
    try:
        for index, case in enumerate(CASES):
            method, causal, _, _, n_local, scale = case
            full = _full_inputs(seed, index, world, case, torch.bfloat16, f"cuda:{rank}")
            rows = slice(rank * n_local, (rank + 1) * n_local)
            q, k, v = (x[:, rows].clone().requires_grad_() for x in full[:3])
            out = METHODS[method](q, k, v, scale=scale, causal=causal)
            out.backward(full[3][:, rows])
            # References on this GPU over the whole sequence, compared on this rank's slice.
            fv, ref = _single_process(*full, scale, causal)
            got = {"out": out, "dq": q.grad, "dk": k.grad, "dv": v.grad}
            for key, value in got.items():
                ours = tref.max_error(value, ref[key][:, rows])
                single = tref.max_error(fv[key][:, rows], ref[key][:, rows])
                report[f"{_case_id(case)} {key}"] = [float(ours), float(single)]
    except Exception:  # noqa: BLE001 (any failure goes to pytest through the report)
        report["exception"] = traceback.format_exc()
    finally:
        with open(os.path.join(out_dir, f"nccl-rank{rank}.json"), "w") as f:
            json.dump(report, f)
        dist.destroy_process_group()


@pytest.mark.cuda
@pytest.mark.skipif("cuda-sm80" not in flashvision.compiled_backends(),
                    reason="flashvision was built without CUDA")
@pytest.mark.skipif(not dist.is_nccl_available(), reason="torch has no NCCL")
@pytest.mark.parametrize("world", [1, 2])
def test_nccl_gpus(tmp_path, seed, world):
    """bf16 on 1 and 2 GPUs (NCCL takes one rank per GPU): the ranks' error against float64 is
    within twice the single-GPU flashvision error plus the bf16 floor, forward and backward.
    World size 1 runs the NCCL group and CUDA autograd paths where only one GPU is lent."""
    if not torch.cuda.is_available() or torch.cuda.device_count() < world:
        pytest.skip(f"needs {world} CUDA GPU(s)")
    _launch(_nccl_worker, world, (str(tmp_path / "store"), str(tmp_path), seed))
    for rank in range(world):
        with open(tmp_path / f"nccl-rank{rank}.json") as f:
            report = json.load(f)
        assert "exception" not in report, report.get("exception")
        for what, (ours, single) in report.items():
            bound = 2 * single + tref.ERROR_FLOOR[torch.bfloat16]
            assert ours <= bound, f"rank {rank} {what}: error {ours:.3g} > {bound:.3g} (seed {seed})"
