"""Reads the sm90 forward's diagnostic timelines and reports where a consumer's tile spends its
cycles: ``python -m flashvision.bench.timelines FILE...``.

A build configured with ``FLASHVISION_SM90_TIMELINES=ON`` records, in each forward run with the
environment variable of that name set to a file, the events of every warpgroup of the first CTAs
(src/cuda/sm90/fwd_timeline_layout.h: the file's layout and the events' numbers) and writes them
there. For each consumer unit (a tile, or a split tile's key range) this reports the median, least
and most cycles of each phase: the Q wait and scaling, each GEMM turn's wait and issue, the GEMMs'
latencies, the softmax, the K and V waits, the epilogue; the loop's period (a key block, both
consumers), and what a tile costs beyond its key blocks at that period. Cycles are the SM's clock,
so only one CTA's records compare, and the records themselves cost a few cycles each.
"""

import argparse
import statistics
import struct
import sys

EVENTS = {
    1: "turn_wait", 2: "turn_held", 3: "turn_passed", 4: "scores_ready", 5: "softmax_done",
    6: "values_done", 7: "finish_done", 8: "q_wait", 9: "q_landed", 10: "q_scaled",
    11: "blocks_wait", 12: "blocks_landed", 13: "unit_start", 20: "producer_q_wait",
    21: "producer_q_issued", 22: "producer_k_issued", 23: "producer_v_issued",
}
CODES = {name: code for code, name in EVENTS.items()}
HEADER = struct.Struct("<6i")


def read(path):
    """The file's header (a dict) and its timelines: {(cta, role): [(cycle, event name), ...]}
    with role 0 the producer warpgroup and 1 .. 3 the consumers, empty ones left out."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < HEADER.size:
        raise ValueError(f"{path}: {len(data)} bytes, shorter than the timelines' header")
    ctas, roles, events, block_m, block_n, units = HEADER.unpack_from(data)
    count = ctas * roles * events
    if min(ctas, roles, events) <= 0 or len(data) != HEADER.size + 8 * count:
        raise ValueError(f"{path}: {len(data)} bytes do not hold {ctas} x {roles} x {events} "
                         "records after the header")
    words = struct.unpack_from(f"<{count}Q", data, HEADER.size)
    timelines = {}
    for cta in range(ctas):
        for role in range(roles):
            base = (cta * roles + role) * events
            records = [(w >> 8, EVENTS.get(w & 0xFF, f"event_{w & 0xFF}"))
                       for w in words[base:base + events] if w]
            if records:
                timelines[cta, role] = records
    header = {"ctas": ctas, "roles": roles, "events": events, "block_m": block_m,
              "block_n": block_n, "units": units}
    return header, timelines


def split_units(records):
    """A consumer's records cut at each unit_start (those before the first are dropped)."""
    units = []
    for cycle, event in records:
        if event == "unit_start":
            units.append([])
        if units:
            units[-1].append((cycle, event))
    return units


def _turns(unit):
    turns, current = [], {}
    for cycle, event in unit:
        if event in ("turn_wait", "turn_held", "turn_passed"):
            current[event] = cycle
            if event == "turn_passed":
                turns.append(current)
                current = {}
    return turns


