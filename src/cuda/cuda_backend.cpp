// The CUDA backend's host side: support checks, kernel parameters from a Problem, the backward
// workspace (stream-ordered, so no device-wide synchronization) and device descriptions.
#include "cuda/cuda_backend.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "api/env_option.h"
#include "cuda/common/cuda_check.h"
#include "cuda/common/fwd_combine.h"
#include "cuda/common/fwd_split.h"
#include "cuda/common/negate_keys.h"
#include "cuda/sm80/bwd_split.h"
#include "cuda/sm80/bwd_tail_pdl.h"
#include "cuda/sm80/dispatch.h"
#include "cuda/sm80/dq_layout.h"
#include "cuda/sm80/kv_layout.h"
#include "cuda/sm80/params.h"
#include "cuda/sm80/tile_config.h"
#include "flashvision/error.h"
#ifdef FLASHVISION_HAVE_SM90
#include "cuda/sm90/bwd_config.h"
#include "cuda/sm90/dispatch.h"
#include "cuda/sm90/fp8_values.h"
#include "cuda/sm90/fwd_timeline_layout.h"
#include "cuda/sm90/params.h"
#include "cuda/sm90/tensor_maps.h"
#include "cuda/sm90/tile_config.h"
#endif

namespace flashvision::detail {
namespace {

/// Makes problem.device_index current for the lifetime of the guard and restores the previous one.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device) {
    cuda_check(cudaGetDevice(&previous_), "cudaGetDevice");
    if (device != previous_) cuda_check(cudaSetDevice(device), "cudaSetDevice");
  }
  ~DeviceGuard() {
    int current = previous_;
    if (cudaGetDevice(&current) == cudaSuccess && current != previous_) cudaSetDevice(previous_);
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = 0;
};

sm80::TensorParams tensor_params(const Operand& op) {
  return {op.data, op.seq_stride, op.row_stride, op.head_stride};
}

sm80::ShapeParams shape_params(const Problem& p) {
  sm80::ShapeParams s;
  s.batch = static_cast<int>(p.batch);
  s.heads = static_cast<int>(p.heads);
  s.heads_kv = static_cast<int>(p.heads_kv);
  s.group = static_cast<int>(p.group_size());
  s.head_dim = static_cast<int>(p.head_dim);
  s.seqlen_q = static_cast<int>(p.seqlen_q);
  s.seqlen_k = static_cast<int>(p.seqlen_k);
  s.total_q = p.varlen ? p.total_q : p.batch * p.seqlen_q;
  s.total_k = p.varlen ? p.total_k : p.batch * p.seqlen_k;
  s.cu_seqlens_q = p.varlen ? p.cu_seqlens_q : nullptr;
  s.cu_seqlens_k = p.varlen ? p.cu_seqlens_k : nullptr;
  s.scale = p.scale;
  s.scale_log2 = p.scale * static_cast<float>(M_LOG2E);
  s.causal = p.causal;
  return s;
}

/// Why `op` cannot be read with 16-byte cp.async, or empty when it can.
// Messages are built with std::string rather than iostreams: inside a Python process that loaded
// PyTorch first, formatting numbers through our copy of the ostream templates crashed (a locale
// facet id resolved to another library's), so this library keeps iostreams out entirely.
std::string alignment_problem(const char* name, const Operand& op) {
  if (reinterpret_cast<std::uintptr_t>(op.data) % 16 != 0) {
    return std::string(name) + " data pointer is not 16-byte aligned";
  }
  if (op.seq_stride % 8 != 0 || op.row_stride % 8 != 0 || op.head_stride % 8 != 0) {
    return std::string(name) + " strides (sequence " + std::to_string(op.seq_stride) + ", row " +
           std::to_string(op.row_stride) + ", head " + std::to_string(op.head_stride) +
           ") must be multiples of 8 elements for 16-byte copies";
  }
  return {};
}

/// Why `path` cannot take p's dtype or head dim (f16/bf16, a multiple of 8 up to max_head_dim,
/// in a compiled bucket), or empty.
std::string element_problem(const Problem& p, const char* path, int64_t max_head_dim, int bucket,
                            bool bucket_compiled, const char* compiled_text) {
  if (p.dtype != DType::f16 && p.dtype != DType::bf16) {
    return std::string(path) + " supports f16 and bf16, got " + to_string(p.dtype);
  }
  if (p.head_dim % 8 != 0 || p.head_dim > max_head_dim) {
    return std::string(path) + " needs a head dim that is a multiple of 8 up to " +
           std::to_string(max_head_dim) + ", got " + std::to_string(p.head_dim);
  }
  if (!bucket_compiled) {
    return "head dim " + std::to_string(p.head_dim) + " needs bucket " + std::to_string(bucket) +
           ", which this build did not compile (compiled: " + compiled_text +
           "; see FLASHVISION_HEAD_DIMS)";
  }
  return {};
}

/// Why q, k, v or out cannot be read or written with 16-byte accesses, or empty.
std::string forward_alignment_problem(const Problem& p) {
  std::string bad;
  for (const auto& [name, op] : {std::pair{"q", &p.q}, {"k", &p.k}, {"v", &p.v}, {"out", &p.out}}) {
    if (bad.empty()) bad = alignment_problem(name, *op);
  }
  return bad;
}

bool fail(std::string* why, const std::string& message) {
  if (why != nullptr) *why = message;
  return false;
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// What the support checks need to know about a device, queried once per device.
struct DeviceInfo {
  int major = 0;
  int minor = 0;
  int smem_optin = 0;   ///< shared memory a block may opt into, bytes
  int smem_per_sm = 0;  ///< shared memory of one SM, bytes (CTAs sharing an SM split it)
  int sm_count = 0;     ///< streaming multiprocessors (persistent grids)
  int l2_bytes = 0;     ///< L2 cache size
};

DeviceInfo device_info(int device) {
  static std::mutex mutex;
  static std::map<int, DeviceInfo> cache;
  const std::lock_guard<std::mutex> lock(mutex);
  auto found = cache.find(device);
  if (found != cache.end()) return found->second;
  DeviceInfo info;
  cudaDeviceGetAttribute(&info.major, cudaDevAttrComputeCapabilityMajor, device);
  cudaDeviceGetAttribute(&info.minor, cudaDevAttrComputeCapabilityMinor, device);
  cudaDeviceGetAttribute(&info.smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
  cudaDeviceGetAttribute(&info.smem_per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, device);
  cudaDeviceGetAttribute(&info.sm_count, cudaDevAttrMultiProcessorCount, device);
  cudaDeviceGetAttribute(&info.l2_bytes, cudaDevAttrL2CacheSize, device);
  cache.emplace(device, info);
  return info;
}

/// Whether kernels on `device` may launch as programmatic dependents of the kernel ahead of them
/// (PTX griddepcontrol: compute capability 9.0 and up), starting on the SMs it frees.
bool programmatic_dependents(int device) { return device_info(device).major >= 9; }

/// Why the device of `p` is not usable, or empty.
std::string device_problem(const Problem& p) {
  const int devices = cuda_device_count();
  if (p.device_index < 0 || p.device_index >= devices) {
    return "CUDA device " + std::to_string(p.device_index) + " not found (" +
           std::to_string(devices) + " devices)";
  }
  return {};
}

}  // namespace

int cuda_device_count() noexcept {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no driver/device" status
    return 0;
  }
  return count;
}

std::vector<std::string> cuda_device_descriptions() {
  std::vector<std::string> lines;
  const int count = cuda_device_count();
  int driver = 0;
  cudaDriverGetVersion(&driver);
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, i) != cudaSuccess) continue;
    char line[sizeof(prop.name) + 128];
    std::snprintf(line, sizeof(line), "cuda:%d %s (sm_%d%d, %d SMs, %.1f GiB, driver %d.%d)", i,
                  prop.name, prop.major, prop.minor, prop.multiProcessorCount,
                  static_cast<double>(prop.totalGlobalMem) / (1024.0 * 1024.0 * 1024.0),
                  driver / 1000, (driver % 1000) / 10);
    lines.emplace_back(line);
  }
  return lines;
}

