// The benchmark shapes of shared/BENCH.md, looked up by case name. The table itself is
// python/flashvision/bench/cases.txt (shared with `python -m flashvision.bench`), compiled in.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace flashvision::tool {

/// B x H x Nq x Nk x D of one attention call (Hkv = H).
struct Shape {
  int64_t batch = 0;     ///< B
  int64_t heads = 0;     ///< H
  int64_t seqlen_q = 0;  ///< Nq
  int64_t seqlen_k = 0;  ///< Nk
  int64_t head_dim = 0;  ///< D
};

/// One named benchmark case.
struct BenchCase {
  std::string name;  ///< the case name results use ("vit-b16-224", "custom" for --shape)
  std::string what;  ///< what the shape comes from
  Shape shape;
  std::string note;  ///< set when the shape differs from the table (e.g. a reduced batch)
  /// BENCH.md times only the forward of this case: --backward skips its fwd+bwd (here and in
  /// `python -m flashvision.bench`).
  bool forward_only = false;
};

/// Every case of the BENCH.md table, in table order.
const std::vector<BenchCase>& bench_cases();

/// The case called `name`, or nullptr.
const BenchCase* find_case(std::string_view name);

/// The short default run. With `reduce_batch` (CPU), batches are cut so that the run ends in well
/// under a minute on two cores; the note of each reduced case says so.
std::vector<BenchCase> quick_cases(bool reduce_batch);

/// Parses "B,H,Nq,Nk,D" (five positive integers); nullopt when malformed or when the element or
/// score count would pass 2^60.
std::optional<Shape> parse_shape(std::string_view text);

/// "BxHxNqxNkxD".
std::string format_shape(const Shape& shape);

/// FLOPs of one forward pass: 4 B H Nq Nk D, halved under the causal mask (BENCH.md).
double forward_flops(const Shape& shape, bool causal);

}  // namespace flashvision::tool
