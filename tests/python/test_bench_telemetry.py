"""The bench's GPU telemetry (--telemetry): nvidia-smi's samples read, averaged over each
timing's window, and the errors where nvidia-smi cannot give them. A fake nvidia-smi on PATH
stands in for the real one (CI has no GPU); the GPU machine's runs use the real one."""

import os
import stat
import sys
import textwrap
import time

import pytest

pytest.importorskip("torch")

from flashvision.bench import cases, runner, telemetry  # noqa: E402
from flashvision.bench.progress import Progress  # noqa: E402

FAKE_SMI = textwrap.dedent("""\
    import datetime, os, sys, time
    args = sys.argv[1:]
    query = next(a for a in args if a.startswith("--query-gpu="))[len("--query-gpu="):]
    if os.environ.get("FAKE_SMI_FAIL"):
        print("No devices were found"); sys.exit(6)
    for field in ("power.draw.instant", "clocks_event_reasons.active"):
        if os.environ.get("FAKE_SMI_OLD") and field in query:
            print(f'Field "{field}" is not a valid field to query.'); sys.exit(2)
    if query == "power.limit,clocks.max.sm":
        print("700.00, 1980"); sys.exit(0)
    def line():
        now = datetime.datetime.now().strftime("%Y/%m/%d %H:%M:%S.%f")[:-3]
        print(f"{now}, 1500, 690.50, 0x0000000000000004", flush=True)
    if "-lms" not in args:
        line(); sys.exit(0)
    period = int(args[args.index("-lms") + 1]) / 1e3
    while True:
        line(); time.sleep(period)
    """)


@pytest.fixture
def fake_smi(tmp_path, monkeypatch):
    """A fake nvidia-smi first on PATH; the FAKE_SMI_* variables change how it answers."""
    path = tmp_path / "nvidia-smi"
    path.write_text(f"#!{sys.executable}\n{FAKE_SMI}")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}")
    return path


def test_a_sample_line_is_read():
    when, mhz, watts, mask = telemetry.parse_sample(
        "2026/12/01 00:57:06.648, 1980, 691.23, 0x0000000000000004\n")
    assert (mhz, watts, mask) == (1980.0, 691.23, 4)
    assert abs(when - time.mktime((2026, 12, 1, 0, 57, 6, 0, 0, -1)) - 0.648) < 1e-3


@pytest.mark.parametrize("line", [
    "2026/12/01 00:57:06.648, 1980, [N/A], 0x0000000000000004",
    "2026/12/01 00:57:06.648, 1980, 691.23",
    "No devices were found",
    "",
])
def test_lines_that_are_not_a_full_sample_are_skipped(line):
    assert telemetry.parse_sample(line) is None


def test_reasons_are_named_by_bit():
    assert telemetry.reason_names(0) == []
    assert telemetry.reason_names(0x4) == ["power cap"]
    assert telemetry.reason_names(0x45) == ["idle", "power cap", "hardware thermal"]
    assert telemetry.reason_names(0x400) == ["0x400"]


def test_a_window_averages_only_its_own_samples():
    samples = [(1.0, 1980.0, 100.0, 0x0), (2.0, 1500.0, 690.0, 0x4), (3.0, 1600.0, 700.0, 0x4),
               (4.0, 1400.0, 695.0, 0x24), (5.0, 345.0, 80.0, 0x1)]
    summary = telemetry.summarize(samples, 1.5, 4.0)
    assert summary == {"sm_mhz": 1500, "watts": 695.0,
                       "clock_events": ["power cap", "software thermal"], "samples": 3}
    assert telemetry.summarize(samples, 5.5, 6.0) is None


def test_the_sampler_gives_each_window_its_means(fake_smi):
    sampler = telemetry.Sampler(["GPU-0000", "0"], period_ms=20)
    assert sampler.meta == {"source": "nvidia-smi", "device": "GPU-0000", "period_ms": 20,
                            "power_field": "power.draw.instant", "power_limit_w": 700.0,
                            "max_sm_mhz": 1980.0}
    record, untimed = {}, {}
    time.sleep(0.1)
    start = time.time()
    time.sleep(0.3)
    sampler.window(record, start, time.time())
    sampler.window(untimed, time.time() + 3600, time.time() + 3601)
    sampler.close()
    summary = record["gpu_telemetry"]
    assert summary["samples"] >= 5
    assert (summary["sm_mhz"], summary["watts"], summary["clock_events"]) == (
        1500, 690.5, ["power cap"])
    assert untimed["gpu_telemetry"] is None
    sampler.close()  # a second close changes nothing
    assert record["gpu_telemetry"] == summary


def test_an_older_driver_is_asked_for_its_throttle_reasons(fake_smi, monkeypatch):
    monkeypatch.setenv("FAKE_SMI_OLD", "1")
    sampler = telemetry.Sampler(["0"], period_ms=20)
    assert sampler.meta["power_field"] == "power.draw"
    record = {}
    start = time.time()
    time.sleep(0.2)
    sampler.window(record, start, time.time())
    sampler.close()
    assert record["gpu_telemetry"]["clock_events"] == ["power cap"]


def test_nvidia_smi_that_cannot_answer_is_an_error_naming_the_device(fake_smi, monkeypatch):
    monkeypatch.setenv("FAKE_SMI_FAIL", "1")
    with pytest.raises(telemetry.TelemetryError, match=r"device GPU-ab or 0: No devices"):
        telemetry.Sampler(["GPU-ab", "0"])


def test_a_missing_nvidia_smi_is_an_error():
    with pytest.raises(telemetry.TelemetryError, match="not on PATH"):
        telemetry.Sampler(["0"], executable="no-such-nvidia-smi")


def test_the_table_row_names_clock_power_and_reasons():
    record = {"case": "flux-2048", "impl": "flashvision", "pass": "fwd",
              "gpu_telemetry": {"sm_mhz": 1632, "watts": 691.0, "samples": 60,
                                "clock_events": ["idle", "power cap"]}}
    row = telemetry.telemetry_row(record)
    assert row.startswith("flux-2048") and "1632 MHz" in row and "691.0 W" in row
    assert row.endswith("clock held by: power cap")
    record["gpu_telemetry"] = None
    assert telemetry.telemetry_row(record).endswith("n/a")


class WindowLog:
    """Stands in for a Sampler: keeps the windows measure() marks."""

    def __init__(self):
        self.windows = []

    def window(self, record, start, end):
        self.windows.append((record, start, end))


def test_measure_marks_the_window_of_its_timing():
    case = cases.shape_case(1, 2, 24, 20, 16)
    log = WindowLog()
    settings = runner.Settings("cpu", "f32", 0.005, 2**30, telemetry=log)
    before = time.time()
    records = runner.run_case(case, ["flashvision", "naive"], ["fwd"], settings, 3, Progress(2))
    assert [r for r, _, _ in log.windows] == records
    for record, start, end in log.windows:
        assert "error" not in record
        assert before <= start <= end <= time.time()