bool cuda_supports(const Problem& p, bool backward, std::string* why) {
  const int bucket = sm80::head_dim_bucket(p.head_dim);
  const char* path = backward ? "the sm80 backward" : "the sm80 forward";
  if (std::string bad =
          element_problem(p, path, backward ? sm80::kBwdMaxHeadDim : sm80::kFwdMaxHeadDim, bucket,
                          sm80::bucket_compiled(bucket), sm80::compiled_buckets_text());
      !bad.empty()) {
    return fail(why, bad);
  }
  std::string bad = forward_alignment_problem(p);
  if (backward) {
    for (const auto& [name, op] :
         {std::pair{"dout", &p.dout}, {"dq", &p.dq}, {"dk", &p.dk}, {"dv", &p.dv}}) {
      if (bad.empty()) bad = alignment_problem(name, *op);
    }
  }
  if (!bad.empty()) return fail(why, bad);
  // The forward's CTA count at the fewest rows per CTA of its tile variants.
  const int variant_rows = sm80::fwd_tile(bucket, 1).block_m;
  const int fwd_rows = variant_rows > 0 ? std::min(variant_rows, sm80::fwd_tile(bucket).block_m)
                                        : sm80::fwd_tile(bucket).block_m;
  const int64_t tile_m = backward ? sm80::bwd_tile(bucket).block_n : fwd_rows;
  const int64_t rows = backward ? p.seqlen_k : p.seqlen_q;
  const int64_t heads = backward ? p.heads_kv : p.heads;
  if (ceil_div(rows, tile_m) * p.batch * heads > INT32_MAX) {
    return fail(why, "the problem needs more than 2^31 CTAs");
  }
  if (std::string device = device_problem(p); !device.empty()) return fail(why, device);
  const DeviceInfo info = device_info(p.device_index);
  const int major = info.major, smem_optin = info.smem_optin;
  if (major < 8) {
    return fail(why, "the sm80 path needs compute capability 8.0 or newer, device " +
                         std::to_string(p.device_index) + " has " + std::to_string(major) + ".x");
  }
  const std::size_t smem = backward ? sm80::bwd_smem_bytes(bucket) : sm80::fwd_smem_bytes(bucket);
  if (smem > static_cast<std::size_t>(smem_optin)) {
    return fail(why, std::string(path) + " of head dim bucket " + std::to_string(bucket) +
                         " needs " + std::to_string(smem / 1024) +
                         " KiB of shared memory per block, device " +
                         std::to_string(p.device_index) + " allows " +
                         std::to_string(smem_optin / 1024) + " KiB");
  }
  return true;
}

namespace {

/// Fills the shapes and the out and lse operands (the sm80 and sm90 parameters share these).
template <typename Params>
void set_output_params(Params& params, const Problem& p) {
  params.shape = shape_params(p);
  params.out = tensor_params(p.out);
  params.lse = p.lse.data;
  params.lse_seq_stride = p.lse.seq_stride;
  params.lse_head_stride = p.lse.head_stride;
  params.lse_row_stride = p.lse.row_stride;
}

/// Fills what forward and backward parameters share: shapes and the q, k, v, out, lse operands.
template <typename Params>
void set_common_params(Params& params, const Problem& p) {
  set_output_params(params, p);
  params.q = tensor_params(p.q);
  params.k = tensor_params(p.k);
  params.v = tensor_params(p.v);
}

/// The cap on a tile-variant choice that environment variable `name` sets: its value, or the
/// highest variant when it is unset or empty; anything but a decimal number below `variants` is an
/// error.
int tile_variant_cap(const char* name, int variants) {
  return static_cast<int>(env_decimal(name, 0, variants - 1, variants - 1,
                                      "a tile variant 0.." + std::to_string(variants - 1)));
}

/// The forward tile variant (tile_config.h): the device's pick, at most FLASHVISION_SM80_FWD_TILE
/// (0, 1) when that is set, so that one GPU can run the tile other devices pick (the GPU tests do).
int forward_tile_variant(int bucket, int device_index) {
  const DeviceInfo info = device_info(device_index);
  const int best = sm80::fwd_tile_variant(bucket, static_cast<std::size_t>(info.smem_per_sm),
                                          static_cast<std::size_t>(info.smem_optin));
  return std::min(best, tile_variant_cap("FLASHVISION_SM80_FWD_TILE", sm80::kFwdTileVariants));
}

/// The forward's K/V layout (params.h's FwdKvMode) on device `device_index`: tile_config.h's
/// fwd_kv_swizzle_default picks; FLASHVISION_SM80_FWD_KV ("padded" or "swizzled") overrides where
/// the tile variant has both (fwd_kv_swizzle_fits: buckets 64, 128, 256).
int forward_kv_mode(int bucket, int tile_variant, int device_index) {
  const int mode = env_choice(
      "FLASHVISION_SM80_FWD_KV", {{"padded", sm80::kKvPadded}, {"swizzled", sm80::kKvSwizzled}},
      sm80::fwd_kv_swizzle_default(bucket, tile_variant, device_info(device_index).major)
          ? sm80::kKvSwizzled
          : sm80::kKvPadded,
      "padded or swizzled");
  return sm80::fwd_kv_swizzle_fits(bucket, tile_variant) ? mode : sm80::kKvPadded;
}

/// What environment variable `name` (FLASHVISION_SM80_FWD_SPLIT, FLASHVISION_SM90_FWD_SPLIT) asks
/// of the split of a forward's last wave (common/fwd_split.h): "auto" or unset: the model's
/// choice; "0": never; "1": the model's best split even where it does not pay; "2".."8": that
/// many key-range parts. Benchmarks compare 0 and 1 in one binary.
int forward_split_request(const char* name) {
  return static_cast<int>(env_decimal(
      name, 0, kFwdMaxSplitParts, kFwdSplitAuto,
      "auto, 0 (no split), 1 (split) or a part count 2.." + std::to_string(kFwdMaxSplitParts),
      true));
}

/// The stream-ordered memory pool of the forwards' split partials (and of the FP8 forward's
/// transposed V) on `device`: the library's own,
/// which keeps its memory between calls. The device's default pool returns its memory at every
/// synchronization (its release threshold, the application's to set, is 0 by default), so a call
/// after one would map memory again before its kernel could start. The pool keeps the most that
/// calls in flight together needed: a few MB on the image cases (sdxl-self-128 on sm90: 6.5 MB).
cudaMemPool_t split_pool(int device) {
  static std::mutex mutex;
  static std::map<int, cudaMemPool_t> pools;
  const std::lock_guard<std::mutex> lock(mutex);
  if (auto found = pools.find(device); found != pools.end()) return found->second;
  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = device;
  cudaMemPool_t pool = nullptr;
  cuda_check(cudaMemPoolCreate(&pool, &props), "cudaMemPoolCreate (forward split partials)");
  uint64_t keep_all = UINT64_MAX;
  cuda_check(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep_all),
             "cudaMemPoolSetAttribute (forward split partials)");
  pools.emplace(device, pool);
  return pool;
}

/// Split units of `params` (sm80 or sm90 forward parameters, whose split fields have the same
/// names): the key-range parts of the last wave's tiles, each with its own partial O and LSE;
/// 0 without a split.
template <typename Params>
std::size_t split_units(const Params& params) {
  return static_cast<std::size_t>(params.num_tiles - params.split_tile0) * params.split_parts;
}

/// Runs `run()`, which queues a forward and its combine on p's stream, with the split partials of
/// `params` placed in a workspace from split_pool: every split unit's fp32 O (rows x columns),
/// then every unit's LSE (rows). No workspace without a split. The partials live only between the
/// kernel and the combine: a stream-ordered allocation, as the backward's workspace, so that
/// nothing synchronizes the device.
template <typename Params, typename Run>
void with_split_workspace(const Problem& p, Params& params, Run&& run) {
  const std::size_t units = split_units(params);
  if (units == 0) return run();
  const std::size_t o_floats = units * params.split_rows * params.split_cols;
  const std::size_t bytes = (o_floats + units * params.split_rows) * sizeof(float);
  auto* stream = static_cast<cudaStream_t>(p.stream);
  void* workspace = nullptr;
  cuda_check(cudaMallocFromPoolAsync(&workspace, bytes, split_pool(p.device_index), stream),
             "cudaMallocFromPoolAsync (forward split partials)");
  params.split_o = static_cast<float*>(workspace);
  params.split_lse = params.split_o + o_floats;
  try {
    run();
  } catch (...) {
    cudaFreeAsync(workspace, stream);
    throw;
  }
  cuda_check(cudaFreeAsync(workspace, stream), "cudaFreeAsync");
}

/// The combine's view (common/fwd_combine.h) of sm80 or sm90 forward parameters, whose split
/// fields have the same names and meaning, for a forward on `device`.
template <typename Params>
FwdCombineParams combine_params(const Params& params, int device) {
  FwdCombineParams c;
  c.out = params.out;
  c.lse = params.lse;
  c.lse_seq_stride = params.lse_seq_stride;
  c.lse_head_stride = params.lse_head_stride;
  c.lse_row_stride = params.lse_row_stride;
  c.heads = params.shape.heads;
  c.seqlen_q = params.shape.seqlen_q;
  c.head_dim = params.shape.head_dim;
  c.num_m_blocks = params.num_m_blocks;
  c.num_tiles = params.num_tiles;
  c.split_tile0 = params.split_tile0;
  c.split_parts = params.split_parts;
  c.split_o = params.split_o;
  c.split_lse = params.split_lse;
  c.split_rows = params.split_rows;
  c.split_cols = params.split_cols;
  c.early_start = programmatic_dependents(device);
  return c;
}

/// CTAs of the sm80 forward's tile `variant` in K/V layout `kv_mode` that one SM of p's device
/// runs at a time, from the occupancy calculator rather than the tile: the kernel's registers,
/// which only ptxas knows, decide it as much as its shared memory (two CTAs of 128 threads fit
/// 64 Ki registers only at 255 or fewer a thread). Cached per device, dtype, bucket, variant and
/// layout.
int sm80_forward_ctas_per_sm(const Problem& p, int bucket, int variant, int kv_mode) {
  static std::mutex mutex;
  static std::map<std::tuple<int, DType, int, int, int>, int> cache;
  const auto key = std::tuple{p.device_index, p.dtype, bucket, variant, kv_mode};
  const std::lock_guard<std::mutex> lock(mutex);
  if (auto found = cache.find(key); found != cache.end()) return found->second;
  const int ctas = std::max(1, sm80::forward_ctas_per_sm(p.dtype, bucket, variant, kv_mode));
  cache.emplace(key, ctas);
  return ctas;
}

