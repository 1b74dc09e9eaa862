"""Run metadata, the results JSON of shared/BENCH.md and the text table."""

import datetime
import json
import os
import platform
import socket
import subprocess

import torch

FV_IMPL = "flashvision"


def _run(command, cwd=None):
    try:
        text = subprocess.check_output(command, cwd=cwd, stderr=subprocess.DEVNULL, timeout=10)
        return text.decode().strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def git_commit():
    """HEAD of the checkout the package (or the working directory) lives in, else $FV_COMMIT."""
    here = os.path.dirname(os.path.abspath(__file__))
    for cwd in (here, None):
        commit = _run(["git", "rev-parse", "HEAD"], cwd=cwd)
        if commit:
            return commit
    return os.environ.get("FV_COMMIT") or None


def _driver():
    line = _run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"])
    return line.splitlines()[0].strip() if line else None


def make_meta(device, command, seed, threads, timer, rounds=1):
    """The "meta" object: where, when and with what the figures were measured; rounds: how many
    interleaved rounds timed each case's implementations (1: one block each)."""
    import flashvision

    cudnn = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "host": socket.gethostname(),
        "gpu": torch.cuda.get_device_name() if device == "cuda" else None,
        "driver": _driver(),
        "cuda": torch.version.cuda,
        "torch": torch.__version__,
        "cudnn": None if cudnn is None else str(cudnn),
        "commit": git_commit(),
        "command": command,
        "flashvision": flashvision.__version__,
        "build_commit": flashvision.__build_commit__,
        "devices": flashvision.describe_devices(),
        "threads": threads,
        "timer": timer,
        "rounds": rounds,
        "seed": seed,
        "python": platform.python_version(),
    }


def write_json(path, meta, records):
    """Writes {"meta", "records"} atomically, so a partial run never leaves a torn file."""
    tmp = f"{path}.tmp"
    with open(tmp, "w") as f:
        json.dump({"meta": meta, "records": records}, f, indent=1)
        f.write("\n")
    os.replace(tmp, path)


# flashvision's rows (its 16-bit and FP8 forwards): never peers.
OWN_IMPLS = (FV_IMPL, "flashvision-fp8")


def best_peer(records, case, pass_):
    """The fastest record other than flashvision's for (case, pass), or None."""
    peers = [r for r in records if r["case"] == case and r["pass"] == pass_
             and r["impl"] not in OWN_IMPLS and r.get("ms")]
    return min(peers, key=lambda r: r["ms"], default=None)


def _median(values):
    values = sorted(values)
    return values[len(values) // 2]


def speedup(records, case, pass_, impl=FV_IMPL):
    """(best peer ms / `impl` ms, peer impl) for (case, pass), or None if either is n/a.

    Where both were timed in the same interleaved rounds (round_ms, CPU runs), the ratio is the
    median over the rounds of each round's ratio: a drift of the machine's speed between rounds
    then cancels in each ratio instead of entering it."""
    fv = [r for r in records if r["case"] == case and r["pass"] == pass_
          and r["impl"] == impl and r.get("ms")]
    peer = best_peer(records, case, pass_)
    if not fv or peer is None:
        return None
    fv_rounds, peer_rounds = fv[0].get("round_ms"), peer.get("round_ms")
    if fv_rounds and peer_rounds and len(fv_rounds) == len(peer_rounds):
        return _median([p / f for p, f in zip(peer_rounds, fv_rounds)]), peer["impl"]
    return peer["ms"] / fv[0]["ms"], peer["impl"]


def _time(ms):
    if ms is None:
        return "n/a"
    # Below 50 us launch overhead dominates: the microseconds say more than the rate.
    return f"{ms * 1e3:.1f} us" if ms < 0.05 else f"{ms:.3f} ms"


def _rate_label(device):
    return "TFLOP/s" if device == "cuda" else "GFLOP/s"


def _rate(record):
    if record.get("tflops") is None:
        return "n/a"
    value = record["tflops"] * (1.0 if record["device"] == "cuda" else 1e3)
    return f"{value:.1f}"


COLUMNS = (("case", 18), ("impl", 15), ("pass", 8), ("time", 11), ("rate", 8), ("peak MB", 9),
           ("max_err", 8))


def table_header(device):
    names = [_rate_label(device) if name == "rate" else name for name, _ in COLUMNS]
    cells = [f"{n:<{w}}" if i < 3 else f"{n:>{w}}" for i, (n, (_, w)) in
             enumerate(zip(names, COLUMNS))]
    return " ".join(cells) + "  vs best peer / note"


def table_row(record, records):
    """One line of the table; flashvision rows end with its speedup over the best peer and the
    kernel that ran."""
    peak = record.get("peak_bytes")
    err = record.get("max_err")
    values = (record["case"], record["impl"], record["pass"], _time(record.get("ms")),
              _rate(record), "n/a" if peak is None else f"{peak / 1e6:.1f}",
              "n/a" if err is None else f"{err:.1e}")
    cells = [f"{v:<{w}}" if i < 3 else f"{v:>{w}}" for i, (v, (_, w)) in
             enumerate(zip(values, COLUMNS))]
    note = ""
    if "error" in record:
        note = record["error"][:90]
    elif record["impl"] in OWN_IMPLS:
        ratio = speedup(records, record["case"], record["pass"], record["impl"])
        note = "n/a" if ratio is None else f"{ratio[0]:.2f}x vs {ratio[1]}"
        if record.get("kernel"):
            note += f", kernel {record['kernel']}"
    return " ".join(cells) + ("  " + note if note else "")
