"""flashvision's torch path captured in CUDA graphs (skipped without a GPU or a CUDA build):
replays on new inputs written into the captured tensors match eager calls, forward alone and
forward+backward, on shapes that take the text-width, split-forward and split-backward paths;
and the bench's --cuda-graphs timing."""

import json

import pytest

torch = pytest.importorskip("torch")

import flashvision.torch as fvt  # noqa: E402
import fv_torch_reference as tref  # noqa: E402
from flashvision.bench import cli, timing  # noqa: E402
from fv_torch_support import cuda_module_marks  # noqa: E402

pytestmark = cuda_module_marks()

# (B, H, Nq, Nk, D): cross-attention to 77 text tokens; few query tiles over many keys (the
# forward splits the keys); a small grid at D = 160 (the backward splits the queries).
SHAPES = [(2, 4, 1000, 77, 64), (1, 4, 300, 2048, 64), (2, 2, 256, 256, 160)]


@pytest.fixture
def gen(seed):
    return torch.Generator().manual_seed(seed)


def _step(q, k, v, dout, backward):
    out = fvt.scaled_dot_product_attention(q, k, v)
    if not backward:
        return (out,)
    return (out, *torch.autograd.grad(out, (q, k, v), dout))


@pytest.mark.parametrize("backward", [False, True], ids=["fwd", "fwd+bwd"])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_a_replay_on_new_inputs_matches_an_eager_call(gen, shape, backward):
    b, h, nq, nk, d = shape
    make = lambda n: tref.randn(gen, (b, h, n, d), torch.bfloat16, "cuda")  # noqa: E731
    q, k, v = (make(n).requires_grad_(backward) for n in (nq, nk, nk))
    dout = make(nq)
    with torch.set_grad_enabled(backward):
        replay, static = timing.graph_capture(lambda: _step(q, k, v, dout, backward))
    with torch.no_grad():
        for x, n in ((q, nq), (k, nk), (v, nk), (dout, nq)):
            x.copy_(make(n))
        for x in static:
            x.fill_(float("nan"))  # what the replay does not write stays NaN and fails
    replay()
    torch.cuda.synchronize()
    with torch.set_grad_enabled(backward):
        expected = _step(q, k, v, dout, backward)
    # dQ sums with atomics, in an order that may differ by a rounding between two calls.
    for name, got, want in zip(("out", "dq", "dk", "dv"), static, expected):
        tref.assert_close(got, want, 1e-2, 1e-2, f"{name} of the replay")


def test_a_graph_replay_launches_the_captured_work_again():
    x = torch.zeros(1, device="cuda")
    replay, captured = timing.graph_capture(lambda: x.add_(1))
    assert captured is x
    torch.cuda.synchronize()
    assert x.item() == timing.WARMUP_CALLS  # the capture itself runs nothing
    replay()
    replay()
    torch.cuda.synchronize()
    assert x.item() == timing.WARMUP_CALLS + 2


def test_a_cuda_graphs_run_times_every_impl_and_pass(tmp_path):
    path = tmp_path / "graphs.json"
    assert cli.main(["--device", "cuda", "--cuda-graphs", "--backward", "--shape",
                     "1,2,300,77,64", "--impl", "flashvision", "--impl", "sdpa-flash", "--impl",
                     "naive", "--budget", "0.01", "--json", str(path)]) == 0
    results = json.loads(path.read_text())
    assert results["meta"]["timer"].endswith("of CUDA graph replays")
    assert len(results["records"]) == 6
    for record in results["records"]:
        assert "error" not in record, record
        assert record["ms"] > 0 and record["max_err"] < 5e-2, record
