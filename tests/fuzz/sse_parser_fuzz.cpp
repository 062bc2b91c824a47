// Fuzzes the SSE parser (src/llmbench/sse/parser.hpp): any bytes, split into pieces anywhere, must
// give the same events and unknown fields, in the same order, as the whole stream at once (the
// parser's "split anywhere" promise), and never crash or read out of bounds.
#include "llmbench/sse/parser.hpp"

#include "fuzz_input.hpp"
#include <cstdlib>
#include <string>
#include <vector>

namespace {

// What the parser reported, in order: one string per event or unknown field.
std::vector<std::string> parse(std::string_view stream, std::size_t piece) {
  llmbench::sse::Parser parser;
  std::vector<std::string> out;
  for (std::size_t at = 0; at < stream.size(); at += piece) {
    parser.feed(
        stream.substr(at, piece),
        [&](const llmbench::sse::Event& e) {
          out.push_back("event\n" + e.type + '\n' + e.data + '\n' + e.last_event_id + '\n' +
                        std::to_string(e.retry_ms));
        },
        [&](const llmbench::sse::UnknownField& f) {
          out.push_back("field\n" + std::string(f.name) + '\n' + std::string(f.value));
        });
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  llmbench::fuzz::Input input(data, size);
  const std::size_t piece = 1 + input.take_byte() % 17;
  const std::string_view stream = input.rest();
  if (parse(stream, stream.size() + 1) != parse(stream, piece)) {
    std::abort();
  }
  return 0;
}
