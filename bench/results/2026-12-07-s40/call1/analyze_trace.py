"""Reads the timelines of trace_cases.py (fwd_trace.cuh's records) and prints, per case, the
median cycles of each phase of a consumer's tile: the Q wait and scaling, each turn's wait, the
GEMMs' latencies, the softmax, the epilogue; the loop's period a block, and what a tile costs
beyond its blocks."""
import statistics
import struct
import sys

NAMES = {1: "TurnWait", 2: "TurnHeld", 3: "TurnPassed", 4: "ScoresReady", 5: "SoftmaxDone",
         6: "ValuesDone", 7: "FinishDone", 8: "QWait", 9: "QLanded", 10: "QScaled", 11: "KvWait",
         12: "KvLanded", 13: "UnitStart", 20: "ProdQEmptyWait", 21: "ProdQIssued",
         22: "ProdKIssued", 23: "ProdVIssued"}


def read(path):
    with open(path, "rb") as f:
        ctas, roles, events, block_m, block_n, units = struct.unpack("6i", f.read(24))
        words = struct.unpack(f"{ctas * roles * events}Q", f.read(8 * ctas * roles * events))
    tl = {}
    for c in range(ctas):
        for r in range(roles):
            base = (c * roles + r) * events
            seq = [(w >> 8, w & 0xFF) for w in words[base:base + events] if w]
            tl[c, r] = seq
    return (block_m, block_n, units), tl


def units_of(seq):
    """Splits a consumer's events into units at each UnitStart."""
    out, cur = [], None
    for t, e in seq:
        if e == 13:
            if cur:
                out.append(cur)
            cur = [(t, e)]
        elif cur is not None:
            cur.append((t, e))
    if cur:
        out.append(cur)
    return out


def phases(unit, next_start):
    """Named durations of one unit (cycles)."""
    ev = unit
    d = {}
    t = {e: None for e in NAMES}
    first = {}
    for time, e in ev:
        first.setdefault(e, time)
    d["q_wait"] = first[9] - first[8]
    d["q_scale"] = first[10] - first[9]
    d["start_to_q"] = first[8] - first[13]
    d["q_scaled_to_first_turn"] = None
    # turns in order: each (TurnWait, TurnHeld, TurnPassed)
    turns, cur = [], {}
    for time, e in ev:
        if e in (1, 2, 3):
            cur[e] = time
            if e == 3:
                turns.append(cur)
                cur = {}
    d["turns"] = len(turns)
    d["first_turn_wait"] = turns[0][2] - turns[0][1]
    d["q_scaled_to_first_turn"] = turns[0][1] - first[10]
    d["last_turn_wait"] = turns[-1][2] - turns[-1][1]
    mid = turns[1:-1]
    d["loop_turn_wait"] = statistics.median([x[2] - x[1] for x in mid]) if mid else 0
    d["loop_issue"] = statistics.median([x[3] - x[2] for x in mid]) if mid else 0
    helds = [x[2] for x in turns]
    d["loop_period"] = statistics.median([b - a for a, b in zip(helds[1:-2], helds[2:-1])]) if len(helds) > 4 else 0
    # first S: TurnPassed of turn 0 -> first ScoresReady
    sr = [time for time, e in ev if e == 4]
    sd = [time for time, e in ev if e == 5]
    vd = [time for time, e in ev if e == 6]
    kw = [time for time, e in ev if e == 11]
    kl = [time for time, e in ev if e == 12]
    d["first_s_latency"] = sr[0] - turns[0][3]
    d["first_softmax"] = sd[0] - sr[0]
    d["first_softmax_to_turn2_held"] = turns[1][2] - sd[0] if len(turns) > 1 else 0
    if len(sr) > 2:
        d["loop_s_latency"] = statistics.median([sr[i] - turns[i][3] for i in range(1, len(turns) - 1)])
        d["loop_pv_after_s"] = statistics.median([vd[i - 1] - sr[i] for i in range(1, len(turns) - 1)])
        d["loop_softmax"] = statistics.median([sd[i] - vd[i - 1] for i in range(1, len(turns) - 1)])
        d["kv_wait"] = statistics.median([b - a for a, b in zip(kw, kl)])
        d["kv_wait_max"] = max([b - a for a, b in zip(kw, kl)])
    d["last_pv_latency"] = vd[-1] - turns[-1][3]
    d["last_softmax_to_last_turn"] = turns[-1][2] - sd[-1]
    fin = [time for time, e in ev if e == 7]
    d["epilogue"] = fin[0] - vd[-1] if fin else 0
    d["unit"] = (next_start - first[13]) if next_start else 0
    d["after_finish"] = (next_start - fin[0]) if (next_start and fin) else 0
    d["blocks"] = len(turns) - 1
    return d


def main():
    for path in sys.argv[1:]:
        (bm, bn, units), tl = read(path)
        rows = []
        qlat = []
        for (c, r), seq in tl.items():
            if r == 0 or not seq:
                continue
            us = units_of(seq)
            for i, u in enumerate(us):
                nxt = us[i + 1][0][0] if i + 1 < len(us) else None
                try:
                    rows.append(phases(u, nxt))
                except (KeyError, IndexError):
                    pass
        for c in range(8):
            prod = tl.get((c, 0), [])
            issued = [t for t, e in prod if e == 21]
            cons = [t for t, e in tl.get((c, 1), []) if e == 9]
            cons2 = [t for t, e in tl.get((c, 2), []) if e == 9]
            for a, b, b2 in zip(issued, cons, cons2):
                qlat.append(min(b, b2) - a)
        full = [x for x in rows if x["unit"]]
        print(f"== {path}: {bm} x {bn}, {units} units; {len(rows)} consumer units traced")
        keys = [k for k in rows[0] if k != "turns"]
        for k in keys:
            vals = [x[k] for x in (full if k in ("unit", "after_finish") else rows) if k in x]
            if vals:
                print(f"  {k:28s} median {statistics.median(vals):9.0f}  min {min(vals):8.0f}  max {max(vals):8.0f}")
        if qlat:
            print(f"  {'q_issue_to_landed':28s} median {statistics.median(qlat):9.0f}  min {min(qlat):8.0f}  max {max(qlat):8.0f}")
        if full:
            per = statistics.median([x["loop_period"] for x in full])
            over = statistics.median([x["unit"] - x["blocks"] * x["loop_period"] for x in full])
            print(f"  tile beyond its blocks at the loop's period: {over:.0f} cycles ({over / per:.2f} blocks)")


if __name__ == "__main__":
    main()
