// The results file of shared/BENCH.md: {"meta": {...}, "records": [...]}.
#pragma once

#include <string>
#include <vector>

#include "bench_record.h"
#include "run_meta.h"

namespace flashvision::tool {

/// The results document: meta first, then one record per line.
std::string results_json(const RunMeta& meta, const std::vector<BenchRecord>& records);

/// Writes results_json() to `path`; throws flashvision::Error naming the path when it cannot.
void write_results_json(const std::string& path, const RunMeta& meta,
                        const std::vector<BenchRecord>& records);

}  // namespace flashvision::tool