/// The split of the sm80 forward's last wave for p (common/fwd_split.h): sets the split fields of
/// `params` (num_tiles and the tile variant filled in). Dense non-causal problems only, whose tiles
/// all have the same keys; causal and varlen ones keep whole tiles. A wave is the SMs times the
/// CTAs each runs at a time.
void set_sm80_forward_split(const Problem& p, int bucket, sm80::FwdParams& params) {
  params.split_tile0 = params.num_tiles;
  const sm80::FwdTile tile = sm80::fwd_tile(bucket, params.tile_variant);
  FwdSplitGeometry g;
  g.tiles = params.num_tiles;
  g.key_blocks = static_cast<int>(ceil_div(p.seqlen_k, tile.block_n));
  const int request = forward_split_request("FLASHVISION_SM80_FWD_SPLIT");
  if (request == kFwdSplitOff || p.causal || p.varlen || g.key_blocks < 2) return;
  g.ctas_per_sm = sm80_forward_ctas_per_sm(p, bucket, params.tile_variant, params.kv_mode);
  g.ctas = std::max(1, device_info(p.device_index).sm_count) * g.ctas_per_sm;
  g.block_m = tile.block_m;
  g.block_n = tile.block_n;
  g.head_dim = bucket;
  g.value_cols = bucket;
  g.costs = kSm80FwdSplitCosts;
  const long long tail = fwd_tail_tiles(g);
  if (g.tiles + tail * kFwdMaxSplitParts > INT32_MAX) return;
  const FwdSplit split = fwd_tail_split(g, request);
  if (split.parts <= 1) return;
  params.split_tile0 = static_cast<int>(g.tiles - tail);
  params.split_parts = split.parts;
  params.split_blocks = split.blocks_per_part;
  params.split_rows = tile.block_m;
  params.split_cols = bucket;
}

/// Runs run(p) where p's scale is positive, and otherwise run(q) with q's keys a negated copy of
/// p's, made on p's stream, and q.scale = -p.scale: softmax(Q K^T s) = softmax(Q (-K)^T (-s)). The
/// kernels' online softmax shifts each row by its largest raw score, the largest scaled one only
/// for s > 0; with s < 0 it would exponentiate |s| times the row's spread of scores and overflow.
/// The backward needs nothing of the kind: it recomputes P from the LSE, so P <= 1 for any s.
template <typename Run>
void with_positive_scale(const Problem& p, Run&& run) {
  const int64_t seqs = p.varlen ? 1 : p.batch;
  const int64_t rows = p.varlen ? p.total_k : p.seqlen_k;
  if (!(p.scale < 0.0f) || seqs * rows * p.heads_kv == 0) return run(p);
  // Rows padded to 8 elements (16 bytes), as the kernels' alignment asks of the caller's keys.
  const int64_t pitch = (p.head_dim + 7) / 8 * 8;
  auto* stream = static_cast<cudaStream_t>(p.stream);
  void* copy = nullptr;
  cuda_check(cudaMallocAsync(&copy, static_cast<std::size_t>(seqs * rows * p.heads_kv * pitch) * 2,
                             stream),
             "cudaMallocAsync (negated keys for a negative softmax scale)");
  Problem q = p;
  q.scale = -p.scale;
  q.k = {copy, p.varlen ? 0 : rows * p.heads_kv * pitch, p.heads_kv * pitch, pitch};
  try {
    negate_keys({tensor_params(p.k), tensor_params(q.k), seqs, rows, p.heads_kv, p.head_dim},
                p.stream);
    run(q);
  } catch (...) {
    cudaFreeAsync(copy, stream);
    throw;
  }
  cuda_check(cudaFreeAsync(copy, stream), "cudaFreeAsync (negated keys)");
}

/// Key blocks a CTA walks from which the sm80 forward's K/V prefetch pays (with one wave).
constexpr int kPrefetchMinKeyBlocks = 8;

/// Whether the sm80 forward's CTAs ask L2 for their slices of K and V (sm80/fwd_kv_prefetch.cuh):
/// FLASHVISION_SM80_FWD_KV_PREFETCH ("auto", "0", "1"). auto: where the grid is one wave of CTAs
/// that each walk at least kPrefetchMinKeyBlocks key blocks, the problem's K and V take at most
/// half of L2 and the mask is not causal. Measured on the H200 with L2 flushed before each call
/// (bench/results/2026-11-30-s16): SD 1.5's 32 x 32 level (one wave, 16 key blocks) 39.8 -> 34.0
/// us; on grids of several waves (SDXL 128 x 128, ViT-B/16) 2-6 % slower, on short key walks
/// (SD 1.5 16 x 16: 4 blocks; 77-key cross-attention) 5-7 % slower.
int forward_kv_prefetch(const Problem& p, int bucket, const sm80::FwdParams& params) {
  const int choice = env_choice("FLASHVISION_SM80_FWD_KV_PREFETCH",
                                {{"auto", -1}, {"0", 0}, {"1", 1}}, -1, "auto, 0 or 1");
  if (choice >= 0) return choice;
  const sm80::FwdTile tile = sm80::fwd_tile(bucket, params.tile_variant);
  const int64_t key_blocks = params.split_tile0 < params.num_tiles
                                 ? params.split_blocks
                                 : ceil_div(p.seqlen_k, tile.block_n);
  if (p.causal || key_blocks < kPrefetchMinKeyBlocks) return 0;
  const DeviceInfo info = device_info(p.device_index);
  const int64_t wave = static_cast<int64_t>(std::max(1, info.sm_count)) *
                       sm80_forward_ctas_per_sm(p, bucket, params.tile_variant, params.kv_mode);
  const int64_t rows = p.varlen ? p.total_k : p.batch * p.seqlen_k;
  const int64_t kv_bytes =
      2 * rows * p.heads_kv * p.head_dim * static_cast<int64_t>(element_size(p.dtype));
  return sm80::forward_ctas(params) <= wave && kv_bytes <= info.l2_bytes / 2 ? 1 : 0;
}

void forward_sm80(const Problem& p) {
  const int bucket = sm80::head_dim_bucket(p.head_dim);
  sm80::FwdParams params;
  set_common_params(params, p);
  params.tile_variant = forward_tile_variant(bucket, p.device_index);
  params.kv_mode = forward_kv_mode(bucket, params.tile_variant, p.device_index);
  params.num_m_blocks =
      static_cast<int>(ceil_div(p.seqlen_q, sm80::fwd_tile(bucket, params.tile_variant).block_m));
  if (params.num_m_blocks == 0 || p.batch == 0 || p.heads == 0) return;
  params.num_tiles = static_cast<int>(params.num_m_blocks * p.batch * p.heads);
  set_sm80_forward_split(p, bucket, params);
  params.kv_prefetch = forward_kv_prefetch(p, bucket, params);
  with_split_workspace(p, params, [&] {
    sm80::forward(p.dtype, bucket, params, p.stream);
    combine_split(p.out_dtype, combine_params(params, p.device_index), p.stream);
  });
}

}  // namespace

void cuda_forward(const Problem& p) {
  DeviceGuard guard(p.device_index);
  with_positive_scale(p, forward_sm80);
}

