"""flashvision.selected_kernel: the kernel a call would run, as the library's dispatch picks it
(the name python -m flashvision.bench records), on the CPU."""

import numpy as np
import pytest

import flashvision


def _qkv(rng, b=2, nq=5, nk=7, h=4, hkv=2, d=16, dtype=np.float32):
    def draw(n, heads):
        return rng.standard_normal((b, n, heads, d)).astype(dtype)

    return draw(nq, h), draw(nk, hkv), draw(nk, hkv)


def test_numpy_inputs_name_the_cpu_kernel(rng):
    q, k, v = _qkv(rng)
    name = flashvision.selected_kernel(q, k, v)
    assert name == flashvision.kernel_name("cpu")
    assert name.startswith("cpu-")


def test_layout_causal_and_varlen_select_the_same_cpu_kernel(rng):
    q, k, v = _qkv(rng)
    bhsd = [x.swapaxes(1, 2) for x in (q, k, v)]
    expected = flashvision.kernel_name("cpu")
    assert flashvision.selected_kernel(*bhsd, layout="bhsd", causal=True) == expected
    packed = [x.reshape(-1, *x.shape[2:]) for x in (q, k, v)]
    cu_q = np.array([0, 5, 10], dtype=np.int32)
    cu_k = np.array([0, 7, 14], dtype=np.int32)
    assert flashvision.selected_kernel(*packed, cu_seqlens_q=cu_q, cu_seqlens_k=cu_k) == expected


def test_inputs_are_not_touched(rng):
    q, k, v = _qkv(rng)
    before = [x.copy() for x in (q, k, v)]
    flashvision.selected_kernel(q, k, v)
    for x, y in zip((q, k, v), before):
        np.testing.assert_array_equal(x, y)


def test_torch_tensors_that_require_grad(seed):
    torch = pytest.importorskip("torch")
    gen = torch.Generator().manual_seed(seed)
    q, k, v = (torch.randn(1, 3, 9, 32, generator=gen, dtype=torch.float16).requires_grad_()
               for _ in range(3))
    assert (flashvision.selected_kernel(q, k, v, layout="bhsd")
            == flashvision.kernel_name("cpu"))


def test_bf16_names_the_amx_forward_where_it_runs(seed, monkeypatch):
    """The CPU forward of bf16 inputs may be the AMX one (FLASHVISION_CPU_AMX): the name says."""
    torch = pytest.importorskip("torch")
    gen = torch.Generator().manual_seed(seed)
    q, k, v = (torch.randn(1, 3, 9, 32, generator=gen, dtype=torch.bfloat16) for _ in range(3))
    monkeypatch.setenv("FLASHVISION_CPU_AMX", "0")
    assert flashvision.selected_kernel(q, k, v, layout="bhsd") == flashvision.kernel_name("cpu")
    monkeypatch.setenv("FLASHVISION_CPU_AMX", "1")
    assert flashvision.selected_kernel(q, k, v, layout="bhsd") in ("cpu-amx", "cpu-amx-emulated")
    # The backward has no AMX variant.
    assert (flashvision.selected_kernel(q, k, v, layout="bhsd", backward=True)
            == flashvision.kernel_name("cpu"))


def test_a_call_the_library_rejects_raises_its_error(rng):
    q, k, v = _qkv(rng)
    with pytest.raises(flashvision.Error, match="k"):
        flashvision.selected_kernel(q, k[..., :8], v)
    with pytest.raises(flashvision.Error, match="float64"):
        flashvision.selected_kernel(q.astype(np.float64), k, v)


def test_argument_types_are_checked(rng):
    q, k, v = _qkv(rng)
    with pytest.raises(TypeError, match="k must be"):
        flashvision.selected_kernel(q, k.tolist(), v)
    with pytest.raises(TypeError, match="causal"):
        flashvision.selected_kernel(q, k, v, causal=1)
    with pytest.raises(ValueError, match="layout"):
        flashvision.selected_kernel(q, k, v, layout="nope")
    with pytest.raises(TypeError, match="backward"):
        flashvision.selected_kernel(q, k, v, backward="yes")
    with pytest.raises(TypeError, match="deterministic"):
        flashvision.selected_kernel(q, k, v, backward=True, deterministic=1)


def test_backward_names_the_kernel_attention_backward_runs(rng):
    q, k, v = _qkv(rng)
    expected = flashvision.kernel_name("cpu")
    assert flashvision.selected_kernel(q, k, v, backward=True) == expected
    assert flashvision.selected_kernel(q, k, v, backward=True, deterministic=True) == expected
    packed = [x.reshape(-1, *x.shape[2:]) for x in (q, k, v)]
    cu_q = np.array([0, 5, 10], dtype=np.int32)
    cu_k = np.array([0, 7, 14], dtype=np.int32)
    assert flashvision.selected_kernel(*packed, cu_seqlens_q=cu_q, cu_seqlens_k=cu_k,
                                       backward=True) == expected


def test_backward_selection_rejects_what_the_backward_rejects(rng):
    q, k, v = _qkv(rng)
    with pytest.raises(flashvision.Error, match="k"):
        flashvision.selected_kernel(q, k[..., :8], v, backward=True)


def test_bench_records_name_forward_and_backward_kernels():
    from flashvision.bench import impls

    assert impls.pass_kernel("sm90", "sm80", "fwd") == "sm90"
    assert impls.pass_kernel("sm90", "sm80", "fwd+bwd") == "sm90/sm80"
    assert impls.pass_kernel("sm90", None, "fwd+bwd") is None
    assert impls.pass_kernel(None, "sm80", "fwd+bwd") is None
