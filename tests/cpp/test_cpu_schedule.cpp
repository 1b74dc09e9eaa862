// The CPU forward's task queue (src/cpu/schedule.h): every (stream, block) is handed out exactly
// once, a thread's own streams come first, and a thread enters another's stream only while
// helper_min_left of its blocks are left (after which it takes that stream's blocks freely).
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cpu/schedule.h"

namespace flashvision::detail::cpu {
namespace {

using Task = std::pair<int64_t, int64_t>;  // (stream, block)

std::vector<Task> drain(StreamBlocks::Walk& walk) {
  std::vector<Task> tasks;
  for (int64_t stream = -1, block = -1; walk.next(stream, block);) tasks.emplace_back(stream, block);
  return tasks;
}

TEST(CpuSchedule, OneThreadTakesEveryBlockInOrder) {
  StreamBlocks queue(3, 4, 2);
  StreamBlocks::Walk walk(queue, 0, 1);
  std::vector<Task> expected;
  for (int64_t s = 0; s < 3; ++s) {
    for (int64_t b = 0; b < 4; ++b) expected.emplace_back(s, b);
  }
  EXPECT_EQ(drain(walk), expected);
}

TEST(CpuSchedule, HelperLeavesTheOwnersLastBlocks) {
  // Thread 0 owns stream 0, thread 1 stream 1. Thread 0 has taken 3 of its 4 blocks when thread 1
  // runs out of its own: with helper_min_left 2, the one block left stays thread 0's.
  StreamBlocks queue(2, 4, 2);
  StreamBlocks::Walk owner(queue, 0, 2), helper(queue, 1, 2);
  int64_t stream = -1, block = -1;
  for (int64_t b = 0; b < 3; ++b) {
    ASSERT_TRUE(owner.next(stream, block));
    EXPECT_EQ(stream, 0);
    EXPECT_EQ(block, b);
  }
  const std::vector<Task> own = {{1, 0}, {1, 1}, {1, 2}, {1, 3}};
  EXPECT_EQ(drain(helper), own);
  ASSERT_TRUE(owner.next(stream, block));
  EXPECT_EQ(stream, 0);
  EXPECT_EQ(block, 3);
  EXPECT_FALSE(owner.next(stream, block));
}

TEST(CpuSchedule, HelperWithoutThresholdTakesTheLastBlock) {
  StreamBlocks queue(2, 4, 1);
  StreamBlocks::Walk owner(queue, 0, 2), helper(queue, 1, 2);
  int64_t stream = -1, block = -1;
  for (int64_t b = 0; b < 3; ++b) ASSERT_TRUE(owner.next(stream, block));
  const std::vector<Task> expected = {{1, 0}, {1, 1}, {1, 2}, {1, 3}, {0, 3}};
  EXPECT_EQ(drain(helper), expected);
  EXPECT_FALSE(owner.next(stream, block));
}

TEST(CpuSchedule, HelperThatEnteredAStreamStaysToItsEnd) {
  // Thread 1 finds stream 0 untouched (4 left >= 3) and enters it; from then on it takes the
  // stream's blocks as its owner would, down to the last one.
  StreamBlocks queue(2, 4, 3);
  StreamBlocks::Walk owner(queue, 0, 2), helper(queue, 1, 2);
  const std::vector<Task> expected = {{1, 0}, {1, 1}, {1, 2}, {1, 3},
                                      {0, 0}, {0, 1}, {0, 2}, {0, 3}};
  EXPECT_EQ(drain(helper), expected);
  int64_t stream = -1, block = -1;
  EXPECT_FALSE(owner.next(stream, block));
}

TEST(CpuSchedule, ThreadsWithoutStreamsHelpUntilTheThreshold) {
  // One stream, five threads: thread 4 owns it (streams * t / threads splits the streams), threads
  // 0..3 own nothing and may enter it while at least 2 of its blocks are left.
  StreamBlocks queue(1, 6, 2);
  std::vector<StreamBlocks::Walk> walks;
  for (int t = 0; t < 5; ++t) walks.emplace_back(queue, t, 5);
  StreamBlocks::Walk& owner = walks[4];
  int64_t stream = -1, block = -1;
  ASSERT_TRUE(owner.next(stream, block));
  EXPECT_EQ(block, 0);
  for (int t = 0; t < 3; ++t) {
    ASSERT_TRUE(walks[t].next(stream, block));
    EXPECT_EQ(stream, 0);
    EXPECT_EQ(block, t + 1);
  }
  ASSERT_TRUE(walks[0].next(stream, block));  // entered: takes block 4 with 2 left
  EXPECT_EQ(block, 4);
  EXPECT_FALSE(walks[3].next(stream, block));  // not entered, 1 left
  ASSERT_TRUE(owner.next(stream, block));
  EXPECT_EQ(block, 5);
  for (auto& w : walks) EXPECT_FALSE(w.next(stream, block));
}

TEST(CpuSchedule, ConcurrentThreadsTakeEachBlockOnce) {
  // Many short rounds, so that helpers often lose the race for a block between reading a
  // stream's counter and taking it (a block returned other than the one taken ran twice while
  // another never ran: the output rows it owns were left unwritten).
  constexpr int kThreads = 8;
  constexpr int64_t kStreams = 3, kBlocks = 64;
  for (const int64_t min_left : {1, 2, 3}) {
    SCOPED_TRACE("helper_min_left=" + std::to_string(min_left));
    for (int round = 0; round < 200; ++round) {
      StreamBlocks queue(kStreams, kBlocks, min_left);
      std::vector<std::atomic<int>> seen(kStreams * kBlocks);
      std::atomic<int> ready{0};
      std::vector<std::thread> threads;
      for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
          StreamBlocks::Walk walk(queue, t, kThreads);
          ready.fetch_add(1);
          while (ready.load() < kThreads) {
          }
          for (int64_t stream = 0, block = 0; walk.next(stream, block);) {
            if (stream >= 0 && stream < kStreams && block >= 0 && block < kBlocks) {
              seen[stream * kBlocks + block].fetch_add(1);
            }
          }
        });
      }
      for (auto& th : threads) th.join();
      int wrong = 0;
      for (int64_t i = 0; i < kStreams * kBlocks; ++i) wrong += seen[i].load() != 1;
      ASSERT_EQ(wrong, 0) << "round " << round << ": tasks not handed out exactly once";
    }
  }
}

}  // namespace
}  // namespace flashvision::detail::cpu