namespace {

/// The backward tile variant (tile_config.h): the highest the bucket has and the device's shared
/// memory allows, at most FLASHVISION_SM80_BWD_TILE (0, 1, 2) when that is set, so that one GPU
/// can run the variants smaller ones pick (the GPU tests do).
int backward_tile_variant(int bucket, int device_index) {
  const int best = sm80::bwd_tile_variant(
      bucket, static_cast<std::size_t>(device_info(device_index).smem_optin));
  const int cap = tile_variant_cap("FLASHVISION_SM80_BWD_TILE", sm80::kBwdTileVariants);
  // Every variant below the best one the bucket has fits too: they need less shared memory.
  for (int variant = std::min(best, cap); variant > 0; --variant) {
    if (sm80::bwd_tile(bucket, variant).block_m > 0) return variant;
  }
  return 0;
}

/// Largest FLASHVISION_SM80_BWD_STAGGER: more than any query-block count of a key block's walk
/// that the stagger could still spread (offsets are taken modulo that count).
constexpr int kMaxQueryStagger = 1 << 20;

/// The sm80 backward's query stagger (params.h): FLASHVISION_SM80_BWD_STAGGER, a positive integer,
/// or 1 (none) when it is unset or empty. Deterministic runs keep 1: there one CTA walks every key
/// block of a head, so no other CTA adds into its dQ rows that a stagger could keep apart.
int backward_query_stagger(bool deterministic) {
  const long long stagger =
      env_decimal("FLASHVISION_SM80_BWD_STAGGER", 1, kMaxQueryStagger, 1,
                  "a query-block stagger 1.." + std::to_string(kMaxQueryStagger));
  return deterministic ? 1 : static_cast<int>(stagger);
}

/// Head-dim buckets in which the sm80 backward's warps work as two groups by default on Hopper:
/// there groups ran the backward 8-12 % faster than shared warps at D = 128 and 256 and 2 % slower
/// at D = 64 (bench/results/2026-11-29-h200-v8, call 9); with the tiled dQ, fwd+bwd 4-5 % faster
/// at D = 72 and 80 (DiT-XL/2, ViT-H/14, a long D = 80 case), even at D = 96 and still slower at
/// D = 40 and 64 (bench/results/2026-11-29-h200-v9, calls 11 and 12). sm_80 itself (A100) was not
/// measured and spills more with groups, so other devices keep shared warps; so does bucket 512
/// (not measured).
constexpr bool groups_by_default(int bucket, int major) {
  return major >= 9 && bucket > 64 && bucket <= 256;
}

/// How the sm80 backward's warps share a step (params.h's BwdWarpRoles) for head-dim `bucket` on
/// a device of compute capability `major`: FLASHVISION_SM80_BWD_SDP ("shared", "split" or
/// "groups") when set, else as groups_by_default says.
int backward_warp_roles(int bucket, int major) {
  return env_choice("FLASHVISION_SM80_BWD_SDP",
                    {{"shared", sm80::kRolesShared},
                     {"split", sm80::kRolesSplitSdp},
                     {"groups", sm80::kRolesGroups}},
                    groups_by_default(bucket, major) ? sm80::kRolesGroups : sm80::kRolesShared,
                    "shared, split or groups");
}

/// The sm80 backward's dQ workspace layout (params.h's BwdDqLayout): FLASHVISION_SM80_BWD_DQ_LAYOUT
/// ("rows" or "tiles") when set, else tiles: each warp-wide float2 atomic then adds into two cache
/// lines instead of eight, which cut the L1 requests of the dQ atomics to a quarter (Nsight
/// Compute on the H200, perf-notes.md). The Hopper backward adds into rows and keeps them.
int backward_dq_layout(bool sm90) {
  const int layout = env_choice("FLASHVISION_SM80_BWD_DQ_LAYOUT",
                                {{"rows", sm80::kDqRows}, {"tiles", sm80::kDqTiles}},
                                sm80::kDqTiles, "rows or tiles");
  return sm90 ? sm80::kDqRows : layout;
}

/// Query splits of the backward grid (see bwd_split.h), from the device's SM count.
int backward_splits(const Problem& p, const sm80::BwdParams& params, int block_m) {
  const int64_t ctas = (p.deterministic ? 1 : params.num_n_blocks) * p.batch * p.heads_kv;
  const int64_t query_blocks = ceil_div(p.seqlen_q, block_m);
  const int64_t partial_bytes =
      2 * p.heads_kv * params.partial_rows * p.head_dim * static_cast<int64_t>(sizeof(float));
  return sm80::bwd_query_splits(ctas, query_blocks, device_info(p.device_index).sm_count,
                                partial_bytes);
}

/// What FLASHVISION_SM80_BWD_TAIL_SPLIT asks of the sm80 backward's last-wave split (bwd_split.h):
/// "auto" or unset: the model's choice; "0": never; "1": the model's best split even where it does
/// not pay; "2".."128": the last wave's tiles in that many parts.
int backward_tail_request() {
  return static_cast<int>(env_decimal("FLASHVISION_SM80_BWD_TAIL_SPLIT", 0, sm80::kBwdMaxSplits,
                                      sm80::kBwdTailAuto,
                                      "auto, 0 (no split), 1 (the model's best split) or a part "
                                      "count 2.." + std::to_string(sm80::kBwdMaxSplits),
                                      true));
}

/// Whether `request` (backward_tail_request) forces a last-wave split on p: then it replaces the
/// query split of small grids, so that a forced split runs on any grid (deterministic ones keep
/// theirs and no tail split).
bool backward_tail_forced(const Problem& p, int request) {
  return request >= sm80::kBwdTailOn && !p.deterministic;
}

/// The last-wave split of the sm80 backward for p and `request` (bwd_split.h): sets the tail fields
/// of `params` (num_n_blocks and num_splits filled in) for `tile` and returns the floats of its
/// partial dK (as many for dV; 0 without a split). Non-deterministic grids the query split leaves
/// whole; in auto mode dense non-causal ones only, whose tiles all walk as many query blocks as
/// the model assumes (a forced split runs any).
std::size_t set_backward_tail_split(const Problem& p, int request, const sm80::BwdTile& tile,
                                    sm80::BwdParams& params) {
  const int64_t tiles = int64_t{params.num_n_blocks} * p.batch * p.heads_kv;
  params.tail_tile0 = static_cast<int>(tiles);
  params.tail_parts = 1;
  params.tail_block_n = tile.block_n;
  if (request == sm80::kBwdTailOff || p.deterministic || params.num_splits > 1) return 0;
  if (request == sm80::kBwdTailAuto && (p.causal || p.varlen)) return 0;
  sm80::BwdTailGeometry g;
  g.tiles = tiles;
  g.slots = int64_t{sm80::kBwdCtasPerSm} * device_info(p.device_index).sm_count;
  g.query_blocks = ceil_div(p.seqlen_q, tile.block_m);
  g.group = p.heads / p.heads_kv;
  g.block_m = tile.block_m;
  g.block_n = tile.block_n;
  g.head_dim = sm80::head_dim_bucket(p.head_dim);
  g.costs = sm80::kBwdTailCosts;
  const sm80::BwdTailSplit split = sm80::bwd_tail_split(g, request);
  const int64_t ctas = split.tile0 + (tiles - split.tile0) * split.parts;
  if (split.parts <= 1 || ctas > INT32_MAX) return 0;
  params.tail_tile0 = static_cast<int>(split.tile0);
  params.tail_parts = split.parts;
  return static_cast<std::size_t>((tiles - split.tile0) * split.parts * tile.block_n * p.head_dim);
}

/// The backward's parameters without the workspace pointers, and how its workspace divides.
struct BackwardPlan {
  sm80::BwdParams params;
  DType dtype = DType::f32;
  int bucket = 0;
  bool empty = false;                ///< no sequence or no head: nothing to compute
  bool sm90 = false;                 ///< the main kernel runs on the Hopper path
  const Problem* problem = nullptr;  ///< what the plan is for (the Hopper path's tensor maps)
  std::size_t dq_floats = 0;         ///< fp32 dQ accumulator
  std::size_t dvec_floats = 0;       ///< rowsum(dO * O) per query row and head
  /// all splits' partial dK (and as many for dV): the query split's or the last-wave split's; 0
  /// unsplit
  std::size_t partial_floats = 0;

