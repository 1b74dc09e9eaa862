// Hands out a pass's tasks, (stream, block) pairs, to the threads of a parallel region.
//
// Each thread owns a contiguous range of streams (sequence x head) and takes their blocks in
// order, so its consecutive tasks reread the same K/V from its own L2 instead of packing it
// afresh from L3 or memory; when its streams are done, it takes the blocks that the owners of
// other streams have not reached yet, walking back from the end of the previous thread's range.
// A shared counter per stream hands out each block exactly once.
//
// Why not `omp for schedule(dynamic)`: that deals consecutive blocks of a stream to different
// threads, so every thread repacks every stream's K/V; and why not a static split: the threads
// of a shared machine run at unequal speeds (on the 16-core Xeon of BENCH.md the slowest took up
// to 1.7x as long as the fastest for the same work), so the split must follow progress.
//
// A helper's first block of another stream costs that stream's K/V packing on top of the block.
// When the owner is about to reach the block itself, taking it makes the helper the last thread
// of the call: on sd15-self-16 (16 threads, one stream each, 8 blocks of 32 rows) helpers took
// 19 of 128 blocks a call, each with packing that costs more than the block. So a helper enters a
// stream only while at least `helper_min_left` of its blocks are still to be handed out; once it
// holds the stream's K/V it takes that stream's blocks as the owner does.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

namespace flashvision::detail::cpu {

/// Which query block of a stream its `index`-th one in the order of StreamBlocks is: the last
/// first. The last block costs most: under the causal mask it sees the most keys, and without it
/// block_span may have merged a remainder into it (sd15-self-16's 256 rows are 4 x 48 + 64). The
/// blocks a stream hands out last are the ones left when threads run out of their own work, so
/// with the longest first, a call ends on short tasks and threads wait less for the last one.
constexpr int64_t query_block_at(int64_t index, int64_t q_blocks) { return q_blocks - 1 - index; }

/// The `blocks` blocks of each of `streams` streams, each handed out once. A thread enters a
/// stream it does not own only while at least helper_min_left (>= 1) of its blocks are left.
class StreamBlocks {
 public:
  StreamBlocks(int64_t streams, int64_t blocks, int64_t helper_min_left = 1)
      : streams_(streams),
        blocks_(blocks),
        helper_min_left_(helper_min_left < 1 ? 1 : helper_min_left),
        taken_(new Counter[streams]()) {}

  /// One thread's order of visiting the streams: its own range, then the others backwards.
  class Walk {
   public:
    Walk(StreamBlocks& queue, int thread, int threads)
        : queue_(queue),
          first_(queue.streams_ * thread / threads),
          owned_(queue.streams_ * (thread + 1) / threads - first_) {}

    /// The next (stream, block) to run, or false when none is left that this thread may take.
    bool next(int64_t& stream, int64_t& block) {
      for (; visited_ < queue_.streams_; ++visited_, entered_ = false) {
        const int64_t s = stream_at(visited_);
        std::atomic<int64_t>& taken = queue_.taken_[s].value;
        // A plain load first: a finished stream costs no read-modify-write on a shared line.
        int64_t b = taken.load(std::memory_order_relaxed);
        if (b >= queue_.blocks_) continue;
        if (visited_ < owned_ || entered_) {
          b = taken.fetch_add(1, std::memory_order_relaxed);
          if (b >= queue_.blocks_) continue;
        } else if (!enter(taken, b)) {
          continue;
        }
        entered_ = visited_ >= owned_;
        stream = s;
        block = b;
        return true;
      }
      return false;
    }

   private:
    /// Takes a block of a stream this thread neither owns nor has entered yet, if at least
    /// helper_min_left blocks are left: b holds the counter's value last seen, and the block
    /// taken on success (a lost race rereads it).
    bool enter(std::atomic<int64_t>& taken, int64_t& b) {
      while (b + queue_.helper_min_left_ <= queue_.blocks_) {
        if (taken.compare_exchange_weak(b, b + 1, std::memory_order_relaxed)) return true;
      }
      return false;
    }

    /// The k-th stream of this walk: first_ .. first_ + owned_ - 1, then first_ - 1, first_ - 2,
    /// ... wrapping around, so a helper starts where the owner of those streams will arrive last.
    int64_t stream_at(int64_t k) const {
      const int64_t n = queue_.streams_;
      if (k < owned_) return first_ + k;
      return ((first_ - (k - owned_ + 1)) % n + n) % n;
    }

    StreamBlocks& queue_;
    int64_t first_;
    int64_t owned_;
    int64_t visited_ = 0;
    bool entered_ = false;  // took a block of the stream at visited_ (not one of its own)
  };

 private:
  /// A stream's count on a cache line of its own: each owner counts its streams' blocks while
  /// its neighbours count theirs (sd15-self-16: 16 threads, 16 streams, 8 counters per line).
  struct alignas(64) Counter {
    std::atomic<int64_t> value{0};
  };

  int64_t streams_;
  int64_t blocks_;
  int64_t helper_min_left_;
  std::unique_ptr<Counter[]> taken_;  // blocks handed out per stream
};

}  // namespace flashvision::detail::cpu
