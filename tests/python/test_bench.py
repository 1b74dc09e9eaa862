"""python -m flashvision.bench on the CPU: a tiny run end to end (table, JSON, plots), the
argument errors and the case table it shares with the C++ tool. The GPU paths run on the GPU
machine (see the module's --help)."""

import importlib.util
import json
import os
import re
import shutil
import subprocess

import pytest

torch = pytest.importorskip("torch")

import flashvision  # noqa: E402
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
    # The extension's own build commit, whatever checkout the run happens in.
    assert meta["build_commit"] == flashvision.__build_commit__
    assert re.fullmatch(r"[0-9a-f]{40}(-dirty)?|unknown", meta["build_commit"])


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
    if impl == "flashvision":  # the library's own choice, not a guess
        cpu = flashvision.kernel_name("cpu")
        assert record["kernel"] == (cpu if pass_ == "fwd" else f"{cpu}/{cpu}")


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


def test_a_peers_only_run_needs_no_flashvision_kernel(tmp_path, monkeypatch):
    """gpu-check's peers stage without the CUDA package: the sdpa-* impls on a CPU-only build."""
    def refuse(*args, **kwargs):
        raise AssertionError("selected_kernel called in a run without flashvision")

    monkeypatch.setattr(flashvision, "selected_kernel", refuse)
    path = tmp_path / "peers.json"
    assert cli.main(["--device", "cpu", "--shape", "1,1,16,16,8", "--impl", "torch-cpu-sdpa",
                     "--budget", "0.001", "--backward", "--json", str(path)]) == 0
    records = json.loads(path.read_text())["records"]
    assert [(r["impl"], r["pass"]) for r in records] == [("torch-cpu-sdpa", "fwd"),
                                                         ("torch-cpu-sdpa", "fwd+bwd")]
    assert all("kernel" not in r and "error" not in r for r in records)


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
    (["--kernel", "sm80", "--device", "cpu"], "--kernel"),
    (["--kernel", "sm70"], "--kernel"),
    (["--cuda-graphs", "--device", "cpu"], "--cuda-graphs"),
    (["--telemetry", "--device", "cpu"], "--telemetry"),
    (["--sweep-sides", "16,x"], "--sweep-sides"),
    (["--resolution-sweep", "--case", "vit-b16-224"], "--resolution-sweep"),
])
def test_argument_errors_name_the_flag(argv, flag, capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(argv)
    assert exit_info.value.code == 2
    assert flag in capsys.readouterr().err


def test_kernel_flag_sets_the_variable_for_the_run_only(monkeypatch):
    name = "FLASHVISION_CUDA_KERNEL"
    monkeypatch.delenv(name, raising=False)
    with cli._cuda_kernel("sm80"):
        assert os.environ[name] == "sm80"
    assert name not in os.environ
    monkeypatch.setenv(name, "sm90")
    with cli._cuda_kernel(None):
        assert os.environ[name] == "sm90"
    with cli._cuda_kernel("auto"):
        assert os.environ[name] == "auto"
    assert os.environ[name] == "sm90"


def test_case_table_is_the_bench_md_set():
    assert len(cases.CASES) == 23
    assert cases.CASES["vit-b16-224"] == cases.Case("vit-b16-224", 256, 12, 197, 197, 64,
                                                    what="ViT-B/16 at 224 px")
    assert [c.name for c in cases.CASES.values() if c.fwd_only] == ["video-49f-720p"]
    sweep = [c for c in cases.CASES.values() if c.name.startswith("sweep-")]
    assert len(sweep) == 9
    for case in sweep:  # 16k tokens in total, H * D = 2048
        assert case.name == f"sweep-d{case.D}-n{case.Nq}" and case.Nq == case.Nk
        assert case.B * case.Nq == 16384 and case.H * case.D == 2048
    assert set(cases.QUICK_CASES) <= set(cases.CASES)


def test_case_table_is_package_data():
    """cases.txt ships beside cases.py (pip install . must include it)."""
    assert os.path.isfile(cases.TABLE_PATH)
    assert os.path.dirname(cases.TABLE_PATH) == os.path.dirname(cases.__file__)


def test_a_malformed_table_line_is_named(tmp_path):
    table = tmp_path / "cases.txt"
    table.write_text("# comment\nok 1 2 3 4 5 fwd+bwd fine\nbad 1 2 3 4 fwd+bwd no D\n")
    with pytest.raises(ValueError, match=r"cases.txt:3: .*'bad 1 2 3 4"):
        cases.read_table(str(table))


def _cli():
    """The C++ tool: $FLASHVISION_CLI, else `flashvision` on PATH; None when neither exists."""
    path = os.environ.get("FLASHVISION_CLI") or shutil.which("flashvision")
    return path if path and os.access(path, os.X_OK) else None


def test_cases_match_the_cpp_tool():
    """`flashvision bench --list` (the table compiled into the C++ tool) names the same cases with
    the same shapes. ctest runs the same comparison on every CPU build (cli_case_list_*)."""
    cli_path = _cli()
    if cli_path is None:
        pytest.skip("no flashvision tool: set FLASHVISION_CLI=<build>/bin/flashvision")
    listing = subprocess.run([cli_path, "bench", "--list"], check=True, capture_output=True,
                             text=True).stdout.splitlines()[1:]
    tool = [line.split(None, 2) for line in listing if line.strip()]
    ours = [[c.name, f"{c.B}x{c.H}x{c.Nq}x{c.Nk}x{c.D}", c.what] for c in cases.CASES.values()]
    assert tool == ours
