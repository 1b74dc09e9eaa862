"""The GPU's SM clock, board power and clock-event reasons during each measurement (--telemetry).

nvidia-smi samples them every 50 ms in a child process for the whole run; each measurement keeps
its wall-clock window, and at the end of the run every record gets the mean clock and power of
the samples inside its window and the reasons the driver gave for holding the clock down. On the
H200 every long forward runs at the board's power limit with the SM clock hundreds of MHz below
its maximum (bench/results/2026-12-01-s21): a rate then depends on how much energy each FLOP
costs, and these fields say so beside it.
"""

import datetime
import shutil
import subprocess
import threading
import time

import torch

from .records import COLUMNS

QUERY = "timestamp,clocks.sm,{power},{reasons}"
# (power, reasons) fields, best first. power.draw is the driver's mean over the last second on
# Ampere and newer, too slow for timings of a fraction of one; power.draw.instant (r530 and newer)
# is not. Drivers before r535 know the reasons only by their older name.
FIELD_CHOICES = (("power.draw.instant", "clocks_event_reasons.active"),
                 ("power.draw", "clocks_event_reasons.active"),
                 ("power.draw", "clocks_throttle_reasons.active"))
PERIOD_MS = 50

# Bits of nvidia-smi's clocks_event_reasons.active (NVML's nvmlClocksEventReason* constants).
REASON_BITS = {
    0x1: "idle",
    0x2: "applications clocks",
    0x4: "power cap",
    0x8: "hardware slowdown",
    0x10: "sync boost",
    0x20: "software thermal",
    0x40: "hardware thermal",
    0x80: "power brake",
    0x100: "display clocks",
}


def reason_names(mask):
    """The names of the reasons set in `mask`, lowest bit first; unknown bits as hex."""
    names = []
    bit = 1
    while bit <= mask:
        if mask & bit:
            names.append(REASON_BITS.get(bit, hex(bit)))
        bit <<= 1
    return names


def parse_sample(line):
    """(seconds since the epoch, SM MHz, watts, reason mask) from one line of nvidia-smi's
    "csv,noheader,nounits" output, or None for a line that is not a full sample (a message, or
    "[N/A]" where this GPU does not report a value). The timestamp is the machine's local time,
    as nvidia-smi prints it."""
    fields = [f.strip() for f in line.split(",")]
    if len(fields) != 4:
        return None
    try:
        when = datetime.datetime.strptime(fields[0], "%Y/%m/%d %H:%M:%S.%f").timestamp()
        return when, float(fields[1]), float(fields[2]), int(fields[3], 16)
    except ValueError:
        return None


def summarize(samples, start, end):
    """{"sm_mhz", "watts", "clock_events", "samples"} over the samples taken from `start` to `end`
    (seconds since the epoch): mean clock and power, and every reason any of them gave; None when
    no sample fell inside (a measurement shorter than the sampling period)."""
    inside = [s for s in samples if start <= s[0] <= end]
    if not inside:
        return None
    mask = 0
    for s in inside:
        mask |= s[3]
    return {"sm_mhz": round(sum(s[1] for s in inside) / len(inside)),
            "watts": round(sum(s[2] for s in inside) / len(inside), 1),
            "clock_events": reason_names(mask),
            "samples": len(inside)}


def device_selectors(device_index):
    """nvidia-smi -i arguments that may name CUDA device `device_index`, best first: its UUID
    where torch reports one (CUDA's and nvidia-smi's device orders may differ), then the index."""
    uuid = getattr(torch.cuda.get_device_properties(device_index), "uuid", None)
    return ([f"GPU-{uuid}"] if uuid else []) + [str(device_index)]


class TelemetryError(RuntimeError):
    """nvidia-smi is missing or cannot report the fields."""


def query_command(executable, selector, fields, period_ms=None):
    """nvidia-smi's command for `fields` of one device: once, or every `period_ms` ms."""
    loop = ["-lms", str(period_ms)] if period_ms else []
    return [executable, "-i", selector, "--query-gpu=" + fields,
            "--format=csv,noheader,nounits"] + loop


def _query_once(executable, selector, fields):
    """(return code, output lines) of one query."""
    try:
        result = subprocess.run(query_command(executable, selector, fields),
                                capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError) as exc:
        return -1, [str(exc)]
    return result.returncode, (result.stdout + result.stderr).strip().splitlines()


def _working_query(executable, selectors):
    """(selector, fields, power field) of the first device selector and FIELD_CHOICES entry with
    which this driver's nvidia-smi answers a full sample."""
    last = "no output"
    for selector in selectors:
        for power, reasons in FIELD_CHOICES:
            fields = QUERY.format(power=power, reasons=reasons)
            code, lines = _query_once(executable, selector, fields)
            if code == 0 and lines and parse_sample(lines[0]) is not None:
                return selector, fields, power
            last = lines[0] if lines else f"exit status {code}"
    raise TelemetryError(f"{executable} reports no clock, power and clock-event reasons for "
                         f"device {' or '.join(selectors)}: {last}")


def _limits(executable, selector):
    """{"power_limit_w", "max_sm_mhz"} of the device, with None for what it does not report."""
    code, lines = _query_once(executable, selector, "power.limit,clocks.max.sm")
    values = [None, None]
    if code == 0 and lines:
        for i, text in enumerate(lines[0].split(",")[:2]):
            try:
                values[i] = float(text)
            except ValueError:
                pass
    return {"power_limit_w": values[0], "max_sm_mhz": values[1]}


class Sampler:
    """nvidia-smi sampling one GPU in the background, and the windows of the measurements."""

    def __init__(self, selectors, executable="nvidia-smi", period_ms=PERIOD_MS):
        found = shutil.which(executable)
        if found is None:
            raise TelemetryError(f"{executable} is not on PATH")
        selector, fields, power = _working_query(found, selectors)
        self.meta = {"source": "nvidia-smi", "device": selector, "period_ms": period_ms,
                     "power_field": power, **_limits(found, selector)}
        self._samples = []
        self._windows = []
        self._lock = threading.Lock()
        self._process = subprocess.Popen(query_command(found, selector, fields, period_ms),
                                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                         text=True)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self):
        for line in self._process.stdout:
            sample = parse_sample(line)
            if sample is not None:
                with self._lock:
                    self._samples.append(sample)

    def window(self, record, start, end):
        """Marks `record` as measured from `start` to `end` (time.time())."""
        self._windows.append((record, start, end))

    def close(self):
        """Stops sampling and sets each marked record's "gpu_telemetry" (None where no sample fell
        inside its window). nvidia-smi writes through a pipe in blocks, so the samples are only
        complete once it has exited."""
        if self._process.poll() is None:
            # The last window must end before the last sample is taken.
            time.sleep(2 * self.meta["period_ms"] / 1e3)
            self._process.terminate()
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        self._reader.join(timeout=10)
        with self._lock:
            samples = list(self._samples)
        for record, start, end in self._windows:
            record["gpu_telemetry"] = summarize(samples, start, end)
        self._windows = []


def telemetry_row(record):
    """One line of the end-of-run table: the record's name (as the results table's first three
    columns have it), clock, power and reasons."""
    name = " ".join(f"{record[key]:<{width}}" for key, width in COLUMNS[:3])
    t = record.get("gpu_telemetry")
    if t is None:
        return f"{name} {'n/a':>8}"
    events = ", ".join(e for e in t["clock_events"] if e != "idle") or "none"
    return f"{name} {t['sm_mhz']:>4} MHz {t['watts']:>6.1f} W  clock held by: {events}"
