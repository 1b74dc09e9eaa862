"""PNG plots of a run (matplotlib, Agg backend: no display needed).

- tflops_by_case.png: rate per case, one bar per implementation (fwd, and fwd+bwd if measured).
- memory_vs_resolution.png, time_vs_resolution.png: the resolution sweep, naive vs flashvision,
  with the points where naive was skipped or failed marked at the bottom of the axis.
"""

import os

SWEEP_IMPLS = ("naive", "flashvision")


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _rate_scale(device):
    return (1.0, "TFLOP/s") if device == "cuda" else (1e3, "GFLOP/s")


def plot_rates(plt, records, impls, device, path):
    passes = [p for p in ("fwd", "fwd+bwd") if any(r["pass"] == p for r in records)]
    cases = list(dict.fromkeys(r["case"] for r in records))
    factor, unit = _rate_scale(device)
    width = 0.8 / max(1, len(impls))
    fig, axes = plt.subplots(len(passes), 1, squeeze=False,
                             figsize=(max(8.0, 0.9 * len(cases) + 2), 4.5 * len(passes)))
    for ax, pass_ in zip(axes[:, 0], passes):
        for i, impl in enumerate(impls):
            values = []
            for case in cases:
                hit = [r for r in records if r["case"] == case and r["impl"] == impl
                       and r["pass"] == pass_ and r.get("tflops")]
                values.append(hit[0]["tflops"] * factor if hit else 0.0)  # n/a: no bar
            xs = [c + (i - (len(impls) - 1) / 2) * width for c in range(len(cases))]
            ax.bar(xs, values, width, label=impl)
        ax.set_xticks(range(len(cases)))
        ax.set_xticklabels(cases, rotation=40, ha="right", fontsize=8)
        ax.set_ylabel(unit)
        ax.set_title(f"{pass_}: {unit} per case (higher is better; no bar = n/a)")
        ax.grid(axis="y", alpha=0.3)
        ax.legend(fontsize=7, ncol=3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_sweep(plt, records, key, ylabel, title, path):
    """`key` of naive and flashvision against the latent side; failures as x at the bottom."""
    fig, ax = plt.subplots(figsize=(7, 4.5))
    sides = sorted({r["side"] for r in records})
    for impl, style in zip(SWEEP_IMPLS, ("o-", "s-")):
        ok = [(r["side"], r[key]) for r in records
              if r["impl"] == impl and r.get(key) is not None]
        if ok:
            ax.plot(*zip(*ok), style, label=impl)
        failed = [r["side"] for r in records if r["impl"] == impl and "error" in r]
        if failed:
            # x in data, y in axes coordinates: the marks sit on the bottom of the log axis.
            ax.plot(failed, [0.03] * len(failed), "x", color="red", markersize=10,
                    transform=ax.get_xaxis_transform(), label=f"{impl}: skipped / out of memory")
    if key == "peak_mb":  # symlog: a peak of 0 (CPU RSS that did not grow) still shows
        ax.set_yscale("symlog", linthresh=0.1)
    else:
        ax.set_yscale("log")
    ax.set_xticks(sides)
    ax.set_xticklabels([f"{s}\n({s * s} tok)" for s in sides], fontsize=7)
    ax.set_xlabel("latent side s (tokens N = s^2), B=1, H=8, D=40")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    if ax.get_legend_handles_labels()[0]:  # empty when nothing measurable (tiny CPU peaks)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write_plots(directory, records, sweep_records, impls, device):
    """Writes the PNGs into `directory`; returns their paths (none if matplotlib is missing)."""
    try:
        plt = _pyplot()
    except ImportError:
        return []
    os.makedirs(directory, exist_ok=True)
    paths = []
    if records:
        path = os.path.join(directory, "tflops_by_case.png")
        plot_rates(plt, records, impls, device, path)
        paths.append(path)
    if sweep_records:
        rows = [dict(r, side=int(round(r["Nq"] ** 0.5)),
                     peak_mb=None if r.get("peak_bytes") is None else r["peak_bytes"] / 1e6)
                for r in sweep_records if r["pass"] == "fwd"]
        for key, ylabel, name in (("peak_mb", "peak extra memory (MB)", "memory"),
                                  ("ms", "time (ms)", "time")):
            path = os.path.join(directory, f"{name}_vs_resolution.png")
            title = f"SD self-attention on {device}: {ylabel} vs resolution"
            plot_sweep(plt, rows, key, ylabel, title, path)
            paths.append(path)
    return paths
