"""python -m flashvision.bench on the CPU: a tiny run end to end (table, JSON, plots) and the
argument errors. The GPU paths run on the GPU machine (see the module's --help)."""

import importlib.util
import json

import pytest

torch = pytest.importorskip("torch")

from flashvision.bench import cases, cli  # noqa: E402

SHAPE = "1,2,24,20,16"
SHAPE_CASE = "shape-1x2x24x20x16"
META_KEYS = {"date", "host", "gpu", "driver", "cuda", "torch", "cudnn", "commit", "command"}
RECORD_KEYS = {"case", "B", "H", "Hkv", "Nq", "Nk", "D", "dtype", "causal", "device", "impl",
               "pass", "ms", "tflops", "peak_bytes", "max_err"}


@pytest.fixture(scope="module")
def cpu_run(tmp_path_factory):
    """One tiny CPU run with --backward, --json and --plots (shared: it is the slow part)."""
    tmp = tmp_path_factory.mktemp("bench")
    args = ["--device", "cpu", "--shape", SHAPE, "--backward", "--budget", "0.005",
            "--json", str(tmp / "results.json"), "--plots", str(tmp / "plots"),
            "--sweep-sides", "4,6", "--seed", "7"]
    status = cli.main(args)
    return status, json.loads((tmp / "results.json").read_text()), tmp / "plots"


def test_run_succeeds_and_meta_is_complete(cpu_run):
    status, results, _ = cpu_run
    assert status == 0
    meta = results["meta"]
    assert META_KEYS <= set(meta)
    assert meta["gpu"] is None
    assert meta["torch"] == torch.__version__
    assert meta["command"].startswith("python") and f"--shape {SHAPE}" in meta["command"]
    assert meta["seed"] == 7


@pytest.mark.parametrize("pass_", ["fwd", "fwd+bwd"])
@pytest.mark.parametrize("impl", ["flashvision", "torch-cpu-sdpa", "naive"])
def test_each_impl_ran_and_matches_the_reference(cpu_run, impl, pass_):
    _, results, _ = cpu_run
    found = [r for r in results["records"]
             if r["case"] == SHAPE_CASE and r["impl"] == impl and r["pass"] == pass_]
    assert len(found) == 1, found
    record = found[0]
    assert RECORD_KEYS <= set(record)
    assert "error" not in record, record["error"]
    assert (record["B"], record["H"], record["Nq"], record["Nk"], record["D"]) == (1, 2, 24, 20,
                                                                                  16)
    assert record["device"] == "cpu" and record["dtype"] == "f32" and record["causal"] is False
    assert record["ms"] > 0 and record["tflops"] > 0
    flop = cases.flops(cases.shape_case(1, 2, 24, 20, 16), pass_)
    assert record["tflops"] == pytest.approx(flop / (record["ms"] * 1e-3) / 1e12)
    assert record["max_err"] < 1e-4  # float32 against a float64 reference
    assert ("kernel" in record) == (impl == "flashvision")
    if impl == "flashvision":
        assert record["kernel"].startswith("cpu")


def test_resolution_sweep_records(cpu_run):
    _, results, _ = cpu_run
    sweep = {(r["case"], r["impl"]) for r in results["records"] if r["case"].startswith("sd-")}
    assert sweep == {(f"sd-self-s{s}", impl) for s in (4, 6) for impl in ("flashvision", "naive")}


def test_plots_are_written(cpu_run):
    if importlib.util.find_spec("matplotlib") is None:
        pytest.skip("matplotlib is not installed")
    _, _, plots = cpu_run
    for name in ("tflops_by_case", "memory_vs_resolution", "time_vs_resolution"):
        assert (plots / f"{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_table_names_the_speedup(tmp_path, capsys):
    assert cli.main(["--device", "cpu", "--shape", "1,1,8,8,8", "--budget", "0.001",
                     "--impl", "flashvision", "--impl", "naive"]) == 0
    out = capsys.readouterr().out
    assert "max_err" in out and "x vs naive" in out and "geometric mean" in out


def test_naive_over_the_cap_is_skipped_with_a_reason(tmp_path):
    path = tmp_path / "skip.json"
    assert cli.main(["--device", "cpu", "--shape", "1,1,64,64,8", "--impl", "naive",
                     "--naive-cap-gb", "1e-9", "--json", str(path)]) == 0
    (record,) = json.loads(path.read_text())["records"]
    assert record["error"].startswith("skipped") and "--naive-cap-gb" in record["error"]
    assert record["ms"] is None


def test_quick_reduces_the_batch_and_records_it():
    args = cli.build_parser().parse_args(["--quick", "--device", "cpu"])
    chosen = cli.selected_cases(args)
    assert [c.name for c in chosen] == list(cases.QUICK_CASES)
    assert all(c.B == cases.QUICK_BATCH for c in chosen)


@pytest.mark.parametrize("argv, flag", [
    (["--shape", "1,2,3"], "--shape"),
    (["--shape", "1,2,3,4,0"], "--shape"),
    (["--case", "no-such-case"], "--case"),
    (["--budget", "0"], "--budget"),
    (["--dtype", "f64"], "--dtype"),
    (["--impl", "sdpa-flash", "--device", "cpu"], "--impl"),
    (["--sweep-sides", "16,x"], "--sweep-sides"),
    (["--resolution-sweep", "--case", "vit-b16-224"], "--resolution-sweep"),
])
def test_argument_errors_name_the_flag(argv, flag, capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(argv)
    assert exit_info.value.code == 2
    assert flag in capsys.readouterr().err
