"""Progress on stderr when it is a terminal: a tqdm bar when tqdm is importable, else one
rewritten status line. Into a log file nothing is written: the table rows on stdout suffice."""

import sys


class Progress:
    """Counts measurements; `start` names the one under way, `step` marks one done."""

    def __init__(self, total):
        self.total, self.done = total, 0
        self._live = sys.stderr.isatty()
        try:
            from tqdm import tqdm
        except ImportError:
            self._bar = None
        else:  # disable=None: tqdm itself stays silent when stderr is not a terminal
            self._bar = tqdm(total=total, file=sys.stderr, unit="run", dynamic_ncols=True,
                             leave=False, disable=None)

    def start(self, case, impl, pass_):
        label = f"{case} {impl} {pass_}"
        if self._bar is not None:
            self._bar.set_description_str(label)
        elif self._live:
            sys.stderr.write(f"\r[{self.done}/{self.total}] {label:<60}")
            sys.stderr.flush()

    def step(self):
        self.done += 1
        if self._bar is not None:
            self._bar.update(1)

    def write(self, line):
        """Prints a line to stdout without tearing the bar."""
        if self._bar is not None and not self._bar.disable:
            self._bar.write(line, file=sys.stdout)
            sys.stdout.flush()
        else:
            self._clear()
            print(line, flush=True)

    def close(self):
        if self._bar is not None:
            self._bar.close()
        else:
            self._clear()

    def _clear(self):
        if self._live:
            sys.stderr.write("\r" + " " * 80 + "\r")
            sys.stderr.flush()
