// The sm90 forward's diagnostic timelines (fwd_timeline_layout.h), in builds configured with
// FLASHVISION_SM90_TIMELINES=ON (elsewhere the test skips itself): a forward run with the
// environment variable set still matches the float64 reference, and the file it writes holds the
// header and, for the first CTAs, a producer timeline of Q loads and consumer timelines of whole
// units, each in the order of its clock.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "attention_check.h"
#include "cuda/sm90/fwd_timeline_layout.h"
#include "cuda_target.h"
#include "scoped_env.h"

namespace flashvision::testing {
namespace {

namespace sm90 = flashvision::detail::sm90;

class GpuSm90Timelines : public GpuSm90Test {};

std::vector<uint64_t> read_records(const std::string& path, sm90::TimelineFileHeader& header) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) return {};
  std::vector<uint64_t> records;
  if (std::fread(&header, sizeof(header), 1, file) == 1) {
    records.resize(static_cast<size_t>(header.ctas) * header.roles * header.events);
    records.resize(std::fread(records.data(), sizeof(uint64_t), records.size(), file));
  }
  std::fclose(file);
  return records;
}

TEST_P(GpuSm90Timelines, RecordedForwardMatchesAndItsTimelinesAreWhole) {
  if (!sm90::kTimelinesCompiled) GTEST_SKIP() << "a build without FLASHVISION_SM90_TIMELINES";
  const std::string path = ::testing::TempDir() + "flashvision_timelines.bin";
  std::remove(path.c_str());
  {
    ScopedEnv env("FLASHVISION_SM90_TIMELINES", path.c_str());
    // 8 heads x 8 query tiles of 1000 keys: every recorded CTA has several units of several blocks.
    AttentionCase c = dense_case(dtype(), 1024, 1000, 128);
    c.heads = 8;
    check_forward(cuda_target(CudaKernel::sm90), c);
  }
  sm90::TimelineFileHeader header{};
  const std::vector<uint64_t> records = read_records(path, header);
  ASSERT_EQ(header.ctas, sm90::kTimelineCtas);
  ASSERT_EQ(header.roles, sm90::kTimelineRoles);
  ASSERT_EQ(header.events, sm90::kTimelineEvents);
  ASSERT_EQ(records.size(), static_cast<size_t>(header.ctas) * header.roles * header.events);
  EXPECT_GT(header.units, header.ctas);
  const auto event_of = [](uint64_t r) { return static_cast<uint32_t>(r & 0xFF); };
  for (int cta = 0; cta < header.ctas; ++cta) {
    int consumers_with_units = 0;
    for (int role = 0; role < header.roles; ++role) {
      const uint64_t* timeline =
          records.data() + (static_cast<size_t>(cta) * header.roles + role) * header.events;
      int count = 0, starts = 0, finishes = 0, q_issued = 0;
      for (; count < header.events && timeline[count] != 0; ++count) {
        if (count > 0) {
          EXPECT_GE(timeline[count] >> 8, timeline[count - 1] >> 8);
        }
        const uint32_t e = event_of(timeline[count]);
        starts += e == static_cast<uint32_t>(sm90::TimelineEvent::kUnitStart);
        finishes += e == static_cast<uint32_t>(sm90::TimelineEvent::kFinishDone);
        q_issued += e == static_cast<uint32_t>(sm90::TimelineEvent::kProducerQIssued);
      }
      if (role == 0) {
        EXPECT_GT(q_issued, 0) << "CTA " << cta;
      } else if (starts > 0) {
        ++consumers_with_units;
        EXPECT_EQ(starts, finishes) << "CTA " << cta << " consumer " << role - 1;
      }
    }
    EXPECT_EQ(consumers_with_units, 2) << "CTA " << cta;
  }
  std::remove(path.c_str());
}

INSTANTIATE_TEST_SUITE_P(Cuda, GpuSm90Timelines, ::testing::Values(DType::bf16, DType::f16),
                         dtype_name);

}  // namespace
}  // namespace flashvision::testing
