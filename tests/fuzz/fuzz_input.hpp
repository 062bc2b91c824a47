#pragma once
/// @file
/// What the libFuzzer targets share: the entry point's signature and a reader that takes option
/// bits off the front of the fuzzer's input, so one input both picks a mode and carries data.

#include <cstddef>
#include <cstdint>
#include <string_view>

/// libFuzzer's entry point (https://llvm.org/docs/LibFuzzer.html, "Fuzz Target"): called once per
/// input; must not keep state between calls that changes what later calls do.
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace llmbench::fuzz {

/// The fuzzer's bytes, read from the front.
class Input {
 public:
  Input(const std::uint8_t* data, std::size_t size)
      : rest_(reinterpret_cast<const char*>(data), size) {}

  /// The next byte (0 once the input is used up).
  unsigned char take_byte() noexcept {
    if (rest_.empty()) {
      return 0;
    }
    const auto b = static_cast<unsigned char>(rest_.front());
    rest_.remove_prefix(1);
    return b;
  }
  /// What is left.
  [[nodiscard]] std::string_view rest() const noexcept { return rest_; }

 private:
  std::string_view rest_;
};

}  // namespace llmbench::fuzz
