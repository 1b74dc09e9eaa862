// Parser of `flashvision bench` flags: "--flag value" and "--flag=value" both work.
#include "cli_options.h"

#include <charconv>
#include <string_view>
#include <utility>

namespace flashvision::tool {

namespace {

/// Walks the argument list; hands out flag values and names the flag in every error.
class ArgCursor {
 public:
  explicit ArgCursor(std::span<const std::string> args) : args_(args) {}

  bool done() const { return index_ >= args_.size(); }

  /// The next flag name; an inline "=value" is kept for value().
  std::string next_flag() {
    std::string arg = args_[index_++];
    inline_value_.reset();
    if (const std::size_t eq = arg.find('='); arg.starts_with("--") && eq != std::string::npos) {
      inline_value_ = arg.substr(eq + 1);
      arg.resize(eq);
    }
    flag_ = arg;
    return arg;
  }

  /// The value of the current flag.
  std::string value(std::string_view expected) {
    if (inline_value_) return *std::exchange(inline_value_, std::nullopt);
    if (done()) throw UsageError(flag_ + " needs a value: " + std::string(expected));
    if (args_[index_].starts_with("--")) {
      throw UsageError(flag_ + " needs a value: " + std::string(expected) + " (got option '" +
                       args_[index_] + "')");
    }
    return args_[index_++];
  }

  /// Throws when a switch was written with "=value".
  void no_value() const {
    if (inline_value_) throw UsageError(flag_ + " takes no value (got '" + *inline_value_ + "')");
  }

  int64_t integer(std::string_view expected, int64_t min_value) {
    const std::string text = value(expected);
    int64_t result = 0;
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), result);
    if (ec != std::errc() || ptr != text.data() + text.size() || result < min_value) {
      throw UsageError(flag_ + " expects " + std::string(expected) + ", got '" + text + "'");
    }
    return result;
  }

  double positive_number(std::string_view expected) {
    const std::string text = value(expected);
    double result = 0;
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), result);
    if (ec != std::errc() || ptr != text.data() + text.size() || !(result > 0)) {
      throw UsageError(flag_ + " expects " + std::string(expected) + ", got '" + text + "'");
    }
    return result;
  }

 private:
  std::span<const std::string> args_;
  std::size_t index_ = 0;
  std::string flag_;
  std::optional<std::string> inline_value_;
};

void add_cases(const std::string& name, std::vector<BenchCase>& cases) {
  if (name == "all") {
    cases.insert(cases.end(), bench_cases().begin(), bench_cases().end());
    return;
  }
  const BenchCase* found = find_case(name);
  if (found == nullptr) {
    throw UsageError("--case: unknown case '" + name +
                     "'; expected a name from 'flashvision bench --list' or 'all'");
  }
  cases.push_back(*found);
}

DType parse_dtype(const std::string& text) {
  if (text == "f32") return DType::f32;
  if (text == "bf16") return DType::bf16;
  if (text == "f16") return DType::f16;
  throw UsageError("--dtype expects f32, bf16 or f16, got '" + text + "'");
}

DeviceChoice parse_device(const std::string& text) {
  if (text == "auto") return DeviceChoice::automatic;
  if (text == "cpu") return DeviceChoice::cpu;
  if (text == "cuda") return DeviceChoice::cuda;
  throw UsageError("--device expects auto, cpu or cuda, got '" + text + "'");
}

Backend parse_kernel(const std::string& flag, const std::string& text) {
  if (text == "auto") return Backend::automatic;
  if (text == "sm80") return Backend::cuda_sm80;
  if (text == "sm90") return Backend::cuda_sm90;
  throw UsageError(flag + " expects auto, sm80 or sm90, got '" + text + "'");
}

}  // namespace

