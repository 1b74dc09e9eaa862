"""The reader of the sm90 forward's diagnostic timelines (flashvision.bench.timelines) on files
written here in the layout of src/cuda/sm90/fwd_timeline_layout.h, with known phase lengths."""

import struct

import pytest

pytest.importorskip("torch")

from flashvision.bench import timelines  # noqa: E402

CTAS, ROLES, EVENTS = 2, 4, 256


def unit_events(start, blocks):
    """One consumer unit of the per-tile loop: (cycle, event name) with fixed gaps."""
    out, t = [], start

    def at(gap, name):
        nonlocal t
        t += gap
        out.append((t, name))

    at(0, "unit_start")
    at(10, "q_wait")
    at(80, "q_landed")
    at(500, "q_scaled")
    at(90, "turn_wait")
    at(40, "turn_held")
    at(30, "turn_passed")
    at(600, "scores_ready")
    at(2000, "softmax_done")
    for _ in range(blocks - 1):
        at(7, "blocks_wait")
        at(200, "blocks_landed")
        at(3, "turn_wait")
        at(40, "turn_held")
        at(1200, "turn_passed")
        at(100, "scores_ready")
        at(400, "values_done")
        at(1500, "softmax_done")
    at(10, "turn_wait")
    at(80, "turn_held")
    at(30, "turn_passed")
    at(500, "values_done")
    at(1400, "finish_done")
    return out, t


def write(path, records_by_timeline, units=2048):
    words = [0] * (CTAS * ROLES * EVENTS)
    for (cta, role), records in records_by_timeline.items():
        base = (cta * ROLES + role) * EVENTS
        for i, (cycle, name) in enumerate(records):
            words[base + i] = (cycle << 8) | timelines.CODES[name]
    with open(path, "wb") as f:
        f.write(struct.pack("<6i", CTAS, ROLES, EVENTS, 128, 192, units))
        f.write(struct.pack(f"<{len(words)}Q", *words))


def test_phases_of_known_units(tmp_path):
    records, end = unit_events(1000, blocks=5)
    second, end2 = unit_events(end + 300, blocks=5)
    third, _ = unit_events(end2 + 300, blocks=5)
    producer = [(900, "producer_q_wait"), (950, "producer_q_issued")]
    path = tmp_path / "t.bin"
    write(path, {(0, 1): records + second + third, (0, 0): producer})
    result = timelines.report(path)
    assert result["header"]["block_n"] == 192 and result["header"]["units"] == 2048
    assert result["units"] == 3
    assert result["q_wait"] == (80, 80, 80)
    assert result["q_scale"][0] == 500
    assert result["first_softmax"][0] == 2000
    assert result["step_issue"][0] == 1200
    assert result["step_values_after_scores"][0] == 400
    assert result["step_softmax"][0] == 1500
    assert result["step_blocks_wait"][0] == 200
    assert result["epilogue"][0] == 1400
    assert result["key_blocks"][0] == 5
    # A step: 3 + 40 + 1200 + 100 + 400 + 1500 + 7 + 200 cycles between turns.
    assert result["step_period"][0] == 3450
    assert result["finish_to_next_unit"][0] == 300
    unit = end - 1000 + 300
    assert result["unit"][0] == unit
    assert result["beyond_blocks"][0] == unit - 5 * 3450
    # The Q issued at 950 landed at 1090 on the one consumer recorded.
    assert result["q_load_latency"][0] == 140
    assert "step_period" in timelines.format_report(path, result)


def test_truncated_file_is_an_error(tmp_path):
    path = tmp_path / "short.bin"
    path.write_bytes(struct.pack("<6i", CTAS, ROLES, EVENTS, 128, 192, 1) + b"\0" * 16)
    with pytest.raises(ValueError, match="do not hold"):
        timelines.read(path)
    path.write_bytes(b"\0" * 8)
    with pytest.raises(ValueError, match="shorter than"):
        timelines.read(path)