  std::size_t workspace_bytes() const {  // dQ, the partials, then D and LSE * log2(e) per row
    return (dq_floats + 2 * dvec_floats + 2 * partial_floats) * sizeof(float);
  }
};

/// Keys per CTA of the Hopper backward (0 in a build without it, which never plans one).
int sm90_backward_block_n() {
#ifdef FLASHVISION_HAVE_SM90
  return sm90::kBwdBlockN;
#else
  return 0;
#endif
}

/// The backward's plan; `sm90` runs the main kernel on the Hopper path, which needs no query
/// split (its CTAs hold 128 keys as the sm80 tiles do, and it has no split kernel).
BackwardPlan plan_backward(const Problem& p, bool sm90) {
  BackwardPlan plan;
  plan.sm90 = sm90;
  plan.problem = &p;
  plan.dtype = p.dtype;
  plan.bucket = sm80::head_dim_bucket(p.head_dim);
  sm80::BwdParams& params = plan.params;
  set_common_params(params, p);
  params.dout = tensor_params(p.dout);
  params.dq = tensor_params(p.dq);
  params.dk = tensor_params(p.dk);
  params.dv = tensor_params(p.dv);
  params.accum_rows = params.shape.total_q;
  params.dq_layout = backward_dq_layout(sm90);
  params.dq_head_rows = sm80::dq_head_rows(params.accum_rows, params.dq_layout == sm80::kDqTiles);
  params.deterministic = p.deterministic;
  params.partial_rows = params.shape.total_k;
  params.query_stagger = backward_query_stagger(p.deterministic);
  params.warp_roles = backward_warp_roles(plan.bucket, device_info(p.device_index).major);
  plan.empty = p.batch == 0 || p.heads == 0;
  if (plan.empty) return plan;
  params.tile_variant = backward_tile_variant(plan.bucket, p.device_index);
  const sm80::BwdTile tile = sm80::bwd_tile(plan.bucket, params.tile_variant);
  params.num_n_blocks =
      static_cast<int>(ceil_div(p.seqlen_k, sm90 ? sm90_backward_block_n() : tile.block_n));
  const int tail_request = backward_tail_request();
  // Read on every backward, not only where a split's launch uses it, so that a bad value fails
  // every call alike.
  params.tail_early = sm80::bwd_tail_pdl_requested() && programmatic_dependents(p.device_index);
  params.num_splits = params.num_n_blocks > 0 && !sm90 && !backward_tail_forced(p, tail_request)
                          ? backward_splits(p, params, tile.block_m)
                          : 1;
  plan.dq_floats = static_cast<std::size_t>(p.heads * params.dq_head_rows * p.head_dim);
  plan.dvec_floats = static_cast<std::size_t>(p.heads * params.accum_rows);
  if (params.num_splits > 1) {
    plan.partial_floats =
        static_cast<std::size_t>(params.num_splits * p.heads_kv * params.partial_rows * p.head_dim);
  } else if (!sm90 && params.num_n_blocks > 0) {
    plan.partial_floats = set_backward_tail_split(p, tail_request, tile, params);
  }
  return plan;
}

#ifdef FLASHVISION_HAVE_SM90
sm90::OperandGeometry geometry(const Problem& p, const Operand& op, bool keys);

/// The Hopper backward main kernel of a plan whose workspace pointers are set.
void run_backward_main_sm90(const BackwardPlan& plan, void* stream) {
  const Problem& p = *plan.problem;
  sm90::BwdParams params;
  params.base = plan.params;
  const int swizzle = sm90::bwd_tile(plan.bucket).swizzle_bytes;
  params.tmap_q =
      sm90::make_tensor_map(geometry(p, p.q, false), swizzle / 2, sm90::kBwdBlockM, swizzle);
  params.tmap_dout =
      sm90::make_tensor_map(geometry(p, p.dout, false), swizzle / 2, sm90::kBwdBlockM, swizzle);
  params.tmap_k =
      sm90::make_tensor_map(geometry(p, p.k, true), swizzle / 2, sm90::kBwdBlockN, swizzle);
  params.tmap_v =
      sm90::make_tensor_map(geometry(p, p.v, true), swizzle / 2, sm90::kBwdBlockN, swizzle);
  if (sm90::bwd_tile(plan.bucket).staged_dq) {
    params.tmap_dq_accum =
        sm90::make_dq_accum_map(plan.params.dq_accum, p.head_dim, plan.params.accum_rows, p.heads,
                                sm90::kBwdDqBoxCols, sm90::kBwdBlockM);
  }
  sm90::backward_main(plan.dtype, plan.bucket, params, stream);
}
#else
void run_backward_main_sm90(const BackwardPlan&, void*) {
  throw Error("this build has no Hopper kernels (FLASHVISION_CUDA_ARCHS without 90)");
}
#endif

/// Queues the backward's kernels, with plan.workspace_bytes() of workspace at `workspace`.
void run_backward(BackwardPlan& plan, float* workspace, void* stream) {
  sm80::BwdParams& params = plan.params;
  params.dq_accum = workspace;
  // dQ and the partials first: their sizes are multiples of head_dim (a multiple of 8), so each
  // starts 32-byte aligned for the vector accesses.
  if (plan.partial_floats > 0) {
    params.dk_partial = params.dq_accum + plan.dq_floats;
    params.dv_partial = params.dk_partial + plan.partial_floats;
  }
  params.dvec = params.dq_accum + plan.dq_floats + 2 * plan.partial_floats;
  params.lse_log2 = params.dvec + plan.dvec_floats;
  // Without query rows there is no dQ, but keys still get their (zero) dK and dV.
  const bool has_queries = plan.dq_floats > 0;
  // The preprocess also zeroes the dQ accumulator (plan.dq_floats from dq_head_rows).
  if (has_queries) sm80::backward_preprocess(plan.dtype, params, stream);
  if (params.num_n_blocks > 0) {
    if (plan.sm90) {
      run_backward_main_sm90(plan, stream);
    } else {
      sm80::backward_main(plan.dtype, plan.bucket, params, stream);
    }
  }
  if (params.num_splits > 1 || params.tail_parts > 1) {
    sm80::backward_reduce_dkdv(plan.dtype, params, stream);
  }
  if (has_queries) sm80::backward_convert_dq(plan.dtype, params, stream);
}

}  // namespace

std::size_t cuda_backward_workspace_bytes(const Problem& p, bool sm90) {
  DeviceGuard guard(p.device_index);
  return plan_backward(p, sm90).workspace_bytes();
}

void cuda_backward(const Problem& p, bool sm90) {
  DeviceGuard guard(p.device_index);
  BackwardPlan plan = plan_backward(p, sm90);
  if (plan.empty) return;
  const std::size_t bytes = plan.workspace_bytes();
  if (bytes == 0 || p.workspace != nullptr) {
    if (p.workspace_bytes < bytes) {
      throw Error("workspace_bytes is " + std::to_string(p.workspace_bytes) +
                  " but this backward call needs " + std::to_string(bytes) +
                  " bytes (backward_workspace_size)");
    }
    run_backward(plan, static_cast<float*>(p.workspace), p.stream);
    return;
  }
  auto* stream = static_cast<cudaStream_t>(p.stream);
  void* workspace = nullptr;
  cuda_check(cudaMallocAsync(&workspace, bytes, stream), "cudaMallocAsync (backward workspace)");
  try {
    run_backward(plan, static_cast<float*>(workspace), p.stream);
  } catch (...) {
    cudaFreeAsync(workspace, stream);
    throw;
  }
  cuda_check(cudaFreeAsync(workspace, stream), "cudaFreeAsync");
}

