// Per-thread scratch memory: one aligned allocation, carved into the tiles a pass needs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>

namespace flashvision::detail::cpu {

/// Offsets of named tiles inside one thread's scratch area, each 64-byte aligned.
class ScratchPlan {
 public:
  /// Reserves `floats` floats and returns their offset.
  int64_t reserve(int64_t floats) {
    const int64_t at = size_;
    size_ += (floats + kAlignFloats - 1) / kAlignFloats * kAlignFloats;
    return at;
  }
  /// Floats one thread needs (a multiple of the alignment).
  int64_t size() const { return size_; }

 private:
  static constexpr int64_t kAlignFloats = 16;  // 64 bytes: a cache line and one AVX-512 vector
  int64_t size_ = 0;
};

/// An uninitialized, 64-byte aligned array of floats.
class AlignedFloats {
 public:
  explicit AlignedFloats(int64_t count)
      : data_(static_cast<float*>(::operator new (static_cast<std::size_t>(count) * sizeof(float),
                                                  std::align_val_t{64}))) {}
  /// The first element.
  float* data() const { return data_.get(); }

 private:
  struct Free {
    void operator()(float* p) const { ::operator delete (p, std::align_val_t{64}); }
  };
  std::unique_ptr<float, Free> data_;
};

/// Scratch that outlives a call: grown to the largest size asked for, then kept. Callers hold one
/// per thread (thread_local), so concurrent calls never share it.
class GrowingScratch {
 public:
  /// At least `floats` floats, 64-byte aligned; what an earlier call left there is undefined.
  float* reserve(int64_t floats) {
    if (floats > capacity_) {
      buffer_ = AlignedFloats(floats);
      capacity_ = floats;
    }
    return buffer_.data();
  }

 private:
  AlignedFloats buffer_{0};
  int64_t capacity_ = 0;
};

}  // namespace flashvision::detail::cpu
