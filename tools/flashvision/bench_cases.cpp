// Case lookup over the table compiled in from python/flashvision/bench/cases.txt (see
// bench_cases.cmake), the quick subset, shape parsing and FLOP counts.
#include "bench_cases.h"

#include <algorithm>
#include <charconv>
#include <utility>

#include "bench_case_table.h"

namespace flashvision::tool {

namespace {

std::vector<BenchCase> make_table() {
  std::vector<BenchCase> table;
  for (const generated::CaseRow& row : generated::kCaseRows) {
    BenchCase c;
    c.name = row.name;
    c.what = row.what;
    c.shape = {row.shape[0], row.shape[1], row.shape[2], row.shape[3], row.shape[4]};
    c.forward_only = row.forward_only;
    table.push_back(std::move(c));
  }
  return table;
}

}  // namespace

const std::vector<BenchCase>& bench_cases() {
  static const std::vector<BenchCase> table = make_table();
  return table;
}

const BenchCase* find_case(std::string_view name) {
  for (const BenchCase& c : bench_cases()) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

std::vector<BenchCase> quick_cases(bool reduce_batch) {
  // Image-model shapes that cover short sequences, cross attention and odd head dims (40, 72,
  // 160). The batch sizes below keep each call to a few GFLOP so that two CPU cores finish the
  // whole set, naive path included, in well under a minute.
  struct QuickPick {
    const char* name;
    int64_t cpu_batch;
  };
  constexpr QuickPick kPicks[] = {{"vit-b16-224", 8},  {"vit-l14-336", 2},  {"sd15-cross-64", 2},
                                  {"sd15-self-32", 2}, {"sd15-self-16", 2}, {"dit-xl2-512", 1}};
  std::vector<BenchCase> picked;
  for (const QuickPick& pick : kPicks) {
    BenchCase c = *find_case(pick.name);
    if (reduce_batch && pick.cpu_batch < c.shape.batch) {
      c.note = "quick run: B reduced from " + std::to_string(c.shape.batch) + " to " +
               std::to_string(pick.cpu_batch);
      c.shape.batch = pick.cpu_batch;
    }
    picked.push_back(c);
  }
  return picked;
}

std::optional<Shape> parse_shape(std::string_view text) {
  int64_t values[5] = {};
  std::size_t pos = 0;
  for (int i = 0; i < 5; ++i) {
    const std::size_t end = (i < 4) ? text.find(',', pos) : text.size();
    if (end == std::string_view::npos || end == pos) return std::nullopt;
    const std::string_view field = text.substr(pos, end - pos);
    const auto [ptr, ec] = std::from_chars(field.data(), field.data() + field.size(), values[i]);
    if (ec != std::errc() || ptr != field.data() + field.size() || values[i] <= 0)
      return std::nullopt;
    pos = end + 1;
  }
  // Element and score counts must stay far inside int64 (the double products only bound them).
  const Shape shape{values[0], values[1], values[2], values[3], values[4]};
  const double bh = static_cast<double>(shape.batch) * static_cast<double>(shape.heads);
  const double longest = static_cast<double>(std::max(shape.seqlen_q, shape.seqlen_k));
  constexpr double kLimit = 0x1p60;
  if (bh * longest * static_cast<double>(shape.head_dim) > kLimit ||
      bh * static_cast<double>(shape.seqlen_q) * static_cast<double>(shape.seqlen_k) > kLimit) {
    return std::nullopt;
  }
  return shape;
}

std::string format_shape(const Shape& s) {
  return std::to_string(s.batch) + "x" + std::to_string(s.heads) + "x" +
         std::to_string(s.seqlen_q) + "x" + std::to_string(s.seqlen_k) + "x" +
         std::to_string(s.head_dim);
}

double forward_flops(const Shape& s, bool causal) {
  const double flops = 4.0 * static_cast<double>(s.batch) * static_cast<double>(s.heads) *
                       static_cast<double>(s.seqlen_q) * static_cast<double>(s.seqlen_k) *
                       static_cast<double>(s.head_dim);
  return causal ? flops / 2 : flops;
}

}  // namespace flashvision::tool
