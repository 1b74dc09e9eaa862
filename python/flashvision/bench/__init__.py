"""``python -m flashvision.bench``: flashvision against PyTorch's attention backends, same run.

Times flashvision, every ``torch.nn.attention.SDPBackend`` (math, flash, efficient, cuDNN; on the
CPU PyTorch's own CPU kernel) and a naive ``softmax(q k^T * scale) v`` on the cases of
shared/BENCH.md, on the same inputs, and writes a table, a results JSON (BENCH.md format) and PNG
plots. Run ``python -m flashvision.bench --help`` for the options.

Modules: cases (shape set, FLOPs), inputs (random inputs, float64 reference rows), impls (the
callables under test), timing, memory, runner (one measurement -> one record), records (meta,
JSON, table), telemetry (the GPU's clock and power during each timing), plots, cli (arguments
and the main loop), timelines (the sm90 forward's diagnostic event timelines, read and reported:
``python -m flashvision.bench.timelines``).
"""

from .cli import main

__all__ = ["main"]
