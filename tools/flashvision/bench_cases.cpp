// The case table of shared/BENCH.md. Keep names and shapes in step with that file.
#include "bench_cases.h"

#include <algorithm>
#include <charconv>

namespace flashvision::tool {

namespace {

std::vector<BenchCase> make_table() {
  std::vector<BenchCase> table;
  // The FlashAttention-paper sweep: 16k tokens in total and H*D = 2048 for every point.
  constexpr int64_t kSweepTokens = 16384;
  constexpr int64_t kSweepWidth = 2048;
  for (int64_t d : {64, 128, 256}) {
    for (int64_t n : {1024, 4096, 16384}) {
      table.push_back({"sweep-d" + std::to_string(d) + "-n" + std::to_string(n),
                       "FA-paper sweep: 16k tokens, H*D = 2048",
                       {kSweepTokens / n, kSweepWidth / d, n, n, d},
                       ""});
    }
  }
  const std::vector<BenchCase> models = {
      {"vit-b16-224", "ViT-B/16 at 224 px", {256, 12, 197, 197, 64}, ""},
      {"vit-l14-336", "ViT-L/14 at 336 px", {64, 16, 577, 577, 64}, ""},
      {"vit-h14-224", "ViT-H/14 at 224 px", {128, 16, 257, 257, 80}, ""},
      {"sd15-self-64", "SD 1.5, 64x64 latent, self", {2, 8, 4096, 4096, 40}, ""},
      {"sd15-cross-64", "SD 1.5, 64x64 latent, cross (77 text tokens)", {2, 8, 4096, 77, 40}, ""},
      {"sd15-self-32", "SD 1.5, 32x32 level, self", {2, 8, 1024, 1024, 80}, ""},
      {"sd15-self-16", "SD 1.5, 16x16 level, self", {2, 8, 256, 256, 160}, ""},
      {"sdxl-self-128", "SDXL, 128x128 latent level, self", {2, 10, 4096, 4096, 64}, ""},
      {"sdxl-cross", "SDXL cross", {2, 10, 4096, 77, 64}, ""},
      {"dit-xl2-512", "DiT-XL/2 at 512 px", {16, 16, 1024, 1024, 72}, ""},
      {"flux-1024", "Flux/SD3-class MMDiT at 1024 px", {1, 24, 4608, 4608, 128}, ""},
      {"flux-2048", "Flux/SD3-class MMDiT at 2048 px", {1, 24, 16896, 16896, 128}, ""},
      {"video-49f-720p", "video DiT, 49 frames 720p", {1, 24, 32760, 32760, 128}, ""},
      {"vae-mid-512",
       "VAE mid-block attention, 512 px (one head of 512)",
       {1, 1, 4096, 4096, 512},
       ""},
  };
  table.insert(table.end(), models.begin(), models.end());
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
