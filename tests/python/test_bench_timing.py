"""The CPU bench's interleaved timing: each case's implementations take turns in rounds, so that
a change in the machine's speed during the run shifts both sides of a ratio alike."""

import json

import pytest

pytest.importorskip("torch")

from flashvision.bench import cli, records, timing  # noqa: E402


class FakeMachine:
    """A clock for timing.perf_counter, and callables whose calls advance it by their cost times
    the machine's slowdown at that moment."""

    def __init__(self, slowdown):
        self.now = 0.0
        self.slowdown = slowdown  # time -> factor
        self.log = []

    def clock(self):
        return self.now

    def impl(self, name, cost_s):
        def call():
            self.log.append(name)
            self.now += cost_s * self.slowdown(self.now)
        return call


@pytest.fixture
def steady(monkeypatch):
    machine = FakeMachine(lambda t: 1.0)
    monkeypatch.setattr(timing.time, "perf_counter", machine.clock)
    return machine


def test_rounds_alternate_the_order_and_warm_up_each_turn(steady):
    a, b = steady.impl("a", 1e-3), steady.impl("b", 1e-3)
    per_round = timing.interleaved_cpu_ms([a, b], budget_s=0.0, rounds=3)
    # One untimed call and ceil(MIN_REPEATS / rounds) = 1 timed call per turn.
    assert steady.log == ["a", "a", "b", "b", "b", "b", "a", "a", "a", "a", "b", "b"]
    assert [len(r) for r in per_round[0]] == [1, 1, 1] == [len(r) for r in per_round[1]]
    assert per_round[0][0] == [pytest.approx(1.0)]


def test_rounds_share_the_budget_and_the_repeat_cap(steady):
    a, b = steady.impl("a", 1e-3), steady.impl("b", 4e-3)
    per_round = timing.interleaved_cpu_ms([a, b], budget_s=0.1, rounds=4)
    # 25 ms per turn: 25 calls of a (under the cap of 200 / 4 = 50), 7 of b (the call that
    # passes 25 ms still counts, as in cpu_ms).
    assert [len(r) for r in per_round[0]] == [25] * 4
    assert [len(r) for r in per_round[1]] == [7] * 4
    capped = timing.interleaved_cpu_ms([steady.impl("c", 1e-6)], budget_s=1.0, rounds=4)
    assert sum(len(r) for r in capped[0]) == timing.MAX_REPEATS


def test_one_round_times_as_cpu_ms_does(steady):
    a = steady.impl("a", 2e-3)
    (rounds,) = timing.interleaved_cpu_ms([a], budget_s=0.01, rounds=1)
    assert len(rounds) == 1 and len(rounds[0]) == 5
    steady.log.clear()
    assert timing.cpu_ms(a, 0.01) == pytest.approx(2.0)
    assert len(steady.log) == timing.WARMUP_CALLS + 5


def _ratio(machine, rounds):
    """flashvision's speedup over a peer twice as slow, both timed by the bench's code."""
    fv, peer = machine.impl("flashvision", 1e-3), machine.impl("peer", 2e-3)
    per_round = timing.interleaved_cpu_ms([fv, peer], budget_s=0.2, rounds=rounds)
    recs = []
    for impl, rs in (("flashvision", per_round[0]), ("torch-cpu-sdpa", per_round[1])):
        recs.append({"case": "c", "pass": "fwd", "impl": impl,
                     "ms": timing.median_of([ms for r in rs for ms in r]),
                     "round_ms": [timing.median_of(r) for r in rs] if rounds > 1 else None})
    return records.speedup(recs, "c", "fwd")[0]


def test_a_speed_change_between_blocks_enters_the_block_ratio_not_the_rounds_one(monkeypatch):
    """The machine slows by 30 % a little after the run starts, past where one block of
    flashvision's repeats ends: timed in two blocks the peer looks 30 % slower than it is; in
    rounds every round's ratio but one is the true 2.0 and their median is exact."""
    for rounds, expected in ((1, 2.6), (5, 2.0)):
        machine = FakeMachine(lambda t: 1.0 if t < 0.25 else 1.3)
        monkeypatch.setattr(timing.time, "perf_counter", machine.clock)
        assert _ratio(machine, rounds) == pytest.approx(expected)


