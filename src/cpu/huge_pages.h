// Transparent huge pages for the large outputs a CPU pass writes.
//
// A call's outputs are usually fresh memory (torch.empty, numpy.empty): written for the first
// time inside the pass, each 4 KiB page costs a fault that the kernel serves by zeroing it: for
// ViT-H/14's 168 MB output, 13 ms of a 50-60 ms forward on the 16-core Xeon of BENCH.md. Asked for
// huge pages before the first write, the kernel faults once per 2 MiB where the system allows
// them (transparent_hugepage "madvise" or "always"): the forward through the PyTorch op then took
// 46-51 ms instead of 61-63 (ViT-B/16 37-40 instead of 49-54; bench/results/
// 2026-11-29-xeon16-cpu-v4, call 7).
#pragma once

#include <cstddef>
#include <cstdint>

#include "api/problem.h"

namespace flashvision::detail::cpu {

/// Asks the kernel for huge pages on the whole 2 MiB pages inside [data, data + bytes) when the
/// range is large enough to matter; a hint, so failure (or a system without THP) is ignored.
void advise_huge_pages(void* data, std::size_t bytes);

/// Bytes from the first to one past the last element of `op`, an operand of `rows` rows (total
/// rows in varlen mode) with `heads` heads of the problem's head dim and dtype.
std::size_t operand_span_bytes(const Problem& p, const Operand& op, int64_t rows, int64_t heads);

}  // namespace flashvision::detail::cpu
