// Fuzzes the SSE parser (src/llmbench/sse/parser.hpp): any bytes, split into pieces anywhere, must
// give the same events as the whole stream at once (the parser's "split anywhere" promise), and
// never crash or read out of bounds.
#include "llmbench/sse/parser.hpp"

#include "fuzz_input.hpp"
#include <cstdlib>
#include <string>
#include <vector>

namespace {

std::vector<llmbench::sse::Event> parse(std::string_view stream, std::size_t piece) {
  llmbench::sse::Parser parser;
  std::vector<llmbench::sse::Event> events;
  for (std::size_t at = 0; at < stream.size(); at += piece) {
    parser.feed(stream.substr(at, piece),
                [&](const llmbench::sse::Event& event) { events.push_back(event); });
  }
  return events;
}

bool same(const llmbench::sse::Event& a, const llmbench::sse::Event& b) {
  return a.type == b.type && a.data == b.data && a.last_event_id == b.last_event_id &&
         a.retry_ms == b.retry_ms;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  llmbench::fuzz::Input input(data, size);
  const std::size_t piece = 1 + input.take_byte() % 17;
  const std::string_view stream = input.rest();
  const auto whole = parse(stream, stream.size() + 1);
  const auto split = parse(stream, piece);
  if (whole.size() != split.size()) {
    std::abort();
  }
  for (std::size_t i = 0; i < whole.size(); ++i) {
    if (!same(whole[i], split[i])) {
      std::abort();
    }
  }
  return 0;
}