#ifdef FLASHVISION_HAVE_SM90
namespace {

/// The TMA view of operand `op` of p: key/value operands have heads_kv heads and Nk rows.
sm90::OperandGeometry geometry(const Problem& p, const Operand& op, bool keys) {
  sm90::OperandGeometry g;
  g.data = op.data;
  g.dtype = p.dtype;
  g.head_dim = p.head_dim;
  g.heads = keys ? p.heads_kv : p.heads;
  // In varlen mode rows are global (sequence offsets are added to the row coordinate).
  g.rows = p.varlen ? (keys ? p.total_k : p.total_q) : (keys ? p.seqlen_k : p.seqlen_q);
  g.seqs = p.varlen ? 1 : p.batch;
  g.row_stride = op.row_stride;
  g.head_stride = op.head_stride;
  g.seq_stride = op.seq_stride;
  return g;
}

/// Query rows of the sm90 forward's tiles that FLASHVISION_SM90_FWD_ROWS asks for (64, 128 or
/// 192), or 0 when it is unset: tests and benchmarks run every tile of a bucket on any shape with
/// it.
int sm90_rows_override() {
  return env_choice("FLASHVISION_SM90_FWD_ROWS",
                    {{"64", sm90::kHalfBlockM}, {"128", sm90::kNarrowBlockM}, {"192", 192}}, 0,
                    "64, 128 or 192");
}

/// Whether the sm90 forward may take a bucket's text key width (tile_config.h's text_block_n):
/// unless FLASHVISION_SM90_FWD_TEXT is 0 (benchmarks and tests compare both).
bool sm90_text_width_allowed() {
  return env_choice("FLASHVISION_SM90_FWD_TEXT", {{"auto", 1}, {"1", 1}, {"0", 0}}, 1,
                    "auto or 1 (text keys in one 80-key block at head dims 33-64) or 0 (never)") ==
         1;
}

/// The head-dim bucket whose kernels run the sm90 forward of p: tile_config.h's fwd_text_bucket
/// where the text width is allowed and that bucket is compiled, else p's own bucket.
int sm90_forward_bucket(const Problem& p) {
  const int bucket = sm90::head_dim_bucket(p.head_dim);
  if (!sm90_text_width_allowed()) return bucket;
  const int text_bucket = sm90::fwd_text_bucket(bucket, p.seqlen_k);
  return sm90::bucket_compiled(text_bucket) ? text_bucket : bucket;
}

/// Tiles of the sm90 forward's schedule for p with `block_m`-row tiles of `bucket` that cover
/// `value_cols` columns of V and O each: one per query block, head and sequence, and per value
/// slice (above D = 256, and in a sliced tile). cuda_sm90_supports bounds the count the forward
/// then launches.
int64_t sm90_forward_tiles(const Problem& p, int bucket, int block_m, int value_cols) {
  return ceil_div(p.seqlen_q, block_m) * p.batch * p.heads * sm90::value_slices(bucket, value_cols);
}

/// The columns of V and O each sm90 forward tile of p covers with `tile` on `sm_count` SMs: the
/// tile's sliced width (tile_config.h's sliced_value_columns) where FLASHVISION_SM90_FWD_SLICES
/// asks for it, by default where the slices fit one wave (fwd_value_sliced); else all of them
/// (value_columns).
int sm90_value_columns(const Problem& p, int bucket, const sm90::FwdTile& tile, int sm_count) {
  const int request =
      env_choice("FLASHVISION_SM90_FWD_SLICES", {{"auto", -1}, {"1", 1}, {"0", 0}}, -1,
                 "auto (where the slices fit one wave), 1 (wherever the tile has them) or 0 "
                 "(never)");
  const int whole = sm90::value_columns(bucket);
  const int sliced = sm90::sliced_value_columns(bucket, tile.block_m);
  if (sliced == 0 || request == 0) return whole;
  if (request == 1) return sliced;
  const int64_t tiles = sm90_forward_tiles(p, bucket, tile.block_m, whole);
  return sm90::fwd_value_sliced(bucket, tile.block_m, tiles, sm_count) ? sliced : whole;
}

/// Whether FLASHVISION_SM90_FWD_CROSS_TILE allows the cross-tile pipeline (unless it is 0).
bool sm90_cross_tile_allowed() {
  return env_choice("FLASHVISION_SM90_FWD_CROSS_TILE", {{"auto", 1}, {"1", 1}, {"0", 0}}, 1,
                    "auto or 1 (where every tile is one key block) or 0 (never)") == 1;
}

/// What FLASHVISION_SM90_FWD_MULTICAST asks of sharing K and V in clusters: -1 (auto: where it
/// pays, tile_config.h's fwd_kv_multicast_default), 1 (wherever it applies) or 0 (never).
int sm90_multicast_request() {
  return env_choice("FLASHVISION_SM90_FWD_MULTICAST", {{"auto", -1}, {"1", 1}, {"0", 0}}, -1,
                    "auto (where it pays), 1 (wherever the two CTAs of a cluster read the same "
                    "keys) or 0 (never)");
}

/// Whether the sm90 forward of p with `tile` on `sm_count` SMs shares K and V within clusters of
/// CTAs, as FLASHVISION_SM90_FWD_MULTICAST asks. Such a forward keeps its last wave whole: the
/// split would give each CTA other keys.
bool sm90_kv_multicast(const Problem& p, const sm90::FwdTile& tile, int bucket, int sm_count) {
  const int request = sm90_multicast_request();
  if (request == 0) return false;
  const int64_t m_blocks = ceil_div(p.seqlen_q, tile.block_m);
  const bool cross_tile =
      sm90_cross_tile_allowed() && sm90::fwd_cross_tile(bucket, tile.block_m, tile.block_n,
                                                        p.seqlen_k, p.causal, p.varlen, false);
  if (request == 1) {
    return sm90::fwd_kv_multicast(bucket, tile.block_m, tile.block_n, m_blocks, p.seqlen_k,
                                  p.causal, p.varlen, false, cross_tile);
  }
  return sm90::fwd_kv_multicast_default(
      bucket, tile.block_m, tile.block_n, m_blocks,
      sm90_forward_tiles(p, bucket, tile.block_m, sm90::value_columns(bucket)), p.seqlen_k,
      p.causal, p.varlen, cross_tile, sm_count);
}

/// The sm90 forward tile of p (tile_config.h): key blocks sized to the longest key sequence, so
/// that short image sequences get the bucket's short width where it pads fewer keys (and text
/// tokens its text width); query rows from the shape of the persistent schedule on `sm_count`
/// SMs (half tiles where they fit one wave, fwd_half_rows), or as FLASHVISION_SM90_FWD_ROWS says
/// where the bucket's wide or half tile applies at that key width. A wide tile runs with its own
/// width or the text width (wide_tile_block_n); it shares K and V wherever its 128-row tile would
/// (tile_config.h, after fwd_multicast_compiled).
sm90::FwdTile sm90_forward_tile(const Problem& p, int bucket, int sm_count) {
  const int block_n = sm90::fwd_block_n(bucket, p.seqlen_k, sm90_text_width_allowed());
  const int64_t batch_heads = p.batch * p.heads;
  int block_m = sm90::fwd_half_rows(bucket, block_n, p.seqlen_q, batch_heads, sm_count)
                    ? sm90::kHalfBlockM
                    : sm90::fwd_block_m(bucket, block_n, p.seqlen_q, batch_heads, sm_count);
  if (const int rows = sm90_rows_override(); rows != 0) {
    const bool wide =
        rows == sm90::wide_block_m(bucket) && sm90::wide_tile_applies(bucket, block_n);
    const bool half = rows == sm90::kHalfBlockM && sm90::half_tile_exists(bucket, block_n);
    block_m = wide || half ? rows : sm90::kNarrowBlockM;
  }
  if (block_m == sm90::wide_block_m(bucket)) {
    return sm90::fwd_tile(bucket, block_m, sm90::wide_tile_block_n(bucket, block_n));
  }
  return sm90::fwd_tile(bucket, block_m, block_n);
}

/// The split of the forward's last wave for p with `tile` (of `value_cols` columns of V and O) on
/// `sm_count` SMs: dense non-causal problems only (their tiles all have the same keys); causal and
/// varlen problems keep whole tiles. The tiles of every value slice split alike: the VAE's one
/// head of 512 has 64 such tiles for 132 SMs.
FwdSplit sm90_forward_split(const Problem& p, int bucket, const sm90::FwdTile& tile, int value_cols,
                            int64_t tiles, int sm_count) {
  const int request = forward_split_request("FLASHVISION_SM90_FWD_SPLIT");
  FwdSplitGeometry g;
  g.tiles = tiles;
  g.ctas = sm_count;
  g.key_blocks = static_cast<int>(ceil_div(p.seqlen_k, tile.block_n));
  g.block_m = tile.block_m;
  g.block_n = tile.block_n;
  g.head_dim = bucket;
  g.value_cols = value_cols;
  g.costs = kSm90FwdSplitCosts;
  if (p.causal || p.varlen || tiles + fwd_tail_tiles(g) * kFwdMaxSplitParts > INT32_MAX) {
    return {1, g.key_blocks};
  }
  return fwd_tail_split(g, request);
}

/// Sets the schedule of `params` (num_tiles and value_cols filled in) for `split` on `sm_count`
/// SMs: the work units, the persistent CTAs and where the split tiles start.
void set_forward_schedule(sm90::FwdParams& params, const FwdSplit& split, const sm90::FwdTile& tile,
                          int sm_count) {
  params.num_units = params.num_tiles;
  params.split_tile0 = params.num_tiles;
  if (split.parts > 1) {
    const int tail = params.num_tiles % sm_count;
    params.split_tile0 = params.num_tiles - tail;
    params.split_parts = split.parts;
    params.split_blocks = split.blocks_per_part;
    params.num_units = params.split_tile0 + tail * split.parts;
    params.split_rows = tile.block_m;
    params.split_cols = params.value_cols;
  }
  params.grid_ctas = std::min(params.num_units, sm_count);
}

/// Whether the sm90 forward of p runs `tile` with the cross-tile pipeline
/// (tile_config.h's fwd_cross_tile) for `params` (schedule set): where it applies, unless
/// FLASHVISION_SM90_FWD_CROSS_TILE is 0 (benchmarks compare both).
bool sm90_cross_tile(const Problem& p, const sm90::FwdParams& params, const sm90::FwdTile& tile,
                     int bucket) {
  return sm90_cross_tile_allowed() &&
         sm90::fwd_cross_tile(bucket, tile.block_m, tile.block_n, p.seqlen_k, p.causal, p.varlen,
                              params.num_units != params.num_tiles);
}

/// Whether the sm90 forward of p runs `tile`'s narrow-first kernel (tile_config.h's
/// fwd_narrow_first) for `params` (schedule and clusters set): where it applies, unless
/// FLASHVISION_SM90_FWD_NARROW_FIRST is 0 (benchmarks compare both).
bool sm90_narrow_first(const Problem& p, const sm90::FwdParams& params, const sm90::FwdTile& tile,
                       int bucket) {
  const bool allowed =
      env_choice("FLASHVISION_SM90_FWD_NARROW_FIRST", {{"auto", 1}, {"1", 1}, {"0", 0}}, 1,
                 "auto or 1 (where a sequence's last key block is mostly past its end) or 0 "
                 "(never)") == 1;
  return allowed &&
         sm90::fwd_narrow_first(bucket, tile.block_m, tile.block_n, p.seqlen_k, p.causal, p.varlen,
                                params.num_units != params.num_tiles, params.kv_multicast != 0);
}

/// Whether the 16-bit sm90 forward of p scales Q in the kernel (tile_config.h's fwd_q_prescaled)
/// for `params` (schedule and outputs set), as FLASHVISION_SM90_FWD_PRESCALE asks: by default
/// where it pays and no LSE is asked for; with 1 wherever the scale allows it, the LSE's
/// precision notwithstanding (tests and benchmarks); never with 0.
bool sm90_q_prescaled(const Problem& p, const sm90::FwdParams& params, const sm90::FwdTile& tile,
                      int bucket) {
  const int request =
      env_choice("FLASHVISION_SM90_FWD_PRESCALE", {{"auto", -1}, {"1", 1}, {"0", 0}}, -1,
                 "auto (inference forwards whose tiles walk enough key blocks), 1 (wherever the "
                 "scale allows) or 0 (never)");
  const float q_scale = params.shape.scale_log2;
  if (request == 0 || !(q_scale <= 1.0f)) return false;
  if (request == 1) return true;
  return sm90::fwd_q_prescaled(bucket, q_scale, p.seqlen_k, tile.block_n, params.cross_tile != 0,
                               params.lse != nullptr);
}

/// Scales Q in the kernel where sm90_q_prescaled says so: the scores then carry the softmax's
/// scale, so the kernel's scale_log2 is 1, and its LSE takes log2 units to natural ones.
void set_query_scaling(sm90::FwdParams& params, const Problem& p, const sm90::FwdTile& tile,
                       int bucket) {
  if (!sm90_q_prescaled(p, params, tile, bucket)) return;
  params.q_prescaled = 1;
  params.q_scale = params.shape.scale_log2;
  params.shape.scale_log2 = 1.0f;
  params.shape.scale = static_cast<float>(M_LN2);
}

/// The sm90 forward with its diagnostic timelines recorded (fwd_timeline_layout.h) and written to
/// `path`, replacing what an earlier call wrote there. It synchronizes the device: a diagnostic,
/// not a way to time the kernel.
void run_forward_sm90_recording(const Problem& p, sm90::FwdParams& params, int bucket,
                                const sm90::FwdTile& tile, const char* path) {
  constexpr size_t kRecords =
      static_cast<size_t>(sm90::kTimelineCtas) * sm90::kTimelineRoles * sm90::kTimelineEvents;
  constexpr size_t kBytes = kRecords * sizeof(unsigned long long);
  unsigned long long* records = nullptr;
  cuda_check(cudaMalloc(reinterpret_cast<void**>(&records), kBytes), "cudaMalloc (timelines)");
  std::vector<unsigned long long> host(kRecords);
  try {
    cuda_check(cudaMemsetAsync(records, 0, kBytes, static_cast<cudaStream_t>(p.stream)),
               "cudaMemsetAsync (timelines)");
    params.timeline = records;
    sm90::forward(p.dtype, bucket, tile.block_m, tile.block_n, params, p.stream);
    params.timeline = nullptr;
    cuda_check(cudaStreamSynchronize(static_cast<cudaStream_t>(p.stream)),
               "cudaStreamSynchronize (timelines)");
    cuda_check(cudaMemcpy(host.data(), records, kBytes, cudaMemcpyDeviceToHost),
               "cudaMemcpy (timelines)");
  } catch (...) {
    cudaFree(records);
    throw;
  }
  cuda_check(cudaFree(records), "cudaFree (timelines)");
  const sm90::TimelineFileHeader header{sm90::kTimelineCtas,   sm90::kTimelineRoles,
                                        sm90::kTimelineEvents, tile.block_m,
                                        tile.block_n,          params.num_units};
  FILE* file = std::fopen(path, "wb");
  bool written = file != nullptr && std::fwrite(&header, sizeof(header), 1, file) == 1 &&
                 std::fwrite(host.data(), sizeof(host[0]), kRecords, file) == kRecords;
  if (file != nullptr) written = std::fclose(file) == 0 && written;
  if (!written) throw Error(std::string("FLASHVISION_SM90_TIMELINES: cannot write ") + path);
}

/// Queues the forward (tensor maps set) and the combine of its split tiles, whose partial O rows
/// hold one slice's columns each.
void run_forward_sm90(const Problem& p, sm90::FwdParams& params, int bucket,
                      const sm90::FwdTile& tile) {
  const char* timelines =
      sm90::kTimelinesCompiled ? std::getenv("FLASHVISION_SM90_TIMELINES") : nullptr;
  if (timelines != nullptr && *timelines != '\0') {
    run_forward_sm90_recording(p, params, bucket, tile, timelines);
  } else {
    sm90::forward(p.dtype, bucket, tile.block_m, tile.block_n, params, p.stream);
  }
  FwdCombineParams combine = combine_params(params, p.device_index);
  combine.value_slices = sm90::value_slices(bucket, params.value_cols);
  combine_split(p.out_dtype, combine, p.stream);
}

/// The head-dim bucket of the FP8 forward for head dim `head_dim`: the smallest bucket that
/// tile_config.h's fp8_bucket takes, or 0 where none does.
int fp8_forward_bucket(int64_t head_dim) {
  for (const int bucket : sm90::kHeadDimBuckets) {
    if (head_dim <= bucket && sm90::fp8_bucket(bucket)) return bucket;
  }
  return 0;
}

/// Why the FP8 forward cannot run p, or true.
bool fp8_forward_supports(const Problem& p, std::string* why) {
  const int bucket = fp8_forward_bucket(p.head_dim);
  if (p.head_dim % 16 != 0 || bucket == 0) {
    return fail(why,
                "the FP8 (f8e4m3) forward needs a head dim that is a multiple of 16 up to "
                "256 (whole 16-byte rows for TMA), got " +
                    std::to_string(p.head_dim));
  }
  if (!sm90::bucket_compiled(bucket)) {
    return fail(why, "head dim " + std::to_string(p.head_dim) + " needs bucket " +
                         std::to_string(bucket) + ", which this build did not compile (compiled: " +
                         sm90::compiled_buckets_text() + "; see FLASHVISION_HEAD_DIMS)");
  }
  if (std::string device = device_problem(p); !device.empty()) return fail(why, device);
  const DeviceInfo info = device_info(p.device_index);
  if (info.major != 9 || info.minor != 0) {
    return fail(why, "the FP8 (f8e4m3) forward needs compute capability 9.0 (sm_90a), device " +
                         std::to_string(p.device_index) + " has " + std::to_string(info.major) +
                         "." + std::to_string(info.minor));
  }
  for (const auto& [name, op] : {std::pair{"q", &p.q}, {"k", &p.k}}) {
    if (reinterpret_cast<std::uintptr_t>(op->data) % 16 != 0) {
      return fail(why, std::string(name) + " data pointer is not 16-byte aligned");
    }
    if (const char* problem = sm90::tensor_map_problem(geometry(p, *op, op == &p.k))) {
      return fail(why, std::string(name) + " has " + problem + ", which TMA cannot address");
    }
  }
  if (std::string bad = alignment_problem("out", p.out); !bad.empty()) return fail(why, bad);
  if (std::max(p.seqlen_q, p.seqlen_k) > INT32_MAX - 256) {
    return fail(why, "the FP8 forward addresses rows with 32-bit TMA coordinates");
  }
  if (sm90_forward_tiles(p, bucket, sm90::kNarrowBlockM, sm90::value_columns(bucket)) > INT32_MAX) {
    return fail(why, "the problem needs more than 2^31 tiles of the sm90 schedule");
  }
  return true;
}

}  // namespace

