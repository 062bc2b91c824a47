// Fuzzes the dataset readers of src/llmbench/workload (ShareGPT JSON, MT-Bench and custom JSONL,
// the text-corpus check, the trace readers): any file content gives samples or an `Exception`
// naming the problem, never a crash.
#include "llmbench/core/error.hpp"
#include "llmbench/workload/detail/loaders.hpp"
#include "llmbench/workload/trace.hpp"

#include "fuzz_input.hpp"
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  llmbench::fuzz::Input input(data, size);
  const unsigned char mode = input.take_byte();
  const std::string text(input.rest());
  namespace detail = llmbench::workload::detail;
  try {
    switch (mode % 8) {
      case 0:
        static_cast<void>(detail::parse_sharegpt(text, "fuzz.json", -1));
        break;
      case 1:
        static_cast<void>(detail::parse_mtbench(text, "fuzz.jsonl", -1));
        break;
      case 2:
        static_cast<void>(detail::parse_custom(text, "fuzz.jsonl", -1));
        break;
      case 4:
        static_cast<void>(llmbench::workload::parse_trace(text, "fuzz.csv",
                                                          llmbench::workload::TraceFormat::Azure));
        break;
      case 5:
        static_cast<void>(llmbench::workload::parse_trace(
            text, "fuzz.jsonl", llmbench::workload::TraceFormat::Mooncake));
        break;
      case 6:
        static_cast<void>(llmbench::workload::parse_trace(
            text, "fuzz.csv", llmbench::workload::detect_trace_format(text, "fuzz.csv")));
        break;
      default:
        detail::check_text(text, "fuzz.txt");
        break;
    }
  } catch (const llmbench::Exception&) {
    return 0;  // bad input, reported with its file and position
  }
  return 0;
}