def test_speedup_takes_the_median_of_the_round_ratios():
    recs = [{"case": "c", "pass": "fwd", "impl": "flashvision", "ms": 1.0,
             "round_ms": [1.0, 1.0, 2.0]},
            {"case": "c", "pass": "fwd", "impl": "torch-cpu-sdpa", "ms": 3.0,
             "round_ms": [1.5, 1.8, 5.0]}]
    # Ratios 1.5, 1.8, 2.5; the ms ratio would say 3.0.
    assert records.speedup(recs, "c", "fwd") == (pytest.approx(1.8), "torch-cpu-sdpa")
    del recs[1]["round_ms"]
    assert records.speedup(recs, "c", "fwd") == (pytest.approx(3.0), "torch-cpu-sdpa")


def test_a_cpu_run_records_its_rounds(tmp_path):
    path = tmp_path / "rounds.json"
    assert cli.main(["--device", "cpu", "--shape", "1,2,24,20,16", "--impl", "flashvision",
                     "--impl", "torch-cpu-sdpa", "--backward", "--budget", "0.003", "--rounds",
                     "3", "--json", str(path)]) == 0
    results = json.loads(path.read_text())
    assert results["meta"]["rounds"] == 3
    got = [(r["impl"], r["pass"]) for r in results["records"]]
    assert got == [("flashvision", "fwd"), ("flashvision", "fwd+bwd"), ("torch-cpu-sdpa", "fwd"),
                   ("torch-cpu-sdpa", "fwd+bwd")]
    for record in results["records"]:
        assert "error" not in record, record["error"]
        assert len(record["round_ms"]) == 3 and min(record["round_ms"]) > 0
        assert min(record["round_ms"]) <= record["ms"] <= max(record["round_ms"])
        assert record["max_err"] < 1e-4 and record["peak_bytes"] is not None


def test_one_round_is_the_block_timing(tmp_path):
    path = tmp_path / "blocks.json"
    assert cli.main(["--device", "cpu", "--shape", "1,1,16,16,8", "--impl", "flashvision",
                     "--impl", "naive", "--budget", "0.002", "--rounds", "1", "--json",
                     str(path)]) == 0
    results = json.loads(path.read_text())
    assert results["meta"]["rounds"] == 1
    assert all("round_ms" not in r and r["ms"] > 0 for r in results["records"])


def test_rounds_are_for_cpu_runs_only(monkeypatch, capsys):
    monkeypatch.setattr(cli.torch.cuda, "is_available", lambda: True)
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["--device", "cuda", "--rounds", "3"])
    assert exit_info.value.code == 2
    assert "--rounds 3" in capsys.readouterr().err


def test_the_timer_name_says_when_it_times_graph_replays(monkeypatch):
    monkeypatch.setattr(timing, "_triton_do_bench", lambda: None)
    assert timing.timer_name("cuda") == "cuda-events"
    assert timing.timer_name("cuda", cuda_graphs=True) == "cuda-events of CUDA graph replays"
    assert timing.timer_name("cpu") == "perf_counter"


def test_a_failing_impl_keeps_the_others_rounds(tmp_path, monkeypatch):
    """A shape one implementation rejects leaves its record with the error and the others timed."""
    from flashvision.bench import impls

    real = impls.forward_fn

    def rejecting(impl, scale, sets=()):
        if impl == "naive":
            def fail(q, k, v):
                raise RuntimeError("naive: no such shape here")
            return fail
        return real(impl, scale, sets)

    monkeypatch.setattr(impls, "forward_fn", rejecting)
    path = tmp_path / "partial.json"
    assert cli.main(["--device", "cpu", "--shape", "1,1,16,16,8", "--impl", "flashvision",
                     "--impl", "naive", "--budget", "0.002", "--rounds", "2", "--json",
                     str(path)]) == 0
    fv, naive = json.loads(path.read_text())["records"]
    assert naive["error"].startswith("RuntimeError: naive") and naive["ms"] is None
    assert fv["ms"] > 0 and len(fv["round_ms"]) == 2
