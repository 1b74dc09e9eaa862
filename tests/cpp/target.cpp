// The CPU target: plain host memory.
#include "target.h"

#include <cstring>
#include <vector>

namespace flashvision::testing {
namespace {

class HostBuffer final : public TargetBuffer {
 public:
  explicit HostBuffer(std::size_t bytes) : bytes_(bytes) {}
  void* data() override { return bytes_.data(); }
  void upload(const void* host, std::size_t bytes) override {
    std::memcpy(bytes_.data(), host, bytes);
  }
  void download(void* host, std::size_t bytes) override { std::memcpy(host, bytes_.data(), bytes); }

 private:
  std::vector<std::byte> bytes_;
};

}  // namespace

Target cpu_target() {
  Target target;
  target.name = "cpu";
  target.device = Device::cpu;
  target.backend = Backend::cpu;
  target.allocate = [](std::size_t bytes) { return std::make_unique<HostBuffer>(bytes); };
  return target;
}

}  // namespace flashvision::testing
