// The human-readable results table printed by `flashvision bench`.
#pragma once

#include <ostream>
#include <vector>

#include "bench_record.h"

namespace flashvision::tool {

/// Prints one line per record (GFLOP/s on the CPU, TFLOP/s on a GPU) and the records' notes.
void print_table(std::ostream& out, const std::vector<BenchRecord>& records);

}  // namespace flashvision::tool