bool cuda_sm90_supports(const Problem& p, std::string* why) {
  if (p.dtype == DType::f8e4m3) return fp8_forward_supports(p, why);
  const int bucket = sm90_forward_bucket(p);
  if (std::string bad =
          element_problem(p, "the sm90 forward", 512, bucket, sm90::bucket_compiled(bucket),
                          sm90::compiled_buckets_text());
      !bad.empty()) {
    return fail(why, bad);
  }
  if (std::string device = device_problem(p); !device.empty()) return fail(why, device);
  const DeviceInfo info = device_info(p.device_index);
  if (info.major != 9 || info.minor != 0) {
    return fail(why, "the sm90 forward needs compute capability 9.0 (sm_90a), device " +
                         std::to_string(p.device_index) + " has " + std::to_string(info.major) +
                         "." + std::to_string(info.minor));
  }
  const sm90::FwdTile tile = sm90_forward_tile(p, bucket, info.sm_count);
  if (sm90::fwd_smem_bytes(bucket, tile.block_m, tile.block_n) >
      static_cast<std::size_t>(info.smem_optin)) {
    return fail(why, "the sm90 forward of bucket " + std::to_string(bucket) + " with " +
                         std::to_string(tile.block_m) + " x " + std::to_string(tile.block_n) +
                         " tiles needs more shared memory than the device allows");
  }
  std::string bad = forward_alignment_problem(p);
  for (const auto& [name, op, keys] :
       {std::tuple{"q", &p.q, false}, {"k", &p.k, true}, {"v", &p.v, true}}) {
    if (const char* problem = sm90::tensor_map_problem(geometry(p, *op, keys));
        bad.empty() && problem != nullptr) {
      bad = std::string(name) + " has " + problem + ", which TMA cannot address";
    }
  }
  if (!bad.empty()) return fail(why, bad);
  const int64_t rows = p.varlen ? std::max(p.total_q, p.total_k) : std::max(p.seqlen_q, p.seqlen_k);
  if (rows > INT32_MAX - 256) {
    return fail(why, "the sm90 forward addresses rows with 32-bit TMA coordinates");
  }
  if (sm90_forward_tiles(p, bucket, tile.block_m, sm90::value_columns(bucket)) > INT32_MAX) {
    return fail(why, "the problem needs more than 2^31 tiles of the sm90 schedule");
  }
  return true;
}

bool cuda_sm90_backward_supports(const Problem& p, std::string* why) {
  // The preprocess and dQ convert kernels around the main kernel are the sm80 path's.
  if (!cuda_supports(p, true, why)) return false;
  const int bucket = sm90::head_dim_bucket(p.head_dim);
  if (!sm90::bwd_bucket_supported(bucket)) {
    return fail(why, "the sm90 backward serves head dims up to 128, got head_dim " +
                         std::to_string(p.head_dim));
  }
  if (!sm90::bwd_bucket_compiled(bucket)) {
    return fail(why, "this build did not compile the sm90 backward of head-dim bucket " +
                         std::to_string(bucket) + " (FLASHVISION_HEAD_DIMS)");
  }
  if (p.deterministic) return fail(why, "the sm90 backward has no deterministic mode");
  const DeviceInfo info = device_info(p.device_index);
  if (info.major != 9 || info.minor != 0) {
    return fail(why, "the sm90 backward needs compute capability 9.0 (sm_90a), device " +
                         std::to_string(p.device_index) + " has " + std::to_string(info.major) +
                         "." + std::to_string(info.minor));
  }
  if (sm90::bwd_smem_bytes(bucket) > static_cast<std::size_t>(info.smem_optin)) {
    return fail(why, "the sm90 backward needs more shared memory than the device allows");
  }
  for (const auto& [name, op, keys] : {std::tuple{"q", &p.q, false},
                                       {"k", &p.k, true},
                                       {"v", &p.v, true},
                                       {"dout", &p.dout, false}}) {
    if (const char* problem = sm90::tensor_map_problem(geometry(p, *op, keys))) {
      return fail(why, std::string(name) + " has " + problem + ", which TMA cannot address");
    }
  }
  const int64_t rows = p.varlen ? std::max(p.total_q, p.total_k) : std::max(p.seqlen_q, p.seqlen_k);
  if (rows > INT32_MAX - 256) {
    return fail(why, "the sm90 backward addresses rows with 32-bit TMA coordinates");
  }
  return true;
}