def unit_phases(unit, next_start=None):
    """Cycles of each phase of one consumer unit of the per-tile loop (a first S alone, the loop's
    steps, the last P V alone); next_start, the next unit's start, adds the unit's whole length."""
    first = {}
    times = {}
    for cycle, event in unit:
        first.setdefault(event, cycle)
        times.setdefault(event, []).append(cycle)
    turns = _turns(unit)
    if len(turns) < 2 or "q_scaled" not in first:
        raise ValueError("a unit of the per-tile loop has a Q wait and two GEMM turns or more")
    scores, softmax, values = times["scores_ready"], times["softmax_done"], times["values_done"]
    steps = range(1, len(turns) - 1)
    phases = {
        "start_to_q_wait": first["q_wait"] - first["unit_start"],
        "q_wait": first["q_landed"] - first["q_wait"],
        "q_scale": first["q_scaled"] - first["q_landed"],
        "q_scaled_to_first_turn": turns[0]["turn_wait"] - first["q_scaled"],
        "first_turn_wait": turns[0]["turn_held"] - turns[0]["turn_wait"],
        "first_scores_latency": scores[0] - turns[0]["turn_passed"],
        "first_softmax": softmax[0] - scores[0],
        "first_softmax_to_next_turn": turns[1]["turn_held"] - softmax[0],
        "last_turn_wait": turns[-1]["turn_held"] - turns[-1]["turn_wait"],
        "last_values_latency": values[-1] - turns[-1]["turn_passed"],
        "epilogue": first["finish_done"] - values[-1] if "finish_done" in first else None,
        "key_blocks": len(turns) - 1,
    }
    if steps:
        held = [t["turn_held"] for t in turns]
        phases.update({
            "step_turn_wait": statistics.median(turns[i]["turn_held"] - turns[i]["turn_wait"]
                                                for i in steps),
            "step_issue": statistics.median(turns[i]["turn_passed"] - turns[i]["turn_held"]
                                            for i in steps),
            "step_scores_latency": statistics.median(scores[i] - turns[i]["turn_passed"]
                                                     for i in steps),
            "step_values_after_scores": statistics.median(values[i - 1] - scores[i] for i in steps),
            "step_softmax": statistics.median(softmax[i] - values[i - 1] for i in steps),
        })
        waits = [b - a for a, b in zip(times.get("blocks_wait", []), times.get("blocks_landed", []))]
        if waits:
            phases["step_blocks_wait"] = statistics.median(waits)
        if len(held) > 3:
            phases["step_period"] = statistics.median(b - a for a, b in zip(held[1:-2], held[2:-1]))
    if next_start is not None:
        phases["unit"] = next_start - first["unit_start"]
        if "finish_done" in first:
            phases["finish_to_next_unit"] = next_start - first["finish_done"]
    return phases


def report(path):
    """{phase: (median, least, most)} over every consumer unit the file holds, plus the header's
    fields, the Q loads' latency (the producer's issue to the first consumer's landing) and
    beyond_blocks: a whole unit's length less its key blocks at the loop's period."""
    header, timelines = read(path)
    rows = []
    for (cta, role), records in sorted(timelines.items()):
        if role == 0:
            continue
        units = split_units(records)
        for i, unit in enumerate(units):
            next_start = units[i + 1][0][0] if i + 1 < len(units) else None
            try:
                rows.append(unit_phases(unit, next_start))
            except ValueError:
                continue  # a one-block unit, or one the record limit cut short
    out = {"header": header, "units": len(rows)}
    names = sorted({name for row in rows for name in row})
    for name in names:
        values = [row[name] for row in rows if row.get(name) is not None]
        if values:
            out[name] = (statistics.median(values), min(values), max(values))
    q_latency = []
    for cta in range(header["ctas"]):
        issued = [c for c, e in timelines.get((cta, 0), []) if e == "producer_q_issued"]
        landed = [[c for c, e in timelines.get((cta, role), []) if e == "q_landed"]
                  for role in range(1, header["roles"])]
        landed = [x for x in landed if x]
        for k, cycle in enumerate(issued):
            firsts = [x[k] for x in landed if k < len(x)]
            if firsts:
                q_latency.append(min(firsts) - cycle)
    if q_latency:
        out["q_load_latency"] = (statistics.median(q_latency), min(q_latency), max(q_latency))
    whole = [row for row in rows if "unit" in row and "step_period" in row]
    if whole:
        beyond = [row["unit"] - row["key_blocks"] * row["step_period"] for row in whole]
        out["beyond_blocks"] = (statistics.median(beyond), min(beyond), max(beyond))
    return out


def format_report(path, result):
    h = result["header"]
    lines = [f"== {path}: tiles of {h['block_m']} x {h['block_n']}, {h['units']} units; "
             f"{result['units']} consumer units read"]
    for name, value in result.items():
        if name in ("header", "units"):
            continue
        median, least, most = value
        lines.append(f"  {name:28s} median {median:9.0f}  least {least:9.0f}  most {most:9.0f}")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m flashvision.bench.timelines",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="+", help="timelines written by the sm90 forward")
    args = parser.parse_args(argv)
    for path in args.files:
        print(format_report(path, report(path)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
