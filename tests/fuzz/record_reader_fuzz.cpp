// Fuzzes the per-request JSONL reader (src/llmbench/metrics/record_io.hpp): any line must parse
// or fail with an error value, and a line it accepts must survive a write-read round trip
// unchanged (written again, it is the same line).
#include "llmbench/metrics/record_io.hpp"

#include "fuzz_input.hpp"
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const llmbench::fuzz::Input input(data, size);
  const auto record = llmbench::metrics::record_from_json_line(input.rest());
  if (!record) {
    return 0;
  }
  const std::string line = llmbench::metrics::record_to_json_line(*record);
  const auto again = llmbench::metrics::record_from_json_line(line);
  if (!again || llmbench::metrics::record_to_json_line(*again) != line) {
    std::abort();
  }
  return 0;
}
