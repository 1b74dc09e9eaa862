#include "cpu/huge_pages.h"

#ifdef __linux__
#include <sys/mman.h>
#endif

#include "flashvision/tensor.h"

namespace flashvision::detail::cpu {

namespace {

constexpr std::uintptr_t kHugePage = std::uintptr_t{2} << 20;
/// Below this the faults cost little next to the pass, and a range smaller than a few huge pages
/// has few whole ones inside it.
constexpr std::size_t kMinBytes = 8 * kHugePage;

}  // namespace

void advise_huge_pages(void* data, std::size_t bytes) {
#ifdef __linux__
  if (data == nullptr || bytes < kMinBytes) return;
  const std::uintptr_t begin = reinterpret_cast<std::uintptr_t>(data);
  const std::uintptr_t first = (begin + kHugePage - 1) & ~(kHugePage - 1);
  const std::uintptr_t last = (begin + bytes) & ~(kHugePage - 1);
  if (last <= first) return;
  madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
#else
  (void)data;
  (void)bytes;
#endif
}

std::size_t operand_span_bytes(const Problem& p, const Operand& op, int64_t rows, int64_t heads) {
  if (rows == 0 || heads == 0 || p.batch == 0) return 0;
  const int64_t sequences = p.varlen ? 1 : p.batch;
  const int64_t last = (sequences - 1) * op.seq_stride + (rows - 1) * op.row_stride +
                       (heads - 1) * op.head_stride + p.head_dim;
  return static_cast<std::size_t>(last) * element_size(p.dtype);
}

}  // namespace flashvision::detail::cpu