BenchOptions parse_bench_options(std::span<const std::string> args) {
  BenchOptions options;
  ArgCursor cursor(args);
  while (!cursor.done()) {
    const std::string flag = cursor.next_flag();
    if (flag == "--case") {
      add_cases(cursor.value("a case name (see --list) or 'all'"), options.cases);
    } else if (flag == "--shape") {
      const std::string text = cursor.value("B,H,Nq,Nk,D");
      const std::optional<Shape> shape = parse_shape(text);
      if (!shape) {
        throw UsageError(
            "--shape expects B,H,Nq,Nk,D as five positive integers of a representable size "
            "(e.g. 2,8,4096,77,40), got '" +
            text + "'");
      }
      options.cases.push_back({"custom", "--shape " + text, *shape, ""});
    } else if (flag == "--device") {
      options.device = parse_device(cursor.value("auto, cpu or cuda"));
    } else if (flag == "--dtype") {
      options.dtype = parse_dtype(cursor.value("f32, bf16 or f16"));
    } else if (flag == "--json") {
      options.json_path = cursor.value("an output file path");
    } else if (flag == "--repeat") {
      options.repeat = static_cast<int>(cursor.integer("a positive integer", 1));
    } else if (flag == "--warmup") {
      options.warmup = static_cast<int>(cursor.integer("an integer >= 0", 0));
    } else if (flag == "--budget") {
      options.budget_s = cursor.positive_number("a positive number of seconds");
    } else if (flag == "--threads") {
      options.threads = static_cast<int>(cursor.integer("a positive integer", 1));
    } else if (flag == "--naive-cap-mb") {
      options.naive_cap_mb = cursor.positive_number("a positive number of MB");
    } else if (flag == "--kernel" || flag == "--backward-kernel") {
      const Backend kernel = parse_kernel(flag, cursor.value("auto, sm80 or sm90"));
      (flag == "--kernel" ? options.kernel : options.backward_kernel) = kernel;
    } else if (flag == "--seed") {
      options.seed = static_cast<uint64_t>(cursor.integer("an integer >= 0", 0));
    } else if (flag == "--backward" || flag == "--causal" || flag == "--no-naive" ||
               flag == "--list" || flag == "--help" || flag == "-h") {
      cursor.no_value();
      if (flag == "--backward") options.backward = true;
      if (flag == "--causal") options.causal = true;
      if (flag == "--no-naive") options.naive = false;
      if (flag == "--list") options.list = true;
      if (flag == "--help" || flag == "-h") options.help = true;
    } else {
      throw UsageError("unknown option '" + flag +
                       "' for 'flashvision bench' (see 'flashvision bench --help')");
    }
  }
  options.quick = options.cases.empty();
  return options;
}

std::string bench_usage() {
  return R"(usage: flashvision bench [options]

Times flashvision against a naive attention that materializes S = q k^T (fp32 compute) on the
cases of shared/BENCH.md, and checks both against float64 reference rows.

  --case NAME         a case from --list, or 'all' (repeatable)
  --shape B,H,Nq,Nk,D a custom shape, recorded as case "custom" (repeatable)
  --device D          auto (default: the GPU when built with CUDA and one is present), cpu, cuda
  --dtype T           f32, bf16, f16 (default: bf16 on cuda, f32 on cpu)
  --causal            bottom-right aligned causal mask (FLOPs are halved)
  --backward          also time forward+backward and check dq, dk, dv
  --json FILE         write the results JSON of BENCH.md to FILE
  --repeat N          at most N timed calls per measurement (at least min(3, N) run)
  --warmup N          at most N warm-up calls per measurement
  --budget S          stop repeating a measurement after S seconds
                      (default 2.5; 1 for the quick set)
  --kernel K          CUDA forward kernel: auto (default: sm90 on Hopper where it applies), sm80
                      or sm90
  --backward-kernel K CUDA backward kernel: auto (default: sm90 on Hopper where it applies and
                      the grid fills the GPU), sm80 or sm90
  --threads N         CPU threads for flashvision, naive and reference (default: all)
  --naive-cap-mb MB   skip the naive path when its S buffers would pass MB
                      (default 4096 on cpu, 32768 on cuda)
  --no-naive          do not run the naive path
  --seed N            seed of the random inputs (default 1)
  --list              print the case names and shapes, then exit

With neither --case nor --shape, a quick subset of image cases runs (batch reduced on the CPU;
the records carry the batch that ran). max_err is the largest absolute difference from float64
rows recomputed from the same (rounded) inputs on a sample of (b, h, row) triples.
)";
}

}  // namespace flashvision::tool