bool cuda_sm90_backward_preferred(const Problem& p) {
  if (!cuda_sm90_backward_supports(p, nullptr)) return false;
  // Grids of under two waves run faster on the sm80 backward, which splits their query blocks
  // over more CTAs; the Hopper kernel has no split.
  DeviceGuard guard(p.device_index);
  return plan_backward(p, false).params.num_splits == 1;
}

namespace {

/// The FP8 forward's tile of p on `sm_count` SMs (tile_config.h's fp8_fwd_tile): the key width
/// fp8_fwd_block_n picks for p's keys, and query rows as the 16-bit forward chooses them at that
/// width, or as FLASHVISION_SM90_FWD_ROWS says where the bucket has FP8 tiles of those rows.
sm90::FwdTile sm90_fp8_forward_tile(const Problem& p, int bucket, int sm_count) {
  const int block_n = sm90::fp8_fwd_block_n(bucket, p.seqlen_k);
  int block_m = sm90::fwd_block_m(bucket, block_n, p.seqlen_q, p.batch * p.heads, sm_count);
  if (const int rows = sm90_rows_override(); rows != 0) block_m = rows;
  if (!sm90::fp8_tile_exists(bucket, block_m, block_n)) block_m = sm90::kNarrowBlockM;
  return sm90::fp8_fwd_tile(bucket, block_m, block_n);
}

/// The sm90 forward's schedule of `params.num_tiles` tiles with `split`, the divisors that place
/// a unit's tile, and whether one-block tiles load the next tile's Q during this one.
void schedule_forward_tiles(sm90::FwdParams& params, const Problem& p, const sm90::FwdTile& tile,
                            int bucket, int sm_count, const FwdSplit& split) {
  set_forward_schedule(params, split, tile, sm_count);
  params.m_blocks_divisor = FastDivisor(params.num_m_blocks);
  params.heads_divisor = FastDivisor(p.heads);
  params.group_divisor = FastDivisor(params.shape.group);
  params.split_parts_divisor = FastDivisor(params.split_parts);
  params.cross_tile = sm90_cross_tile(p, params, tile, bucket) ? 1 : 0;
}

/// Whether the FP8 forward of p transposes V in the kernel rather than in a pass before it:
/// FLASHVISION_SM90_FP8_VALUES's choice (tests and benchmarks run both), by default where
/// tile_config.h's fp8_values_in_kernel says so or the pass cannot launch for `values`.
bool fp8_values_in_kernel(const Problem& p, const sm90::FwdTile& tile, int bucket,
                          int64_t num_m_blocks, const sm90::Fp8Values& values) {
  const int request =
      env_choice("FLASHVISION_SM90_FP8_VALUES", {{"auto", -1}, {"kernel", 1}, {"pass", 0}}, -1,
                 "auto, kernel (V transposed in the forward kernel) or pass (in a "
                 "pass before it)");
  if (!sm90::fp8_values_pass_fits(values)) return true;
  if (request != -1) return request == 1;
  return sm90::fp8_values_in_kernel(bucket, tile.block_n, p.seqlen_k, num_m_blocks,
                                    p.heads / p.heads_kv);
}

/// The FP8 forward: the kernel of the bucket's FP8 tile, which reads Q and K as the 16-bit forward
/// does, reads V as it lies and transposes it in shared memory or reads it as a pass before the
/// kernel transposed it into a stream-ordered workspace (fp8_values.h), and writes bf16 O.
void forward_sm90_fp8(const Problem& p) {
  const int bucket = fp8_forward_bucket(p.head_dim);
  const int sm_count = std::max(1, device_info(p.device_index).sm_count);
  const sm90::FwdTile tile = sm90_fp8_forward_tile(p, bucket, sm_count);
  sm90::FwdParams params;
  set_output_params(params, p);
  params.num_m_blocks = static_cast<int>(ceil_div(p.seqlen_q, tile.block_m));
  if (params.num_m_blocks == 0 || p.batch == 0 || p.heads == 0) return;
  params.value_cols = sm90::value_columns(bucket);
  params.num_tiles =
      static_cast<int>(sm90_forward_tiles(p, bucket, tile.block_m, params.value_cols));
  schedule_forward_tiles(
      params, p, tile, bucket, sm_count,
      sm90_forward_split(p, bucket, tile, params.value_cols, params.num_tiles, sm_count));
  params.descale_v = p.descale_v;
  const int swizzle = sm90::swizzle_bytes(bucket, 1);
  params.tmap_q = sm90::make_tensor_map(geometry(p, p.q, false), swizzle, tile.block_m, swizzle);
  params.tmap_k = sm90::make_tensor_map(geometry(p, p.k, true), swizzle, tile.block_n, swizzle);
  const int panel_keys = sm90::fp8_value_panel_keys(tile.block_n);
  const sm90::Fp8Values values{p.v.data,   p.v.seq_stride, p.v.row_stride, p.v.head_stride, p.batch,
                               p.seqlen_k, p.heads_kv,     p.head_dim,     panel_keys};
  if (fp8_values_in_kernel(p, tile, bucket, params.num_m_blocks, values)) {
    params.tmap_v = sm90::make_tensor_map(geometry(p, p.v, true), swizzle, tile.block_n, swizzle);
    with_split_workspace(p, params, [&] { run_forward_sm90(p, params, bucket, tile); });
    return;
  }
  auto* stream = static_cast<cudaStream_t>(p.stream);
  void* transposed = nullptr;
  cuda_check(cudaMallocFromPoolAsync(&transposed, sm90::fp8_transposed_bytes(values),
                                     split_pool(p.device_index), stream),
             "cudaMallocFromPoolAsync (the FP8 forward's transposed V)");
  try {
    sm90::transpose_fp8_values(values, transposed, p.stream);
    params.tmap_v = sm90::make_fp8_values_map(transposed, panel_keys, p.head_dim,
                                              sm90::fp8_value_panels(values), p.heads_kv, p.batch,
                                              params.value_cols);
    params.fp8_values_transposed = 1;
    with_split_workspace(p, params, [&] { run_forward_sm90(p, params, bucket, tile); });
  } catch (...) {
    cudaFreeAsync(transposed, stream);
    throw;
  }
  cuda_check(cudaFreeAsync(transposed, stream), "cudaFreeAsync (the FP8 forward's transposed V)");
}

void forward_sm90(const Problem& p) {
  if (p.dtype == DType::f8e4m3) return forward_sm90_fp8(p);
  const int bucket = sm90_forward_bucket(p);
  const int sm_count = std::max(1, device_info(p.device_index).sm_count);
  const sm90::FwdTile tile = sm90_forward_tile(p, bucket, sm_count);
  sm90::FwdParams params;
  set_output_params(params, p);
  params.num_m_blocks = static_cast<int>(ceil_div(p.seqlen_q, tile.block_m));
  if (params.num_m_blocks == 0 || p.batch == 0 || p.heads == 0) return;
  params.value_cols = sm90_value_columns(p, bucket, tile, sm_count);
  params.num_tiles =
      static_cast<int>(sm90_forward_tiles(p, bucket, tile.block_m, params.value_cols));
  const bool multicast = sm90_kv_multicast(p, tile, bucket, sm_count);
  const FwdSplit split =
      multicast
          ? FwdSplit{1, static_cast<int>(ceil_div(p.seqlen_k, tile.block_n))}
          : sm90_forward_split(p, bucket, tile, params.value_cols, params.num_tiles, sm_count);
  schedule_forward_tiles(params, p, tile, bucket, sm_count, split);
  params.kv_multicast = multicast ? 1 : 0;
  params.narrow_first = sm90_narrow_first(p, params, tile, bucket) ? 1 : 0;
  set_query_scaling(params, p, tile, bucket);
  const int swizzle = sm90::swizzle_bytes(bucket);
  params.tmap_q =
      sm90::make_tensor_map(geometry(p, p.q, false), swizzle / 2, tile.block_m, swizzle);
  // Each CTA of a cluster that shares K and V loads its share of a block's rows.
  const int key_box_rows = tile.block_n / (params.kv_multicast ? sm90::kKvMulticastCtas : 1);
  params.tmap_k = sm90::make_tensor_map(geometry(p, p.k, true), swizzle / 2, key_box_rows, swizzle);
  // One panel a box: above D = 256 a tile loads its slice's panels from its column v_col0.
  params.tmap_v = sm90::make_tensor_map(geometry(p, p.v, true), swizzle / 2, key_box_rows, swizzle);
  with_split_workspace(p, params, [&] { run_forward_sm90(p, params, bucket, tile); });
}

}  // namespace

void cuda_forward_sm90(const Problem& p) {
  DeviceGuard guard(p.device_index);
  with_positive_scale(p, forward_sm90);
}

#else

bool cuda_sm90_supports(const Problem&, std::string* why) {
  return fail(why, "this build has no Hopper kernels (FLASHVISION_CUDA_ARCHS without 90)");
}

void cuda_forward_sm90(const Problem&) {
  throw Error("this build has no Hopper kernels (FLASHVISION_CUDA_ARCHS without 90)");
}

bool cuda_sm90_backward_supports(const Problem&, std::string* why) {
  return fail(why, "this build has no Hopper kernels (FLASHVISION_CUDA_ARCHS without 90)");
}

bool cuda_sm90_backward_preferred(const Problem&) { return false; }

#endif

}  // namespace flashvision::detail
